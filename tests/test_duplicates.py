"""Duplicate and near-duplicate pages (issue 37 item 3): the detector, the session
parameters it teaches, and a crawl over a handcrafted site with known copies."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from focuscrawl.api import crawl_async
from focuscrawl.evaluation.run import evaluate_run, read_run
from focuscrawl.exceptions import ConfigError
from focuscrawl.parse.duplicates import DuplicateIndex, fingerprint
from focuscrawl.settings import load_settings
from focuscrawl.urls.session_params import SessionParams
from tests.sites import html, serve

_RNG = random.Random(37)
_VOCAB = ["".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(2, 11))) for _ in range(4000)]


def _text(n: int, rng: random.Random) -> str:
    return " ".join(rng.choice(_VOCAB) for _ in range(n))


def _edited(text: str, changes: int, rng: random.Random) -> str:
    words = text.split()
    for i in rng.sample(range(len(words)), changes):
        words[i] = "zzz"
    return " ".join(words)


ARTICLE = _text(600, random.Random(1))


@pytest.mark.parametrize(
    ("copy", "expected"),
    [
        pytest.param(ARTICLE, "exact", id="same-text"),
        pytest.param("  " + ARTICLE.upper().replace(" ", "\n") + " ", "exact", id="case-and-whitespace"),
        pytest.param("Print this page " + ARTICLE, "near", id="printer-friendly"),
        pytest.param(_edited(ARTICLE, 3, random.Random(2)), "near", id="three-words-edited"),
        pytest.param(ARTICLE[: len(ARTICLE) * 9 // 10], "near", id="tail-cut"),
        pytest.param(_edited(ARTICLE, 150, random.Random(3)), None, id="quarter-rewritten"),
        pytest.param(_text(600, random.Random(4)), None, id="other-article"),
    ],
)
def test_duplicate_index_finds_copies(copy: str, expected: str | None) -> None:
    index = DuplicateIndex()
    assert index.check("http://a.org/article", ARTICLE) is None
    for i in range(200):  # unrelated pages around it
        assert index.check(f"http://o.org/{i}", _text(300, random.Random(100 + i))) is None
    found = index.check("http://b.org/copy", copy)
    if expected is None:
        assert found is None
        assert len(index) == 202
    else:
        assert found is not None
        assert found.of == "http://a.org/article"
        assert found.exact == (expected == "exact")
        assert len(index) == 201  # a duplicate is not remembered itself


def test_short_pages_are_never_duplicates() -> None:
    index = DuplicateIndex(min_words=20)
    assert index.check("http://a.org/1", "page not found") is None
    assert index.check("http://a.org/2", "page not found") is None
    assert index.check("http://a.org/3", "") is None
    assert len(index) == 0


def test_duplicate_index_is_bounded() -> None:
    index = DuplicateIndex(max_pages=5)
    texts = [_text(100, random.Random(i)) for i in range(8)]
    for i, text in enumerate(texts):
        index.check(f"http://a.org/{i}", text)
    assert len(index) == 5
    assert index.check("http://b.org/x", texts[2]) is not None  # still checked against the first 5
    assert index.check("http://b.org/y", texts[7]) is None  # past the bound: not remembered


def test_fingerprint_words_and_digest() -> None:
    assert fingerprint("A b  C").words == 3
    assert fingerprint("").words == 0
    assert fingerprint("a b c").digest != fingerprint("a b d").digest


def test_session_params_learned_after_two_pairs() -> None:
    sessions = SessionParams(after=2)
    assert sessions.observe("http://h.org/a?id=1&sid=X", "http://h.org/a?id=1&sid=Y") == []
    assert sessions.clean("http://h.org/c?sid=Z") == "http://h.org/c?sid=Z"
    assert sessions.observe("http://h.org/b?sid=Q", "http://h.org/b?sid=R") == ["sid"]
    assert sessions.clean("http://h.org/c?sid=Z&p=2") == "http://h.org/c?p=2"
    assert sessions.clean("http://other.org/c?sid=Z") == "http://other.org/c?sid=Z"
    # a mirror on another path, or three parameters differing, teach nothing
    assert sessions.observe("http://h.org/x?u=1", "http://h.org/y?u=2") == []
    assert sessions.observe("http://h.org/x?a=1&b=1&c=1", "http://h.org/x?a=2&b=2&c=2") == []


def test_dedup_settings_checked() -> None:
    with pytest.raises(ConfigError, match="dedup_similarity"):
        load_settings(overrides={"parse": {"dedup_similarity": 1.5}})
    assert load_settings().parse.dedup is True
    assert load_settings().parse.follow_duplicates is False


def _page(title: str, text: str, links: list[str] = ()) -> str:  # type: ignore[assignment]
    anchors = " ".join(f'<a href="{u}">{u}</a>' for u in links)
    return f"<html><head><title>{title}</title></head><body><p>{text}</p>{anchors}</body></html>"


def _site() -> dict[str, object]:
    """Articles with copies whose truth is known: a mirror, a printer-friendly copy,
    session-ID variants; the mirror and the printer's copy link to a page no original
    links to."""
    rng = random.Random(7)
    a, b, c = (f"topic {_text(400, rng)}" for _ in range(3))
    x, y = (f"topic {_text(300, rng)}" for _ in range(2))
    return {
        "/": html(_page("home", "start here", [
            "/a.html", "/b.html", "/c.html", "/mirror/a.html", "/print/a.html",
            "/x?sid=1", "/x?sid=2", "/y?sid=1", "/y?sid=2", "/next.html",
        ])),
        "/a.html": html(_page("A", a)),
        "/b.html": html(_page("B", b)),
        "/c.html": html(_page("C", c)),
        "/mirror/a.html": html(_page("A (mirror)", a, ["/only-from-copies.html"])),
        "/print/a.html": html(_page("A", "print " + a, ["/only-from-copies.html"])),
        "/x": html(_page("X", x)),
        "/y": html(_page("Y", y)),
        "/next.html": html(_page("next", "more", ["/z?sid=7", "/z?sid=8", "/z?sid=9"])),
        "/z": html(_page("Z", "topic " + _text(100, rng))),
        "/only-from-copies.html": html(_page("hidden", "topic " + _text(100, rng))),
    }


async def test_crawl_marks_duplicates_and_learns_session_ids(tmp_path: Path) -> None:
    async with serve(_site()) as site:  # type: ignore[arg-type]
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={
                "crawl": {"max_pages": 100, "schedule": "ordered"},
                "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)},
            },
            model={"name": "keyword", "keywords": ["topic"]},
        )  # fmt: skip
        paths = site.paths()
    rows = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    dup = {r["url"].split(str(site.port), 1)[1]: r.get("duplicate_of") for r in rows}
    original = site.url("/a.html")
    assert dup["/mirror/a.html"] == original
    assert dup["/print/a.html"] == original
    assert dup["/x?sid=2"] == site.url("/x?sid=1")
    assert dup["/y?sid=2"] == site.url("/y?sid=1")
    assert all(dup[p] is None for p in ("/a.html", "/b.html", "/c.html", "/x?sid=1", "/y?sid=1"))
    assert "/only-from-copies.html" not in paths  # a duplicate's links are not followed
    # "sid" learned from two pairs: the three /z?sid= links are one URL, fetched once
    assert [p for p in paths if p.startswith("/z")] == ["/z"]
    counters = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"]
    assert counters["duplicates_exact"] == 2
    assert counters["duplicates_near"] == 2
    assert counters["session_params_learned"] == 1
    assert counters["session_params_removed"] == 3
    # eval: the duplicates counted once beside the raw figures
    report = evaluate_run(read_run(tmp_path / "run"), lambda url: True, answer=[original, site.url("/b.html")])
    assert report["unique"]["pages"] == report["pages"] - 4
    assert report["unique"]["relevant"] == report["relevant"] - 4
    assert report["unique"]["duplicates"] == 4
    # the crawler's model marked a, b, c, x, y, z and the four copies relevant
    assert report["answer"]["tp"] == 2
    assert report["unique"]["answer"]["tp"] == 2
    assert report["unique"]["answer"]["precision"] > report["answer"]["precision"]


async def test_crawl_follows_duplicates_when_asked(tmp_path: Path) -> None:
    async with serve(_site()) as site:  # type: ignore[arg-type]
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={
                "crawl": {"max_pages": 100, "schedule": "ordered"},
                "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)},
                "parse": {"follow_duplicates": True, "session_params_after": 0},
            },
            model={"name": "keyword", "keywords": ["topic"]},
        )  # fmt: skip
        paths = site.paths()
    assert "/only-from-copies.html" in paths
    assert sorted(p for p in paths if p.startswith("/z")) == ["/z?sid=7", "/z?sid=8", "/z?sid=9"]


async def test_resumed_crawl_knows_the_pages_recorded_before(tmp_path: Path) -> None:
    """A crawl stopped after the originals were recorded and resumed in a new crawler
    (as after a kill -9) finds the copies fetched after the resume exactly as one crawl
    does: the duplicate index is replayed from the crawl DB (it started empty before)."""
    overrides = {"crawl": {"max_pages": 100, "schedule": "ordered"},
                 "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}}  # fmt: skip
    model = {"name": "keyword", "keywords": ["topic"]}
    async with serve(_site()) as site:  # type: ignore[arg-type]
        await crawl_async(tmp_path / "one", [site.url("/")], overrides=overrides, model=model)
        first = {**overrides, "crawl": {**overrides["crawl"], "max_pages": 4}}
        await crawl_async(tmp_path / "two", [site.url("/")], overrides=first, model=model)
        await crawl_async(tmp_path / "two", [site.url("/")], overrides=overrides, model=model, resume=True)

    def dups(run: Path) -> dict[str, object]:
        rows = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
        return {r["url"]: r.get("duplicate_of") for r in rows}

    assert sum(v is not None for v in dups(tmp_path / "one").values()) == 4
    assert dups(tmp_path / "two") == dups(tmp_path / "one")
