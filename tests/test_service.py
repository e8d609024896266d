"""``focuscrawl serve``: crawls started, watched, steered and searched over the REST API;
bad requests are one-line JSON errors and start nothing; a server killed with its
crawl finds it again and resumes it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import quote

import pytest
from aiohttp.streams import StreamReader
from aiohttp.test_utils import make_mocked_request

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.service import build_service
from focuscrawl.service.app import make_app, read_json
from focuscrawl.service.crawls import CrawlManager, lock_holder
from focuscrawl.service.specs import parse_request
from tests.archives import write_archive
from tests.service_client import Server, free_port, wait_for

pytest.importorskip("jinja2")
pytest.importorskip("prometheus_client")


def _request(name: str, replay: ReplayProcess, **crawl: Any) -> dict[str, Any]:
    return {
        "name": name, "seeds": list(SAMPLE_SEEDS),
        "settings": {
            "crawl": {"strategy": "best-first", "max_pages": 30, **crawl},
            "fetch": {"proxy": replay.proxy_url, "delay": 0.0},
            "model": {"name": "keyword", "keywords": ["cat", "cats", "kitten"]},
        },
    }  # fmt: skip


def _page_urls(run: Path) -> list[str]:
    with open(run / "pages.jsonl", encoding="utf-8") as fh:
        return [json.loads(line)["url"] for line in fh]


def _indexed(runs: Path, name: str) -> list[str]:
    """The URLs in a crawl's search index, in the order they were indexed."""
    conn = sqlite3.connect(runs / ".service" / name / "search.db")
    try:
        return [row[0] for row in conn.execute("SELECT url FROM pages ORDER BY id")]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with Server(tmp_path_factory.mktemp("serve") / "runs") as srv:
        yield srv


def test_openapi_document_lists_every_api_route(tmp_path: Path) -> None:
    service = build_service(tmp_path / "runs", host="127.0.0.1", port=8321)
    app = make_app(service)
    routes = {r.resource.canonical for r in app.router.routes() if r.resource is not None}
    api = {r for r in routes if r.startswith(("/api", "/metrics"))}
    from focuscrawl.service.openapi import openapi_document

    document = openapi_document()
    assert set(document["paths"]) == api
    methods = {(r.resource.canonical, r.method.lower()) for r in app.router.routes()
               if r.resource is not None and r.resource.canonical in api and r.method != "HEAD"}  # fmt: skip
    assert methods == {(p, m) for p, ops in document["paths"].items() for m in ops}


def test_a_crawl_over_the_api_from_start_to_search(server: Server, sample_replay: ReplayProcess) -> None:
    status, made = server.call("POST", "/api/crawls", _request("cats", sample_replay))
    assert status == 201, made
    assert made["name"] == "cats"
    server.wait_state("cats", "finished")
    status, listed = server.call("GET", "/api/crawls")
    assert [c["name"] for c in listed["crawls"]] == ["cats"]
    _, numbers = server.call("GET", "/api/crawls/cats/numbers")
    assert numbers["urls"] == 30
    assert numbers["state"] == "finished"
    _, pages = server.call("GET", "/api/crawls/cats/pages?offset=2&limit=5")
    run = server.runs / "cats"
    assert [p["url"] for p in pages["pages"]] == _page_urls(run)[2:7]
    _, decisions = server.call("GET", "/api/crawls/cats/decisions?limit=3")
    assert len(decisions["decisions"]) == 3
    target = _page_urls(run)[5]
    _, why = server.call("GET", f"/api/crawls/cats/why?url={quote(target, safe='')}")
    assert why["url"] == target
    assert why["row"]["state"] == "fetched"
    assert target in why["text"]
    status, answer = server.call("GET", "/api/crawls/cats/why?url=ftp%3A%2F%2Fx.example%2F")
    assert status == 400  # before (b46): 200 and an empty explanation
    assert "is not an http(s) URL" in answer["error"]
    _, found = server.call("GET", "/api/crawls/cats/search?q=kitten")
    assert found["results"], found
    assert all("kitten" in (r["snippet"] or "").lower() for r in found["results"])
    assert {r["url"] for r in found["results"]} <= set(_page_urls(run))
    assert _indexed(server.runs, "cats") == _page_urls(run)  # each page once, in order
    status, answer = server.call("POST", "/api/crawls/cats/stop", {})
    assert status == 409
    assert "has ended" in answer["error"]


