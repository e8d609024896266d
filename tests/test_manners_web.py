"""The manners web (tests/manners_web.py) crawled live through the replay server
and simulated: the same pages fetched, the manners obeyed, sitemaps and feeds
read, the same run directory (issue 36, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

from focuscrawl.api import crawl
from focuscrawl.output.export import export
from focuscrawl.replay.archive import read_response_at
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.service.search import SearchIndex
from tests.manners_web import FETCHED, NOT_FETCHED, SEED, SITE, build_manners_web
from tests.test_crawl_simulate import assert_same_run_directory, read_pages


def test_manners_web_live_and_simulated(tmp_path: Path) -> None:
    archive = build_manners_web(tmp_path / "manners.warc.gz")
    live, sim = tmp_path / "live", tmp_path / "sim"
    with ReplayProcess([archive], log_path=tmp_path / "requests.tsv") as replay:
        crawl([SEED], live, proxy=replay.proxy_url, proxy_ca=replay.ca_cert_path, max_pages=50, schedule="ordered")
    crawl([SEED], sim, archives=[archive], max_pages=50)
    assert_same_run_directory(live, sim)
    rows = {row["url"].removeprefix(SITE): row for row in read_pages(sim)}
    fetched = set(rows)
    assert fetched >= FETCHED
    assert not fetched & NOT_FETCHED
    assert {u for u, r in rows.items() if r.get("noindex")} == {"/noindex.html", "/header.html"}
    assert rows["/copy.html"]["canonical"] == f"{SITE}/original.html"
    assert (rows["/orphan-1.html"]["parent"], rows["/story.html"]["parent"]) == (f"{SITE}/pages.xml.gz", f"{SITE}/feed.rss")
    assert (rows["/pages.xml.gz"]["sitemap"], rows["/feed.rss"]["feed"]) == ("urlset", "rss20")
    counters = json.loads((sim / "run.json").read_text())["summary"]["counters"]
    assert (counters["sitemap_errors"], counters["sitemap_lists_itself"]) == (1, 1)


def test_exports_and_search_leave_out_noindex_pages_sitemaps_and_feeds(tmp_path: Path) -> None:
    """A noindex page is archived and marked but is no page of the corpus: the Parquet/JSONL
    export and the search index leave it out, with the sitemaps and feeds read for links;
    the rows after them still point at their own WARC records."""
    archive = build_manners_web(tmp_path / "manners.warc.gz")
    run = tmp_path / "sim"
    crawl([SEED], run, archives=[archive], max_pages=50)
    pages = read_pages(run)
    left_out = {p["url"] for p in pages if p.get("noindex") or p.get("sitemap") or p.get("feed")}
    assert {u.removeprefix(SITE) for u in left_out} >= {"/noindex.html", "/header.html", "/pages.xml.gz", "/feed.rss"}
    out, n = export(run, "jsonl", tmp_path / "corpus.jsonl", jobs=1)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["url"] for r in rows] == [p["url"] for p in pages if p["url"] not in left_out]
    assert n == len(rows) > 5
    for row in rows:
        if row["warc_offset"] is not None:
            record = read_response_at(run / row["warc_file"], row["warc_offset"])
            assert record.url == (row["final_url"] or row["url"])
    index = SearchIndex(tmp_path / "search.db", run)
    try:
        assert index.update() == len(rows)
        assert index.count() == len(rows)
    finally:
        index.close()
