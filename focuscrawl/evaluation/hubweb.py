"""A linked web built from an archive whose pages do not link to each other (P0's web).

The shared comment archive (``comments-dev``) holds ~950 pages of ~930 sites: none
links to another, so no crawl strategy can differ on it. This builder makes a web
out of it, deterministically (``seed``), and marks everything it adds:

* every archived page is kept, with a block of generated links appended before
  ``</body>``: ``<div data-focuscrawl="generated">`` with ``out_links`` links to
  other archived pages and one link to a hub. The record carries the WARC header
  ``WARC-Focuscrawl-Generated: appended-links`` (the rest of the body is
  byte-identical; Content-Length is recomputed);
* ``hubs`` generated hub pages ``http://hubs.focuscrawl.example/hub/N.html`` (each
  lists ``hub_size`` random pages and the next two hubs) and a portal
  ``http://hubs.focuscrawl.example/`` listing every hub, with the WARC header
  ``WARC-Focuscrawl-Generated: hub`` and the label ``{"generated": true}``.

Each generated link of a page goes, with probability ``locality``, to a page of
the page's own class (by ``label_key``, e.g. has_comments true / false), else to
any page. ``locality`` is the *topical locality* every focused crawler relies on
(relevant pages link to relevant pages); here it is a parameter of the construction,
taken from the labels, not a property of the Web measured anywhere: a focused
strategy can only gain as much as this value lets it. ``locality = 0`` gives a
web whose links ignore relevance.

    python -m focuscrawl.evaluation.hubweb ../shared/testweb/comments-dev.warc.gz OUT.warc.gz
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.replay.archive import iter_responses, load_labels

HUB_HOST = "http://hubs.focuscrawl.example"
MARK = "WARC-Focuscrawl-Generated"
_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)


def _record_id(url: str) -> str:
    digest = hashlib.md5(url.encode(), usedforsecurity=False).hexdigest()
    return f"<urn:uuid:{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}>"


def _write(writer: WARCWriter, url: str, headers: Sequence[tuple[str, str]], body: bytes, mark: str) -> None:
    kept = [(k, v) for k, v in headers if k.lower() not in ("content-length", "transfer-encoding")]
    http = StatusAndHeaders("200 OK", [*kept, ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
    record = writer.create_warc_record(
        url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http,
        warc_headers_dict={"WARC-Date": "2020-01-01T00:00:00Z", "WARC-Record-ID": _record_id(url), MARK: mark},
    )  # fmt: skip
    writer.write_record(record)


def link_block(urls: Sequence[str]) -> bytes:
    """The appended links (ASCII only, so any ASCII-compatible page charset is kept).

    >>> link_block(["http://a.org/x"])
    b'<div data-focuscrawl="generated"><a href="http://a.org/x">related page 1</a></div>'
    """
    links = "".join(f'<a href="{u}">related page {i}</a>' for i, u in enumerate(urls, 1))
    return f'<div data-focuscrawl="generated">{links}</div>'.encode("ascii")


def append_links(body: bytes, block: bytes) -> bytes:
    """``block`` inserted before the last ``</body>`` (or at the end).

    >>> append_links(b"<html><body>x</body></html>", b"<b>L</b>")
    b'<html><body>x<b>L</b></body></html>'
    """
    ends = list(_BODY_END.finditer(body))
    if not ends:
        return body + block
    at = ends[-1].start()
    return body[:at] + block + body[at:]


def choose_links(
    urls: Sequence[str], classes: Mapping[str, str], n: int, locality: float, rng: random.Random
) -> dict[str, list[str]]:
    """``n`` distinct out-links per URL (never itself): each from the URL's own class with
    probability ``locality``, else from all URLs.

    >>> links = choose_links(["a", "b", "c", "d"], {"a": "x", "b": "x", "c": "y", "d": "y"}, 1, 1.0,
    ...                      random.Random(0))
    >>> links
    {'a': ['b'], 'b': ['a'], 'c': ['d'], 'd': ['c']}
    """
    by_class: dict[str, list[str]] = {}
    for u in urls:
        by_class.setdefault(classes.get(u, "?"), []).append(u)
    out: dict[str, list[str]] = {}
    for u in urls:
        same = [v for v in by_class[classes.get(u, "?")] if v != u]
        pool_all = [v for v in urls if v != u]
        chosen: list[str] = []
        for _ in range(200 * n):  # bounded: small classes may not hold n others
            if len(chosen) >= min(n, len(pool_all)):
                break
            pool = same if same and rng.random() < locality else pool_all
            v = rng.choice(pool)
            if v not in chosen:
                chosen.append(v)
        out[u] = chosen
    return out


def build_hub_web(
    archive: Path, labels_path: Path, out: Path, *, label_key: str = "has_comments",
    out_links: int = 5, hubs: int = 40, hub_size: int = 25, locality: float = 0.7, seed: int = 0,
) -> tuple[Path, Path]:  # fmt: skip
    """Write the web to ``out`` (``.warc.gz``) and its labels beside it; returns both paths."""
    labels = load_labels(labels_path)
    rng = random.Random(seed)
    records = [r for r in iter_responses(archive) if r.status == 200 and "html" in r.content_type.lower()]
    urls = sorted({r.url for r in records})
    classes = {u: json.dumps(labels.get(u, {}).get(label_key)) for u in urls}
    links = choose_links(urls, classes, out_links, locality, rng)
    hub_urls = [f"{HUB_HOST}/hub/{i}.html" for i in range(hubs)]
    hub_of = {u: rng.choice(hub_urls) for u in urls}
    out.parent.mkdir(parents=True, exist_ok=True)
    labels_out = out.with_name(out.name.removesuffix(".warc.gz") + ".labels.jsonl")
    seen: set[str] = set()
    with out.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for rec in records:
            if rec.url in seen:
                continue
            seen.add(rec.url)
            body = append_links(rec.body, link_block([*links[rec.url], hub_of[rec.url]]))
            _write(writer, rec.url, rec.headers, body, "appended-links")
        html_type = [("Content-Type", "text/html; charset=utf-8")]
        for i, hub in enumerate(hub_urls):
            listed = sorted(rng.sample(urls, min(hub_size, len(urls))))
            nxt = [hub_urls[(i + 1) % hubs], hub_urls[(i + 2) % hubs]]
            items = "".join(f'<li><a href="{u}">page</a></li>' for u in [*listed, *nxt])
            body = f"<html><body><h1>Hub {i}</h1><ul>{items}</ul></body></html>".encode()
            _write(writer, hub, html_type, body, "hub")
        items = "".join(f'<li><a href="{h}">hub {i}</a></li>' for i, h in enumerate(hub_urls))
        _write(writer, f"{HUB_HOST}/", html_type, f"<html><body><ul>{items}</ul></body></html>".encode(), "hub")
    with labels_out.open("w", encoding="utf-8") as fh:
        for u in urls:
            if u in labels:
                fh.write(json.dumps({**labels[u], "url": u}, ensure_ascii=False) + "\n")
        for h in [*hub_urls, f"{HUB_HOST}/"]:
            fh.write(json.dumps({"url": h, "generated": True, label_key: False}) + "\n")
    return out, labels_out


def cached_hub_web(params: Mapping[str, Any], base: Path, out_dir: Path) -> tuple[Path, Path]:
    """The web of an experiment's ``[web]`` table, rebuilt only when its parameters change."""
    cfg = dict(params)
    stamp = out_dir / "web.json"
    out = out_dir / "hubweb.warc.gz"
    labels_out = out_dir / "hubweb.labels.jsonl"
    if stamp.is_file() and json.loads(stamp.read_text()) == cfg and out.is_file():
        return out, labels_out
    options = {k: v for k, v in cfg.items() if k not in ("builder", "source", "labels")}
    build_hub_web((base / cfg["source"]).resolve(), (base / cfg["labels"]).resolve(), out, **options)
    stamp.write_text(json.dumps(cfg))
    return out, labels_out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m focuscrawl.evaluation.hubweb", description=__doc__.split("\n")[0])
    p.add_argument("archive", type=Path)
    p.add_argument("out", type=Path, help="output .warc.gz (labels written beside it)")
    p.add_argument("--labels", type=Path, help="default: the archive's .labels.jsonl")
    p.add_argument("--label-key", default="has_comments")
    p.add_argument("--out-links", type=int, default=5)
    p.add_argument("--hubs", type=int, default=40)
    p.add_argument("--hub-size", type=int, default=25)
    p.add_argument("--locality", type=float, default=0.7)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    labels = a.labels or a.archive.with_name(a.archive.name.removesuffix(".warc.gz") + ".labels.jsonl")
    web, lab = build_hub_web(
        a.archive, labels, a.out, label_key=a.label_key, out_links=a.out_links, hubs=a.hubs,
        hub_size=a.hub_size, locality=a.locality, seed=a.seed,
    )  # fmt: skip
    print(f"{web}\n{lab}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