def test_metrics_are_prometheus_text(server: Server, sample_replay: ReplayProcess) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    if server.call("GET", "/api/crawls/m1")[0] == 404:
        server.call("POST", "/api/crawls", _request("m1", sample_replay, max_pages=12))
    server.wait_state("m1", "finished")
    status, text = server.call("GET", "/metrics")
    assert status == 200
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip
    assert samples[("focuscrawl_urls_total", (("crawl", "m1"),))] == 12
    assert samples[("focuscrawl_crawl_state", (("crawl", "m1"), ("state", "finished")))] == 1
    assert samples[("focuscrawl_bytes_total", (("crawl", "m1"),))] > 0
    assert ("focuscrawl_harvest_rate", (("crawl", "m1"),)) in samples


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip


def test_metrics_scraped_during_a_crawl_show_fetches_in_flight_and_their_latency(
    tmp_path: Path, sample_replay: ReplayProcess
) -> None:
    """A crawl slowed by its delay is scraped while it runs: its run.json's live numbers
    give the fetch latency histogram and the URLs in flight; at its end none are."""
    with Server(tmp_path / "runs") as srv:
        body = _request("live", sample_replay, max_pages=40)
        body["settings"]["fetch"]["delay"] = 0.3
        assert srv.call("POST", "/api/crawls", body)[0] == 201
        crawl = (("crawl", "live"),)

        def scraped_running() -> Any:
            samples = _samples(srv.call("GET", "/metrics")[1])
            running = samples.get(("focuscrawl_crawl_state", (*crawl, ("state", "running")))) == 1
            counted = samples.get(("focuscrawl_fetch_latency_seconds_count", crawl), 0)
            return running and counted > 0 and samples

        during = wait_for(scraped_running, what="a scrape of the running crawl with fetches")
        assert ("focuscrawl_in_flight_urls", crawl) in during
        assert during[("focuscrawl_in_flight_urls", crawl)] >= 0
        buckets = sorted((float(dict(labels)["le"]), value) for (name, labels), value in during.items()
                         if name == "focuscrawl_fetch_latency_seconds_bucket")  # fmt: skip
        assert buckets[-1] == (float("inf"), during[("focuscrawl_fetch_latency_seconds_count", crawl)])
        assert [v for _, v in buckets] == sorted(v for _, v in buckets)  # cumulative
        assert during[("focuscrawl_fetch_latency_seconds_sum", crawl)] > 0
        srv.wait_state("live", "finished")
        after = _samples(srv.call("GET", "/metrics")[1])
        assert after[("focuscrawl_in_flight_urls", crawl)] == 0
        fetched = after[("focuscrawl_fetch_latency_seconds_count", crawl)]
        assert during[("focuscrawl_fetch_latency_seconds_count", crawl)] <= fetched <= 40
        assert fetched == len(_page_urls(srv.runs / "live"))  # every URL was asked
        assert not [key for key in after if key[0] == "focuscrawl_worker_leases"]  # no shared crawl


