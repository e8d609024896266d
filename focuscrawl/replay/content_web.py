"""A generated test web of content as the Web serves it (issue 37 item 4), as a WARC
archive with labels whose ground truth is known.

Two hosts: ``www.content.example`` and its mirror ``mirror.content.example``. The
home page links to ten section hubs; each hub links to its articles. An article is
about the topic (kittens, ~30 %) or not, and is one of:

* ``static``: its text and links in the HTML;
* ``script``: a shell (``<div id="root">`` or ``id="app"``) whose text and links a
  script (``/static/a<i>.js``, served too) writes; a third of them use a plain
  ``<div id="content">`` and keep a "home" link in the HTML, as real sites do (a
  shell the ``auto`` rule cannot tell from a short page);
* ``short``: a short static page with an analytics script and links (it needs no
  browser, though it looks a little like a shell).

Every article links to two "deep" pages of its own (in its script for a script-built
one: reachable only after rendering). A tenth of the articles have copies: an exact
mirror on the mirror host, a printer-friendly copy (``/print/``, no navigation,
"Printer-friendly version" above the text) and two session-ID variants
(``?sid=...``) linked from other hubs. Twenty reports are PDFs, each linking to a
page only the PDF links to.

Labels (``content.labels.jsonl``): ``relevant``, ``kind`` (static, script, short,
deep, pdf, from-pdf, copy, hub), ``needs_render`` and ``copy_of`` (the original's URL
for a copy). Rebuilding gives identical bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from warcio.warcwriter import WARCWriter

from focuscrawl.replay.pdf_build import pdf_document
from focuscrawl.replay.sample import _write, labels_path_for

HOST = "http://www.content.example"
MIRROR = "http://mirror.content.example"
SEEDS = (f"{HOST}/",)
_DATE = "Mon, 01 Jun 2020 00:00:00 GMT"
_TOPIC = ("kitten", "kittens", "cat", "litter", "feline", "purring", "whiskers", "catnip", "veterinary", "adopt")
_OTHER = (
    "market", "engine", "harbour", "election", "recipe", "football", "weather", "tax", "railway", "museum",
    "software", "garden", "concert", "bridge", "mountain", "river", "school", "energy", "carbon", "budget",
)  # fmt: skip
_FILLER = (
    "the", "a", "of", "and", "to", "in", "is", "for", "with", "on", "this", "that", "new", "from", "report",
    "people", "year", "city", "first", "said", "many", "also", "after", "about", "local", "team", "plan",
)  # fmt: skip
ARTICLES = 300
SECTIONS = 10
REPORTS = 20


def _text(rng: random.Random, relevant: bool, words: int) -> str:
    topical = _TOPIC if relevant else _OTHER
    return " ".join(rng.choice(topical) if rng.random() < 0.25 else rng.choice(_FILLER) for _ in range(words))


def _html(title: str, body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>".encode()


def _links(urls: list[str]) -> str:
    return " ".join(f'<a href="{u}">{u.rsplit("/", 1)[-1] or "home"}</a>' for u in urls)


def build_content_web(path: Path, articles: int = ARTICLES, reports: int = REPORTS) -> Path:
    """Write the web to ``path`` (``.warc.gz``, or a directory for ``content.warc.gz``)
    and its labels next to it; returns the archive's path."""
    path = Path(path)
    if path.is_dir():
        path = path / "content.warc.gz"
    rng = random.Random(37)
    records: list[tuple[str, str, bytes]] = []  # url, content type, body
    labels: list[dict[str, object]] = []

    def add(url: str, body: bytes, kind: str, relevant: bool = False, *, content_type: str = "text/html",
            needs_render: bool = False, copy_of: str | None = None, label: bool = True) -> None:  # fmt: skip
        records.append((url, content_type, body))
        if label:
            labels.append({"url": url, "kind": kind, "relevant": relevant, "needs_render": needs_render,
                           "copy_of": copy_of})  # fmt: skip

    hubs: list[list[str]] = [[] for _ in range(SECTIONS)]
    for i in range(articles):
        relevant = rng.random() < 0.3
        roll = rng.random()
        kind = "script" if roll < 0.3 else "short" if roll < 0.4 else "static"
        url = f"{HOST}/a{i}.html"
        hubs[i % SECTIONS].append(url)
        deep = [f"{HOST}/deep/a{i}-{j}.html" for j in range(2)]
        for d in deep:
            add(d, _html("deep", f"<p>{_text(rng, relevant, 120)}</p>"), "deep", relevant)
        text = _text(rng, relevant, 40 if kind == "short" else 250)
        title = f"article {i}"
        if kind == "script":
            plain = rng.random() < 1 / 3
            root = "content" if plain else rng.choice(("root", "app"))
            nav = f'<a href="{HOST}/">home</a>' if plain else ""
            built = f"<p>{text}</p>{_links(deep)}"
            js = f"document.getElementById({json.dumps(root)}).innerHTML = {json.dumps(built)};"
            add(f"{HOST}/static/a{i}.js", js.encode(), "script-file", content_type="application/javascript", label=False)
            body = _html(title, f'{nav}<div id="{root}"></div><script src="/static/a{i}.js"></script>')
            add(url, body, "script", relevant, needs_render=True)
        else:
            analytics = "<script>window.stats = (window.stats || 0) + 1;</script>"
            add(url, _html(title, f"<p>{text}</p>{_links(deep)}{analytics if kind == 'short' else ''}"), kind, relevant)
        if i % 10 == 3 and kind != "script":  # copies of a tenth of the static articles
            add(f"{MIRROR}/a{i}.html", _html(title, f"<p>{text}</p>{_links(deep)}"), "copy", relevant, copy_of=url)
            printed = _html(title, f"<p>Printer-friendly version</p><p>{text}</p>")
            add(f"{HOST}/print/a{i}.html", printed, "copy", relevant, copy_of=url)
            hubs[(i + 1) % SECTIONS] += [f"{MIRROR}/a{i}.html", f"{HOST}/print/a{i}.html"]
            for sid in ("8f2a", "c41d"):
                copy = f"{HOST}/s{i}.html?sid={sid}"
                add(copy, _html(title, f"<p>{text}</p>{_links(deep)}"), "copy", relevant,
                    copy_of=url if sid == "8f2a" else f"{HOST}/s{i}.html?sid=8f2a")  # fmt: skip
                hubs[(i + 2 + len(sid)) % SECTIONS].append(copy)
    for r in range(reports):
        relevant = r % 2 == 0
        url, target = f"{HOST}/reports/r{r}.pdf", f"{HOST}/from-pdf/r{r}.html"
        document = pdf_document([_text(rng, relevant, 300), _text(rng, relevant, 200)], title=f"report {r}",
                                links=[[target]])  # fmt: skip
        add(url, document, "pdf", relevant, content_type="application/pdf")
        add(target, _html("linked from a report", f"<p>{_text(rng, relevant, 150)}</p>"), "from-pdf", relevant)
        hubs[r % SECTIONS].append(url)
    for s, members in enumerate(hubs):
        add(f"{HOST}/section{s}.html", _html(f"section {s}", f"<p>section {s}</p>{_links(members)}"), "hub")
    add(f"{HOST}/", _html("home", _links([f"{HOST}/section{s}.html" for s in range(SECTIONS)])), "hub")
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for url, content_type, body in records:
            _write(writer, url, "200 OK", [("Date", _DATE), ("Content-Type", content_type)], body)
    labels_path_for(path).write_text("".join(json.dumps(label) + "\n" for label in labels), encoding="utf-8")
    return path
