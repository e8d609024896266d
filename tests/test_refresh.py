"""``focuscrawl refresh RUN`` (issue 36, item 3): a finished crawl's pages visited
again, in the order of their estimated change rate times relevance, each asked
conditionally; appended to the run, resumable, nothing written twice; and the replay
web's changing pages (``--change-share``) that let it find changes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from focuscrawl import refresh as refresh_module
from focuscrawl.api import crawl, crawl_async
from focuscrawl.cli import main
from focuscrawl.evaluation.run import evaluate_run, read_run
from focuscrawl.output.warc_scan import answers
from focuscrawl.refresh import refresh
from focuscrawl.replay.changes import ChangePlan
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from tests.sites import html, redirect, serve

CATS = {"name": "keyword", "keywords": ["cat", "cats", "kitten", "feline"], "threshold": 0.25}


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def run(sample_archive: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    crawl(list(SAMPLE_SEEDS), out, strategy="best-first", model=CATS, max_pages=30, archives=[sample_archive])
    return out


def test_refresh_of_an_unchanged_web_is_answered_304(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _lines(run)
    pages = [r for r in first if r["status"] == 200]
    assert main(["refresh", str(run), "--max-pages", "10"]) == 0
    assert "10 pages visited again of 10 planned: 0 changed, 10 unchanged (10 answered 304, 100.0%" in (
        capsys.readouterr().out
    )
    lines = _lines(run)
    assert lines[: len(first)] == first  # appended: the crawl's lines as they were
    again = lines[len(first):]
    assert [(r["refresh"], r["status"], r["size"], r["unchanged"], r["recrawl"]) for r in again] == [
        (1, 304, 0, True, True)
    ] * 10
    # none re-visited yet: the same prior rate for all, so the most relevant first
    relevance = {r["url"]: r["relevance"] for r in pages}
    order = [relevance[r["url"]] for r in again]
    assert order == sorted(order, reverse=True)
    assert min(order) >= sorted(relevance.values(), reverse=True)[9]
    revisits = [a for a in answers(run / "corpus.warc.gz") if a.not_modified]
    assert len(revisits) == 10
    # a second round takes every page; eval counts the re-visits
    done = refresh(run)
    assert (done.round, done.planned, done.not_modified_share) == (2, len(pages), 1.0)
    result = evaluate_run(read_run(run), lambda url: None)
    assert (result["recrawls"], result["recrawls_changed"], result["recrawls_not_modified"]) == (
        10 + len(pages), 0.0, 1.0
    )
    assert result["fetched"] == len(first)  # the budget's URLs: the crawl's, not the re-visits


def test_a_crawl_resumed_after_a_refresh_keeps_its_lines(run: Path, sample_archive: Path) -> None:
    refresh(run, max_pages=5)
    kept = _lines(run)
    crawl([], run, resume=True, max_pages=40, archives=[sample_archive])
    lines = _lines(run)
    assert lines[: len(kept)] == kept
    assert sum(1 for r in lines if "refresh" in r) == 5


def test_a_refresh_stopped_midway_goes_on_writing_nothing_twice(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = len(_lines(run))
    real = refresh_module._Round.record
    calls = {"n": 0}

    def failing(self: Any, *args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 7:  # in the second batch of 4: 3 of its lines written, not committed
            raise KeyboardInterrupt
        real(self, *args)

    monkeypatch.setattr(refresh_module._Round, "record", failing)
    with pytest.raises(KeyboardInterrupt):
        refresh(run, max_pages=12, overrides={"fetch": {"concurrency": 4}})
    monkeypatch.setattr(refresh_module._Round, "record", real)
    done = refresh(run, max_pages=3)  # the round stopped is finished first (its plan, its budget)
    # counted for the whole round (before: 8, this run's part, "8 visited again of 12 planned")
    assert (done.round, done.planned, done.revisits, done.counters["not_modified"]) == (1, 12, 12, 12)
    again = _lines(run)[first:]
    assert len(again) == 12
    assert len({r["url"] for r in again}) == 12
    assert len([a for a in answers(run / "corpus.warc.gz") if a.not_modified]) == 12


def test_a_refresh_whose_server_is_gone_says_why_nothing_was_visited(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: "0 pages visited again of 3 planned: ... 0 without an answer" and no reason
    out = tmp_path / "live"
    with ReplayProcess([sample_archive]) as replay:
        crawl(list(SAMPLE_SEEDS), out, strategy="bfs", max_pages=5, proxy=replay.proxy_url, delay=0.0)
    capsys.readouterr()
    assert main(["refresh", str(out), "--max-pages", "3"]) == 0
    said = capsys.readouterr().out
    assert "0 pages visited again of 3 planned" in said
    assert said.rstrip().endswith("0 without an answer; not fetched: connect 3"), said


def test_refresh_finds_the_pages_the_replay_web_changed(sample_archive: Path, tmp_path: Path) -> None:
    share, seed = 0.4, 7
    out = tmp_path / "live"
    args = ["--change-share", str(share), "--change-seed", str(seed)]
    with ReplayProcess([sample_archive], faults_args=args) as replay:
        crawl(list(SAMPLE_SEEDS), out, strategy="bfs", max_pages=30, proxy=replay.proxy_url, delay=0.0,
              schedule="ordered")  # fmt: skip
        first = _lines(out)
        assert all("<!-- focuscrawl replay" not in r.get("title", "") for r in first)
        done = refresh(out)
        again = _lines(out)[len(first):]
        plan = ChangePlan(share, seed)
        changing = {r["url"] for r in again if plan.changing(r["url"])}
        assert 0 < len(changing) < len(again)
        assert {r["url"] for r in again if not r["unchanged"]} == changing
        assert all(r["status"] == 304 for r in again if r["unchanged"])
        assert done.counters["changed"] == len(changing)
        # a second round: the pages found changed are likelier to change again: first
        second = refresh(out, max_pages=len(changing))
        latest = _lines(out)[len(first) + len(again):]
        assert {r["url"] for r in latest} == changing
        assert second.counters["changed"] == len(changing)


def test_a_refresh_answered_by_server_failures_finds_no_change(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A re-visit the server answers 500 (or 503, 429) did not look at the page: it is
    archived and counted as a server failure, not as a change, and neither the next
    round's estimated rates nor ``eval``'s share of re-visits that found a change count
    it (before: 3 of 3 "changed", and eval's share 1.0)."""
    out = tmp_path / "live"
    with ReplayProcess([sample_archive]) as replay:
        crawl(list(SAMPLE_SEEDS), out, strategy="bfs", max_pages=5, proxy=replay.proxy_url, delay=0.0)
    before = len(_lines(out))
    with ReplayProcess([sample_archive], faults_args=["--fault", r"*/(?!robots\.txt$).*=500"]) as replay:
        capsys.readouterr()
        assert main(["refresh", str(out), "--max-pages", "3", "--proxy", replay.proxy_url, "--delay", "0"]) == 0
    said = capsys.readouterr().out
    again = _lines(out)[before:]
    assert [r["status"] for r in again] == [500, 500, 500]
    assert "0 changed, 0 unchanged" in said, said
    assert "3 answered by a server failure" in said, said
    assert evaluate_run(read_run(out), lambda url: None)["recrawls_changed"] is None


