"""The content web (issue 37 item 4) through the replay server: script-built pages
found only when rendered, PDFs read, copies found as duplicates of their originals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.api import crawl_async
from focuscrawl.fetch.render import browser_path, looks_like_shell
from focuscrawl.relevance.examples import iter_archive_pages
from focuscrawl.replay.content_web import SEEDS, build_content_web
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import labels_path_for
from focuscrawl.settings import FetchSettings

TOPIC = ["kitten", "kittens", "cat", "litter", "feline", "purring", "whiskers", "catnip", "veterinary", "adopt"]


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    archive = build_content_web(tmp_path_factory.mktemp("content"), articles=60, reports=4)
    labels = {}
    for line in labels_path_for(archive).read_text().splitlines():
        label = json.loads(line)
        labels[label["url"]] = label
    return archive, labels


def test_content_web_is_the_same_bytes_every_time(tmp_path: Path, web: tuple[Path, dict[str, Any]]) -> None:
    again = build_content_web(tmp_path, articles=60, reports=4)
    assert again.read_bytes() == web[0].read_bytes()


def test_auto_rule_on_the_content_web(web: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    archive, labels = web
    judged = [
        (looks_like_shell(page.body), bool(labels[page.url]["needs_render"]))
        for page in iter_archive_pages(archive, only_ok=True)
        if labels.get(page.url, {}).get("kind") in ("static", "script", "short")
    ]
    assert sum(needs for _, needs in judged) >= 10
    assert all(shell == needs for shell, needs in judged)


def _group(url: str, copies: dict[str, str]) -> str:
    while url in copies:
        url = copies[url]
    return url


def _crawl(replay: ReplayProcess, out: Path, render: str) -> list[dict[str, Any]]:
    import asyncio

    asyncio.run(crawl_async(
        out, list(SEEDS),
        overrides={"crawl": {"max_pages": 2000}, "fetch": {"proxy": replay.proxy_url, "delay": 0,
                   "allow_private": ("127.0.0.1",), "render": render}},
        model={"name": "keyword", "keywords": TOPIC},
    ))  # fmt: skip
    return [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()]


@pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")
def test_render_modes_on_the_content_web(tmp_path: Path, web: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    archive, labels = web
    scripted = {u for u, lab in labels.items() if lab["kind"] == "script" and lab["relevant"]}
    copies = {u: lab["copy_of"] for u, lab in labels.items() if lab["copy_of"]}
    assert scripted
    with ReplayProcess([archive]) as replay:
        never = _crawl(replay, tmp_path / "never", "never")
        auto = _crawl(replay, tmp_path / "auto", "auto")
    for rows in (never, auto):
        assert sum(1 for r in rows if r.get("pdf_pages") == 2) == 4  # every report read
        assert sum(1 for r in rows if "/from-pdf/" in r["url"]) == 4  # and its link followed
        # whichever of a group of copies came first is the original: the others, and
        # nothing else, are its duplicates
        flagged = {r["url"]: r["duplicate_of"] for r in rows if r.get("duplicate_of")}
        assert all(_group(u, copies) == _group(of, copies) for u, of in flagged.items())
        groups = {_group(u, copies) for u in copies}
        assert len(flagged) == sum(1 for r in rows if _group(r["url"], copies) in groups) - len(groups)
    found_never = {r["url"] for r in never if r.get("relevant")}
    found_auto = {r["url"] for r in auto if r.get("relevant")}
    assert not scripted & found_never
    assert scripted <= found_auto
    deep = {r["url"] for r in auto} - {r["url"] for r in never}
    assert deep
    assert all("/deep/" in u for u in deep)


@pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")
def test_a_rendered_pages_exported_text_is_its_doms(tmp_path: Path, web: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    # the crawl judged a script-built page by the DOM the browser built; the corpus's
    # text is that DOM's too (its shell has none), and a plain page's is its HTML's
    from focuscrawl.output.corpus import corpus_rows
    from focuscrawl.service.search import SearchIndex

    archive, labels = web
    with ReplayProcess([archive]) as replay:
        _crawl(replay, tmp_path / "auto", "auto")
    rows = [row for batch in corpus_rows(tmp_path / "auto", jobs=1) for row in batch]
    kinds = {row["url"]: labels.get(row["url"], {}).get("kind") for row in rows}
    scripted = [row for row in rows if kinds[row["url"]] == "script"]
    static = [row for row in rows if kinds[row["url"]] == "static"]
    assert len(scripted) >= 10
    assert static
    for row in scripted + static:
        words = set((row["text"] or "").split())
        assert len(words) >= 20, row["url"]  # its article's text, not an empty shell
        if labels[row["url"]]["relevant"]:
            assert words & set(TOPIC), row["url"]
    assert all("_dom" not in row for row in rows)
    index = SearchIndex(tmp_path / "index.sqlite", tmp_path / "auto")
    index.update()
    relevant = {row["url"] for row in scripted if labels[row["url"]]["relevant"]}
    found = {hit["url"] for hit in index.search("kittens OR whiskers OR catnip", limit=200)}
    assert relevant <= found