BAD = [
    ("malformed", b'{"name": "x", "seeds": [', 400, None),
    ("not-object", b"[1, 2]", 400, None),
    ("unknown-field", {"name": "x", "seeds": ["http://a.org/"], "colour": "red"}, 400, "colour"),
    ("budget", {"name": "x", "seeds": ["http://a.org/"], "settings": {"crawl": {"max_pages": -1}}},
     400, "settings.crawl.max_pages"),
    ("unknown-setting", {"name": "x", "seeds": ["http://a.org/"], "settings": {"fetch": {"speed": 1}}},
     400, "settings.fetch.speed"),
    ("unknown-table", {"name": "x", "seeds": ["http://a.org/"], "settings": {"fech": {}}}, 400, "settings.fech"),
    ("strategy", {"name": "x", "seeds": ["http://a.org/"], "settings": {"crawl": {"strategy": "nope"}}},
     400, "settings.crawl.strategy"),
    # these four were started (201) and failed at once, exit 2
    ("strategy-param", {"name": "x", "seeds": ["http://a.org/"],
                        "settings": {"crawl": {"strategy": "otie", "strategy_params": {"a": "x"}}}},
     400, "settings.crawl.strategy_params"),
    ("model-name", {"name": "x", "seeds": ["http://a.org/"], "settings": {"model": {"name": "nope"}}},
     400, "settings.model"),
    ("model-param", {"name": "x", "seeds": ["http://a.org/"],
                     "settings": {"model": {"name": "keyword", "keywords": ["cat"], "treshold": 0.5}}},
     400, "settings.model"),
    ("filter-param", {"name": "x", "seeds": ["http://a.org/"],
                      "settings": {"filters": [{"name": "host-blacklist"}, {"name": "language", "target": 5}]}},
     400, "settings.filters[1]"),
    ("seed-not-url", {"name": "x", "seeds": ["cats and dogs"]}, 400, "seeds[0]"),
    ("seed-ftp", {"name": "x", "seeds": ["http://a.org/", "ftp://a.org/"]}, 400, "seeds[1]"),
    ("no-seeds", {"name": "x", "seeds": []}, 400, "seeds"),
    ("name-traversal", {"name": "../escape", "seeds": ["http://a.org/"]}, 400, "name"),
    ("name-dot", {"name": ".service", "seeds": ["http://a.org/"]}, 400, "name"),
    # the first chunk of the body was read alone and refused as malformed JSON (400)
    ("body-over-1mb", {"name": "x", "seeds": ["http://a.org/" + "a" * 2_000_000]}, 413, None),
    ("archive-outside", {"name": "x", "kind": "simulate", "seeds": ["http://a.org/"],
                         "archives": ["../../etc/passwd"]}, 403, "archives[0]"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "status", "field"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_requests_are_one_line_json_and_start_nothing(
    server: Server, body: Any, status: int, field: str | None
) -> None:
    before = sorted(p.name for p in server.runs.iterdir())
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    got, answer = server.call("POST", "/api/crawls", raw=raw)
    assert got == status, answer
    assert set(answer) <= {"error", "field"}
    assert "\n" not in answer["error"]
    assert answer.get("field") == field
    assert sorted(p.name for p in server.runs.iterdir()) == before
    assert not (server.runs.parent / "escape").exists()


async def test_a_body_arriving_in_parts_is_read_whole() -> None:
    """read_json read the first part that had arrived (aiohttp's read(n) answers with what
    is there, 64 KB or less): a request of 5,000 seeds was refused as malformed JSON."""
    body = json.dumps({"name": "x", "seeds": [f"http://a.org/{i}" for i in range(5000)]}).encode()
    stream = StreamReader(mock.Mock(_reading_paused=False), 2**16, loop=asyncio.get_running_loop())
    request = make_mocked_request("POST", "/api/crawls", payload=stream)
    stream.feed_data(body[:65536])
    reading = asyncio.ensure_future(read_json(request))
    await asyncio.sleep(0)  # the reader takes the part that has arrived
    stream.feed_data(body[65536:])
    stream.feed_eof()
    assert len((await reading)["seeds"]) == 5000


def test_search_finds_a_word_inside_chinese_and_japanese_text(server: Server, tmp_path: Path) -> None:
    """FTS5's tokenizer took a run of Han or kana, written without spaces, as one word:
    猫 inside 这是关于猫的页面 was found by no search."""
    zh, ja = "http://zh.example/", "http://zh.example/ja"
    archive = write_archive(tmp_path / "cjk.warc.gz", {
        zh: "<html lang=zh><title>猫的页面</title><p>这是关于猫的页面。小猫很可爱，喜欢睡觉。</p><a href=/ja>ja</a>",
        ja: "<html lang=ja><title>ねこ</title><p>子猫はとてもかわいいです。毎日よく眠ります。</p>",
    })  # fmt: skip
    with ReplayProcess([archive]) as replay:
        request = {"name": "cjk", "seeds": [zh],
                   "settings": {"crawl": {"max_pages": 5}, "fetch": {"proxy": replay.proxy_url, "delay": 0.0}}}  # fmt: skip
        assert server.call("POST", "/api/crawls", request)[0] == 201
        server.wait_state("cjk", "finished")

    def search(query: str) -> list[dict[str, Any]]:
        status, found = server.call("GET", "/api/crawls/cjk/search?q=" + quote(query))
        assert status == 200, found
        return list(found["results"])

    wait_for(lambda: len(search("ねこ OR 猫的页面")) == 2, 60, "both pages indexed")
    expected = {"猫": {zh, ja}, "可爱": {zh}, "小猫": {zh}, "子猫": {ja}, "かわいい": {ja},
                '"よく眠"': {ja}, "睡*": {zh}, "猫 NOT 可爱": {ja}, "猫可": set(), "title:猫": {zh}}  # fmt: skip
    for query, urls in expected.items():
        assert {r["url"] for r in search(query)} == urls, query
    # limit=0 (allowed, as for /pages and /decisions) gave one result
    assert server.call("GET", "/api/crawls/cjk/search?limit=0&q=" + quote("猫"))[1]["results"] == []
    (hit,) = search("可爱")
    assert "\ue000可爱\ue001" in hit["snippet"]
    assert "\u200b" not in hit["snippet"]
    assert hit["title"] == "猫的页面"


def test_search_finds_a_word_inside_thai_text(server: Server, tmp_path: Path) -> None:
    """Thai is written without spaces too, and was not split: ไทย inside ภาษาไทย, or ที่
    (a letter with its vowel and tone marks), was found by no search."""
    th, en = "http://th.example/", "http://th.example/en"
    archive = write_archive(tmp_path / "th.warc.gz", {
        th: "<html lang=th><title>ภาษาไทย</title><p>ฉันเรียนภาษาไทยที่โรงเรียนทุกวัน</p><a href=/en>en</a>",
        en: "<html lang=en><title>Thai</title><p>I study Thai at school every day.</p>",
    })  # fmt: skip
    with ReplayProcess([archive]) as replay:
        request = {"name": "thai", "seeds": [th],
                   "settings": {"crawl": {"max_pages": 5}, "fetch": {"proxy": replay.proxy_url, "delay": 0.0}}}  # fmt: skip
        assert server.call("POST", "/api/crawls", request)[0] == 201
        server.wait_state("thai", "finished")

    def search(query: str) -> set[str]:
        status, found = server.call("GET", "/api/crawls/thai/search?q=" + quote(query))
        assert status == 200, found
        return {r["url"] for r in found["results"]}

    wait_for(lambda: len(search("school OR ภาษาไทย")) == 2, 60, "both pages indexed")
    expected = {"ไทย": {th}, "โรงเรียน": {th}, "ที่": {th}, "ทุกวัน": {th}, "ที่โรง": {th},
                "ไทยโรง": set(), "thai": {en}}  # fmt: skip
    for query, urls in expected.items():
        assert search(query) == urls, query


def test_a_crawl_failed_at_start_says_why_as_soon_as_it_is_failed(tmp_path: Path) -> None:
    """describe() read the crawl's state file before state() noted the exit: the first
    answer that said "failed" (the one a client polling for it gets) had no error."""
    manager = CrawlManager(tmp_path / "runs")
    absent = tmp_path / "absent.txt"
    spec = parse_request({"name": "bad", "seeds": ["http://a.example/"],
                          "settings": {"model": {"name": "perplexity", "texts": [str(absent)]}}},
                         runs_dir=manager.runs_dir)  # fmt: skip
    manager.create(spec)
    os.waitid(os.P_PID, manager.wants("bad")["pid"], os.WEXITED | os.WNOWAIT)  # exited, not reaped
    described = manager.describe("bad")
    assert described["state"] == "failed"
    assert described["exit"] == 2
    assert f"{absent}: no such text file" in described["error"]


def test_a_run_the_index_cannot_read_is_searched_as_indexed(tmp_path: Path, sample_archive: Path) -> None:
    """A run whose WARC is damaged (here: its start overwritten) and whose index must
    catch up: the search answered 500 with aiohttp's plain text, API and page alike."""
    runs = tmp_path / "runs"
    (runs / "archives").mkdir(parents=True)
    shutil.copy(sample_archive, runs / "archives" / "sample.warc.gz")
    body = {"name": "sim", "kind": "simulate", "seeds": list(SAMPLE_SEEDS), "archives": ["archives/sample.warc.gz"],
            "settings": {"crawl": {"strategy": "bfs", "max_pages": 10}}}  # fmt: skip
    with Server(runs) as srv:
        assert srv.call("POST", "/api/crawls", body)[0] == 201
        srv.wait_state("sim", "finished")
    # an index to build anew (the server may not have made one yet: the crawl ended first)
    (runs / ".service" / "sim" / "search.db").unlink(missing_ok=True)
    with open(runs / "sim" / "corpus.warc.gz", "r+b") as fh:
        fh.write(b"not gzip" * 8)
    with Server(runs) as srv:
        status, found = srv.call("GET", "/api/crawls/sim/search?q=cat")
        assert status == 200, found
        assert found["results"] == []
        assert found["warning"].startswith("the index is behind the crawl: ")
        assert "not a readable WARC at offset 0" in found["warning"]
        status, text = srv.call("GET", "/crawls/sim/search?q=cat")
        assert status == 200
        assert 'id="behind"' in text
        assert srv.call("GET", "/api/crawls/sim/numbers")[0] == 200


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def test_a_crawl_that_fetched_nothing_is_failed_and_resumed(tmp_path: Path) -> None:
    """A crawl whose proxy is down ends its run, says 'no page could be fetched ... once
    the cause is fixed, --resume tries them again' and exits 1: the server called it
    finished, with no error, and refused to resume it (409)."""
    port = free_port()
    archive = write_archive(tmp_path / "web.warc.gz", {
        "http://a.example/": "<title>cats</title><a href=/b>b</a>", "http://a.example/b": "<title>b</title>"})  # fmt: skip
    body = {"name": "down", "seeds": ["http://a.example/"],
            "settings": {"fetch": {"proxy": f"http://127.0.0.1:{port}", "delay": 0.0}}}  # fmt: skip
    with Server(tmp_path / "runs") as srv:
        assert srv.call("POST", "/api/crawls", body)[0] == 201
        srv.wait_state("down", "failed", "finished")
        _, described = srv.call("GET", "/api/crawls/down")
        assert (described["state"], described["exit"]) == ("failed", 1)
        assert "no page could be fetched" in described["error"]
        # the live page: the table's state was the run's files' ("finished"), no error shown
        for path in ("/crawls/down", "/crawls/down/fragment"):
            status, text = srv.call("GET", path)
            assert status == 200
            assert '<td class="l failed">failed</td>' in text
            assert '<p class="error" id="crawl-error">focuscrawl: no page could be fetched' in text
        replay = subprocess.Popen([sys.executable, "-m", "focuscrawl", "replay", str(archive), "--port", str(port)],
                                  env=srv.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            wait_for(lambda: _listens(port), 60, "the proxy")
            status, answer = srv.call("POST", "/api/crawls/down/resume", {})
            assert status == 200, answer
            assert srv.wait_state("down", "finished", "failed") == "finished"
        finally:
            replay.terminate()
            replay.wait(30)
        assert [page["url"] for page in srv.call("GET", "/api/crawls/down/pages")[1]["pages"]] == [
            "http://a.example/", "http://a.example/b"]  # fmt: skip


def test_bad_reads_and_actions_are_one_line_json(server: Server, sample_replay: ReplayProcess) -> None:
    if server.call("GET", "/api/crawls/m1")[0] == 404:
        server.call("POST", "/api/crawls", _request("m1", sample_replay, max_pages=12))
    server.wait_state("m1", "finished")
    # a second crawl into the same directory
    status, answer = server.call("POST", "/api/crawls", _request("m1", sample_replay))
    assert (status, answer["field"]) == (409, "name")
    cases = [
        ("GET", "/api/crawls/m1/search?q=%22unbalanced", 400),
        ("GET", "/api/crawls/m1/search?q=AND%20OR", 400),
        ("GET", "/api/crawls/m1/search?q=" + "a" * 100_000, 400),
        ("GET", "/api/crawls/m1/pages?limit=-1", 400),
        ("GET", "/api/crawls/m1/pages?limit=100000", 400),
        ("GET", "/api/crawls/m1/pages?offset=%C2%B2", 400),  # '²' passes str.isdigit: was a 500
        ("GET", "/api/crawls/m1/decisions?limit=%C2%B2", 400),
        ("GET", "/api/crawls/nothere/numbers", 404),
        ("GET", "/api/crawls/..%2F..%2Fetc/numbers", 400),
        ("GET", "/api/crawls/%2e%2e/pages", 400),
        ("POST", "/api/crawls/m1/stop", 409),
        ("POST", "/api/crawls/m1/pause", 409),
        ("POST", "/api/crawls/m1/params", 409),
        ("GET", "/api/nothing", 404),
    ]
    for method, path, expected in cases:
        body = {"high": 1} if path.endswith("params") else ({} if method == "POST" else None)
        status, answer = server.call(method, path, body)
        assert status == expected, (path, answer)
        assert isinstance(answer, dict), (path, answer)
        assert "\n" not in answer["error"]
    pages_before = (server.runs / "m1" / "pages.jsonl").read_bytes()
    indexed_before = _indexed(server.runs, "m1")
    status, answer = server.call("POST", "/api/crawls/m1/stop", {"now": "yes"})
    assert status == 400
    status, answer = server.call("POST", "/api/crawls/m1/resume", {"extra": 1})
    assert (status, answer["field"]) == (400, "extra")
    status, answer = server.call("POST", "/api/crawls/m1/stop", {"later": True})
    assert (status, answer["field"]) == (400, "later")
    for path in ("/api/crawls/m1/stop", "/api/crawls/m1/pause", "/api/crawls/m1/params"):
        status, answer = server.call("POST", path, raw=b'{"now": tru')
        assert status == 400, (path, answer)
        assert answer["error"].startswith("malformed JSON"), (path, answer)
        assert "\n" not in answer["error"]
    # nothing lost: the crawl's pages and its index as they were
    assert (server.runs / "m1" / "pages.jsonl").read_bytes() == pages_before
    assert _indexed(server.runs, "m1") == indexed_before
    assert server.state("m1") == "finished"


def test_pause_resume_and_a_server_killed_with_its_crawl(
    tmp_path: Path, sample_replay: ReplayProcess
) -> None:
    runs = tmp_path / "runs"
    srv = Server(runs).start()
    try:
        body = _request("slow", sample_replay, max_pages=45)
        body["settings"]["fetch"]["delay"] = 0.3  # slow enough to be caught running
        assert srv.call("POST", "/api/crawls", body)[0] == 201
        run = runs / "slow"
        wait_for(lambda: (run / "pages.jsonl").exists() and len(_page_urls(run)) >= 3, what="pages")
        assert srv.call("POST", "/api/crawls/slow/pause", {})[0] == 200
        srv.wait_state("slow", "paused")
        assert srv.call("POST", "/api/crawls/slow/pause", {})[0] == 409
        assert srv.call("POST", "/api/crawls/slow/resume", {})[0] == 200
        srv.wait_state("slow", "running")
        at = len(_page_urls(run))
        wait_for(lambda: len(_page_urls(run)) > at + 2, what="more pages")  # its loop runs
        status, answer = srv.call("POST", "/api/crawls/slow/params", {"no_such_param": 1})
        assert status == 400, answer  # refused by the crawl's strategy, as `control` is
        # the server and its crawl die at once, as in a power cut
        pid = lock_holder(run)
        assert pid is not None
        srv.stop("kill")
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: lock_holder(run) is None, what="the lock to go")
    finally:
        srv.stop("kill")
    with Server(runs) as again:
        assert again.state("slow") in ("running", "finished")  # resumed at start
        again.wait_state("slow", "finished", timeout=180)
        urls = _page_urls(run)
        assert len(urls) == 45
        assert len(set(urls)) == 45  # nothing twice
        _, found = again.call("GET", "/api/crawls/slow/search?q=cat%20OR%20news%20OR%20the&limit=200")
        assert {r["url"] for r in found["results"]} <= set(urls)
        # the index, updated before, during and after the kill, holds each page once
        assert sorted(_indexed(runs, "slow")) == sorted(urls)


def test_a_server_on_a_port_taken_says_so_and_starts_no_crawl(
    tmp_path: Path, sample_replay: ReplayProcess
) -> None:
    # it used to resume the crawls killed with the last server first, then fail to bind
    # (exit 1, aiohttp's own line) and leave them interrupted in their start-up
    runs = tmp_path / "runs"
    srv = Server(runs).start()
    try:
        body = _request("slow", sample_replay, max_pages=45)
        body["settings"]["fetch"]["delay"] = 0.3
        assert srv.call("POST", "/api/crawls", body)[0] == 201
        run = runs / "slow"
        wait_for(lambda: (run / "pages.jsonl").exists() and len(_page_urls(run)) >= 3, what="pages")
        pid = lock_holder(run)
        assert pid is not None
        srv.stop("kill")
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: lock_holder(run) is None, what="the lock to go")
    finally:
        srv.stop("kill")
    log = runs / ".service" / "slow" / "crawl.log"
    before = log.read_bytes()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "focuscrawl", "serve", str(runs), "--port", str(port)],
                              capture_output=True, text=True, timeout=120, env=srv.env)  # fmt: skip
    assert done.returncode == 2, done
    assert done.stdout == ""  # no "resumed slow"
    assert done.stderr == f"focuscrawl: serve: cannot listen on 127.0.0.1:{port}: Address already in use " \
                          "(another program listens there: --port another)\n"  # fmt: skip
    assert log.read_bytes() == before  # no crawl process was started
    assert lock_holder(run) is None
