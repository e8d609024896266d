"""The manners web (tests/manners_web.py) crawled live through the replay server
and simulated: the same pages fetched, the manners obeyed, sitemaps and feeds
read, the same run directory (issue 36, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

from focuscrawl.api import crawl
from focuscrawl.replay.process import ReplayProcess
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