def test_a_refresh_plans_only_the_pages_the_crawl_committed(run: Path) -> None:
    """A crawl killed after writing a page's line and before committing it leaves the line
    past pages.jsonl's committed length; a refresh then cuts it away. Before: the refresh
    planned it (and wrote a re-visit of a page the crawl never recorded)."""
    first = _lines(run)
    pages = {r["url"] for r in first if r["status"] == 200}
    torn = {**next(r for r in first if r["status"] == 200), "url": "http://uncommitted.example/"}
    with open(run / "pages.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(torn) + "\n")
    done = refresh(run)
    assert done.planned == len(pages)
    again = _lines(run)[len(first):]
    assert {r["url"] for r in again} == pages
    assert "http://uncommitted.example/" not in {r["url"] for r in _lines(run)}


def test_a_refresh_after_server_failures_finds_the_pages_unchanged(sample_archive: Path, tmp_path: Path) -> None:
    """A round the server answered 500 (archived: no version of the page) and then a
    round it answers again: the pages are unchanged, asked with their validators (304).
    Before: the 500s' records took the pages' place (no validators, their bodies'
    digests), and the next round fetched them whole and counted them changed."""
    out = tmp_path / "live"
    with ReplayProcess([sample_archive]) as replay:
        crawl(list(SAMPLE_SEEDS), out, strategy="bfs", max_pages=5, proxy=replay.proxy_url, delay=0.0)
    with ReplayProcess([sample_archive], faults_args=["--fault", r"*/(?!robots\.txt$).*=500"]) as replay:
        failed = refresh(out, max_pages=3, overrides={"fetch": {"proxy": replay.proxy_url, "delay": 0.0}})
    assert failed.counters["server_failed"] == 3
    with ReplayProcess([sample_archive]) as replay:
        done = refresh(out, max_pages=3, overrides={"fetch": {"proxy": replay.proxy_url, "delay": 0.0}})
    assert (done.counters["changed"], done.counters["unchanged"], done.counters["not_modified"]) == (0, 3, 3)


async def test_a_page_that_redirects_now_is_the_one_found_changed(tmp_path: Path) -> None:
    """/a redirects to /b at the first refresh: /a changed, /b did not. Before: the
    re-visit of /a was counted as one of /b (its final URL), so the next round took /b
    (two visits, one change) for likelier to change than /a (none: the prior)."""
    moved = {"a": False}
    page_a, page_b = html("<p>page a</p>"), html("<p>page b</p>")

    async def a(request: web.Request) -> web.StreamResponse:
        return await (redirect("/b", status=301) if moved["a"] else page_a)(request)

    routes = {"/": html('<a href="/a">a</a> <a href="/b">b</a>'), "/a": a, "/b": page_b}
    out = tmp_path / "run"
    async with serve(routes) as site:
        await crawl_async(out, [site.url("/")], overrides={
            "crawl": {"max_pages": 3, "schedule": "ordered"}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}})  # fmt: skip
        moved["a"] = True
        first = await asyncio.to_thread(refresh, out)
        assert (first.counters["changed"], first.counters["unchanged"]) == (1, 2)
        second = await asyncio.to_thread(refresh, out, max_pages=1)
    assert second.round == 2
    assert [r["url"] for r in _lines(out) if r.get("refresh") == 2] == [site.url("/a")]


