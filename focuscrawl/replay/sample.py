"""A small generated test web about cats, as a WARC archive with labels.

Three hosts, 57 records: a news portal whose home page leads through eight
sections to off-topic articles (and, from its "Pets" section, to cat pages),
a site about cats (one page in EUC-KR, one in Shift_JIS) and a shop whose
``robots.txt`` disallows ``/private/``. The cat pages are linked with anchor
texts about cats and sit deep in breadth-first order, so a crawl focused on
cats finds them sooner than BFS. Used by the demo when ``../shared/testweb``
is absent, and by tests. Rebuilding gives identical bytes.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.exceptions import ArchiveError

NEWS = "http://www.daily-news.example"
CATS = "http://cats.example"
SHOP = "http://shop.example"
SAMPLE_SEEDS: tuple[str, ...] = (f"{NEWS}/",)
_DATE = "Wed, 01 Jan 2020 00:00:00 GMT"
_WARC_DATE = "2020-01-01T00:00:00Z"

_FILLER = (
    "the a of and to in is that for on with as it was by at from this are be has "
    "their which also more most about when many some these other people often can"
)
_TOPICS: dict[str, str] = {
    "cats": "cat cats kitten kittens feline felines whiskers purr purring meow tabby "
    "siamese persian claws catnip litter paws fur grooming mouser",
    "sports": "football match goal team league score striker coach season stadium "
    "referee tournament players championship",
    "cars": "car engine sedan horsepower gearbox fuel mileage brakes tyres dealer "
    "electric hybrid motorway driver",
    "cooking": "recipe oven flour garlic onion simmer bake sauce pasta butter "
    "kitchen spices dough roast",
    "travel": "flight hotel beach passport luggage airport itinerary island "
    "museum tour ferry hostel",
    "music": "guitar concert album band chorus melody drummer festival orchestra "
    "vinyl singer rhythm",
    "weather": "rain forecast storm wind temperature sunshine cloud frost humidity "
    "thunder drizzle pressure",
    "gardening": "tomato soil compost seedlings pruning hedge roses watering "
    "greenhouse weeds mulch bulbs",
}
_SECTIONS = ("sports", "cars", "cooking", "travel", "music", "weather", "gardening")
_CAT_PAGES = (
    "breeds",
    "siamese",
    "persian",
    "maine-coon",
    "kittens",
    "feeding",
    "grooming",
    "health",
    "behaviour",
    "purring",
    "whiskers",
    "history",
    "adoption",
    "toys",
)
_KOREAN = (
    "고양이는 작은 육식 포유류입니다. 고양이는 사람과 함께 오랫동안 살아 왔습니다. "
    "새끼 고양이는 많이 자고 많이 놉니다. 고양이의 수염은 아주 예민합니다."
)
_JAPANESE = (
    "猫は小型の肉食の哺乳類です。猫は人と長い間一緒に暮らしてきました。"
    "子猫はよく眠り、よく遊びます。猫のひげはとても敏感です。"
)


@dataclass
class _Page:
    url: str
    title: str
    topic: str
    links: list[tuple[str, str]] = field(default_factory=list)
    relevant: bool = False
    lang: str = "en"


def _text(rng: random.Random, topic: str, sentences: int) -> str:
    words, filler = _TOPICS[topic].split(), _FILLER.split()
    out = []
    for _ in range(sentences):
        n = rng.randint(8, 14)
        sentence = [
            rng.choice(words) if rng.random() < 0.4 else rng.choice(filler) for _ in range(n)
        ]
        out.append(" ".join(sentence).capitalize() + ".")
    return " ".join(out)


def _graph() -> list[_Page]:
    pages: list[_Page] = []
    home = _Page(f"{NEWS}/", "Daily News", "sports")
    pages.append(home)
    for section in (*_SECTIONS, "pets"):
        url = f"{NEWS}/sections/{section}.html"
        home.links.append((url, f"{section.capitalize()} news"))
        topic = section if section != "pets" else "cats"
        page = _Page(url, f"{section.capitalize()} - Daily News", topic, relevant=topic == "cats")
        page.links.append((f"{NEWS}/", "Home"))
        pages.append(page)
        if section == "pets":
            for slug, anchor in (
                ("cat-cafe", "A new cat cafe opens"),
                ("kitten-season", "Kitten season at the shelter"),
            ):
                article = _Page(f"{NEWS}/pets/{slug}.html", anchor, "cats", relevant=True)
                article.links += [(f"{CATS}/", "More about cats at cats.example"), (url, "Pets")]
                page.links.append((article.url, anchor))
                pages.append(article)
            page.links.append((f"{CATS}/", "Everything about cats and felines"))
            continue
        for number in range(1, 4):
            article = _Page(
                f"{NEWS}/{section}/story-{number}.html",
                f"{section.capitalize()} story {number}",
                section,
            )
            other = _SECTIONS[(_SECTIONS.index(section) + number) % len(_SECTIONS)]
            article.links += [
                (url, section.capitalize()),
                (f"{NEWS}/{other}/story-{number}.html", f"More {other} news"),
            ]
            page.links.append((article.url, f"{section.capitalize()} story {number}"))
            pages.append(article)
    cat_index = _Page(f"{CATS}/", "Cats: everything about felines", "cats", relevant=True)
    pages.append(cat_index)
    for number, slug in enumerate(_CAT_PAGES):
        page = _Page(
            f"{CATS}/{slug}.html", f"Cats: {slug.replace('-', ' ')}", "cats", relevant=True
        )
        cat_index.links.append((page.url, f"Cat {slug.replace('-', ' ')}"))
        for step in (1, 3):
            nxt = _CAT_PAGES[(number + step) % len(_CAT_PAGES)]
            page.links.append((f"{CATS}/{nxt}.html", f"Read about cat {nxt.replace('-', ' ')}"))
        page.links.append(
            (f"{NEWS}/{_SECTIONS[number % len(_SECTIONS)]}/story-1.html", "In the news today")
        )
        pages.append(page)
    for lang, slug, title in (("ko", "goyangi", "고양이"), ("ja", "neko", "猫")):
        page = _Page(f"{CATS}/{lang}/{slug}.html", title, "cats", relevant=True, lang=lang)
        page.links.append((f"{CATS}/", "Cats"))
        cat_index.links.append((page.url, title))
        pages.append(page)
    cat_index.links.append((f"{SHOP}/cat-food.html", "Buy cat food"))
    shop = _Page(f"{SHOP}/", "The Shop", "cooking")
    pages.append(shop)
    for slug, topic, relevant in (
        ("cat-food", "cats", True),
        ("garden-tools", "gardening", False),
        ("car-wax", "cars", False),
        ("guitar-strings", "music", False),
        ("private/cat-secrets", "cats", True),
    ):
        page = _Page(
            f"{SHOP}/{slug}.html",
            slug.rsplit("/", 1)[-1].replace("-", " ").title(),
            topic,
            relevant=relevant,
        )
        page.links.append((f"{SHOP}/", "Shop home"))
        shop.links.append((page.url, page.title))
        pages.append(page)
    return pages


def _render(page: _Page, rng: random.Random) -> tuple[bytes, str]:
    """The page's bytes and its Content-Type."""
    links = "\n".join(
        f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>'
        for href, text in page.links
    )
    if page.lang == "en":
        paragraphs = "\n".join(
            f"<p>{_text(rng, page.topic, rng.randint(3, 6))}</p>" for _ in range(rng.randint(2, 4))
        )
        charset, codec = "utf-8", "utf-8"
    else:
        paragraphs = f"<p>{_KOREAN if page.lang == 'ko' else _JAPANESE}</p>"
        charset, codec = ("EUC-KR", "euc_kr") if page.lang == "ko" else ("Shift_JIS", "shift_jis")
    doc = (
        f'<!DOCTYPE html>\n<html lang="{page.lang}"><head><meta charset="{charset}">'
        f"<title>{html.escape(page.title)}</title></head>\n<body><h1>{html.escape(page.title)}</h1>\n"
        f"{paragraphs}\n<ul>\n{links}\n</ul>\n</body></html>\n"
    )
    return doc.encode(codec), f"text/html; charset={charset}"