async def test_a_page_still_gone_is_no_change_since_it_went(tmp_path: Path) -> None:
    """/a answers 404 from the first refresh on: found changed once, then unchanged (the
    same 404). Before: changed at every round, so the rate of a dead page only grew
    and every round with a budget asked for the dead pages first."""
    gone = {"a": False}
    page_a = html("<p>page a</p>")

    async def a(request: web.Request) -> web.StreamResponse:
        return await (html("<p>no such page</p>", status=404) if gone["a"] else page_a)(request)

    routes = {"/": html('<a href="/a">a</a> <a href="/b">b</a>'), "/a": a, "/b": html("<p>page b</p>")}
    out = tmp_path / "run"
    async with serve(routes) as site:
        await crawl_async(out, [site.url("/")], overrides={
            "crawl": {"max_pages": 3, "schedule": "ordered"}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}})  # fmt: skip
        gone["a"] = True
        first = await asyncio.to_thread(refresh, out)
        second = await asyncio.to_thread(refresh, out)
    assert (first.counters["changed"], first.counters["unchanged"]) == (1, 2)
    assert (second.counters["changed"], second.counters["unchanged"]) == (0, 3)
    latest = {r["url"]: r for r in _lines(out) if r.get("refresh") == 2}
    assert (latest[site.url("/a")]["status"], latest[site.url("/a")]["unchanged"]) == (404, True)


async def test_a_sitemap_lastmod_in_the_future_is_no_change(tmp_path: Path) -> None:
    """The sitemap gives /a a lastmod of 2098: no page changed at the first refresh, so
    the second takes the pages in the crawl's order. Before: the lastmod passed every
    visit of /a, counted as one more change at each round, and /a came first."""
    urlset = ('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{}/a</loc>'
              "<lastmod>2098-01-01</lastmod></url></urlset>")  # fmt: skip

    async def sitemap(request: web.Request) -> web.StreamResponse:
        return web.Response(text=urlset.format(f"http://{request.host}"), content_type="application/xml")

    async def robots(request: web.Request) -> web.StreamResponse:
        return web.Response(text=f"User-agent: *\nSitemap: http://{request.host}/s.xml\n", content_type="text/plain")

    routes = {"/robots.txt": robots, "/s.xml": sitemap, "/": html('<a href="/b">b</a>'), "/a": html("<p>a</p>"),
              "/b": html("<p>b</p>")}  # fmt: skip
    out = tmp_path / "run"
    async with serve(routes) as site:
        await crawl_async(out, [site.url("/")], overrides={
            "crawl": {"max_pages": 10, "schedule": "ordered"}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)},
            "scope": {"deny_extensions": ()}})  # fmt: skip
        first = await asyncio.to_thread(refresh, out)
        second = await asyncio.to_thread(refresh, out, max_pages=1)
    assert first.counters["changed"] == 0
    assert second.round == 2
    assert [r["url"] for r in _lines(out) if r.get("refresh") == 2] == [site.url("/")]