def labels_path_for(archive: Path) -> Path:
    """``x.warc.gz`` -> ``x.labels.jsonl`` (the test web's naming)."""
    name = archive.name
    for suffix in (".warc.gz", ".warc"):
        if name.endswith(suffix):
            return archive.with_name(name[: -len(suffix)] + ".labels.jsonl")
    return archive.with_name(name + ".labels.jsonl")


def _write(
    writer: WARCWriter, url: str, status: str, headers: list[tuple[str, str]], body: bytes
) -> None:
    record_id = f"<urn:uuid:{uuid.UUID(bytes=hashlib.md5(url.encode()).digest())}>"
    http_headers = StatusAndHeaders(
        status, [*headers, ("Content-Length", str(len(body)))], protocol="HTTP/1.1"
    )
    record = writer.create_warc_record(
        url,
        "response",
        payload=io.BytesIO(body),
        length=len(body),
        http_headers=http_headers,
        warc_headers_dict={"WARC-Date": _WARC_DATE, "WARC-Record-ID": record_id},
    )
    writer.write_record(record)


def build_sample_archive(path: Path) -> Path:
    """Write the sample web to ``path`` (a ``.warc.gz`` file, or a directory to put
    ``sample.warc.gz`` in) and its labels next to it; returns the archive's path."""
    path = Path(path)
    if path.is_dir():
        path = path / "sample.warc.gz"
    rng = random.Random(20200101)
    pages = _graph()
    try:
        with open(path, "wb") as fh:
            writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
            for page in pages:
                body, content_type = _render(page, rng)
                _write(
                    writer,
                    page.url,
                    "200 OK",
                    [("Date", _DATE), ("Content-Type", content_type)],
                    body,
                )
            moved = b'<html><body>Moved to <a href="/sections/pets.html">Pets</a></body></html>\n'
            _write(
                writer,
                f"{NEWS}/pets",
                "301 Moved Permanently",
                [
                    ("Date", _DATE),
                    ("Location", f"{NEWS}/sections/pets.html"),
                    ("Content-Type", "text/html"),
                ],
                moved,
            )
            robots = b"User-agent: *\nDisallow: /private/\n"
            _write(
                writer,
                f"{SHOP}/robots.txt",
                "200 OK",
                [("Date", _DATE), ("Content-Type", "text/plain")],
                robots,
            )
        with open(labels_path_for(path), "w", encoding="utf-8") as fh:
            for page in pages:
                label = {
                    "url": page.url,
                    "relevant": page.relevant,
                    "topic": page.topic,
                    "lang": page.lang,
                }
                fh.write(json.dumps(label, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise ArchiveError(f"{path}: cannot write the sample archive ({exc.strerror})") from None
    return path
