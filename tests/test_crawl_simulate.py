"""Offline simulation against live crawls through the replay server.

``simulate`` reads the archives through the replay web's answer function
(:class:`ArchiveTransport`) with a virtual clock; a live crawl goes through
``focuscrawl replay`` over sockets. Both must answer, fetch and record alike.
"""

from __future__ import annotations

import collections
import dataclasses
import io
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.api import crawl
from focuscrawl.cli import main as cli_main
from focuscrawl.clock import VirtualClock
from focuscrawl.demo import WEBKB_SEEDS
from focuscrawl.fetch.aiohttp_fetcher import AiohttpFetcher
from focuscrawl.fetch.factory import build_fetcher
from focuscrawl.replay.archive import ArchiveIndex, iter_responses
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.replay.server import ReplayServer
from focuscrawl.settings import FetchSettings, Settings
from focuscrawl.types import FetchResult
from tests.conftest import shared_file

KEYWORDS = {"name": "keyword", "keywords": ["course", "syllabus", "homework", "lecture"]}
CAT_KEYWORDS = {"name": "keyword", "keywords": ["cat", "cats", "kitten"]}
RUN_FILES = {"crawl.db", "corpus.warc.gz", "pages.jsonl", "decisions.jsonl", "run.json", "run.lock"}


# --------------------------------------------------------------------------- helpers


def read_pages(run_dir: Path) -> list[dict[str, Any]]:
    with open(run_dir / "pages.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


# Fields that depend on the order pages are fetched in, besides the time stamp:
# the first parent to find a URL and the score merged from its parents so far.
# Equal in equal orders (the lead's determinism work), not in any order.
ORDER_FIELDS = frozenset({"fetched_at", "parent", "depth", "score"})


def timeless(pages: Sequence[dict[str, Any]], drop: frozenset[str] = ORDER_FIELDS) -> list[str]:
    """The records without their time stamps (and order-dependent fields), sorted."""
    return sorted(json.dumps({k: v for k, v in p.items() if k not in drop}) for p in pages)


def warc_exchanges(run_dir: Path) -> list[tuple[str, str, str, str, bytes]]:
    """(type, URL, status or request line, headers, payload) of every record, sorted."""
    out = []
    with open(run_dir / "corpus.warc.gz", "rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type not in ("request", "response"):
                continue
            http = record.http_headers
            out.append(
                (
                    record.rec_type,
                    record.rec_headers.get_header("WARC-Target-URI"),
                    http.statusline if http is not None else "",
                    json.dumps(http.headers if http is not None else []),
                    record.content_stream().read(),
                )
            )
    return sorted(out)


def both_runs(
    tmp_path: Path,
    archives: Sequence[Path],
    replay: ReplayProcess,
    seeds: Sequence[str],
    **kwargs: Any,
) -> tuple[Path, Path]:
    """The same crawl twice: live through the replay server in the ordered schedule
    (simulate's default), and simulated."""
    live, sim = tmp_path / "live", tmp_path / "sim"
    crawl(list(seeds), live, proxy=replay.proxy_url, proxy_ca=replay.ca_cert_path,
          **{"schedule": "ordered", **kwargs})  # fmt: skip
    crawl(list(seeds), sim, archives=list(archives), **kwargs)
    return live, sim


def assert_same_run_directory(live: Path, sim: Path) -> None:
    assert {p.name for p in live.iterdir()} == {p.name for p in sim.iterdir()} == RUN_FILES
    live_pages, sim_pages = read_pages(live), read_pages(sim)
    assert len(live_pages) > 0
    assert timeless(live_pages) == timeless(sim_pages)
    assert warc_exchanges(live) == warc_exchanges(sim)
    live_run = json.loads((live / "run.json").read_text())
    sim_run = json.loads((sim / "run.json").read_text())
    assert live_run.keys() == sim_run.keys()
    assert live_run["summary"]["counters"] == sim_run["summary"]["counters"]
    assert live_run["summary"]["fetched"] == sim_run["summary"]["fetched"]


# --------------------------------------------------------------------------- one exchange


def comparable(result: FetchResult) -> dict[str, Any]:
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(FetchResult)}
    del fields["fetched_at"], fields["elapsed"]
    return fields


async def fetch_both(
    archives: Sequence[Path], urls: Sequence[str], **fetch: Any
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each URL fetched live through an in-process replay server and simulated."""
    index = ArchiveIndex.build(archives)
    settings = Settings(fetch=FetchSettings(delay=0.0, retries=0, **fetch))
    simulated = build_fetcher(settings, archives=archives, clock=VirtualClock())
    pairs = []
    async with ReplayServer(list(archives), index=index) as server:
        live_settings = FetchSettings(
            delay=0.0, retries=0, proxy=server.proxy_url, tls_ca_file=str(server.ca_cert_path),
            **fetch,
        )  # fmt: skip
        async with AiohttpFetcher(live_settings) as live, simulated:
            for url in urls:
                pairs.append(
                    (comparable(await live.fetch(url)), comparable(await simulated.fetch(url)))
                )
    return pairs


async def test_archive_transport_answers_as_the_replay_server(sample_archive: Path) -> None:
    urls = [r.url for r in iter_responses(sample_archive)]
    urls += [
        "http://www.daily-news.example/no/such/page.html",  # 404 on a known host
        "http://no-such-host.example/",  # 502
        "https://no-such-host.example/",  # CONNECT refused: error "dns"
        "http://WWW.Daily-News.example:80/pets",  # a redirect, spelled otherwise
        "http://shop.example/private/x.html",  # refused by the archived robots.txt
        "http://10.0.0.1/",  # refused by the address policy in both
    ]
    pairs = await fetch_both([sample_archive], urls)
    for (live, sim), url in zip(pairs, urls, strict=True):
        assert live == sim, url
    statuses = collections.Counter((live["status"], live["error"]) for live, _ in pairs)
    # CONNECT refused, and the unknown host's robots.txt answered 502 by the replay web:
    # no such host (its Proxy-Status: dns_error), not a robots.txt saying no (issue 26),
    # nor a proxy failing (before b46: "proxy", live through the replay server and simulated)
    assert statuses[(0, "dns")] == 2
    assert statuses[(0, "proxy")] == 0
    assert statuses[(0, "blocked-address")] == 1
    # shop.example/private/ (archived and not) disallowed
    assert statuses[(0, "robots")] == 2
    assert statuses[(404, None)] == 1
    assert statuses[(200, None)] >= 40
    # without robots.txt the unknown host's 502 itself comes back
    unknown = ["http://no-such-host.example/", "http://no-such-host.example/robots.txt"]
    pairs = await fetch_both([sample_archive], unknown, respect_robots=False)
    assert [(live["status"], sim["status"]) for live, sim in pairs] == [(502, 502), (502, 502)]
    assert all(live == sim for live, sim in pairs)


async def test_archive_transport_https_and_charsets_as_the_replay_server() -> None:
    multi = shared_file("multilingual-dev.warc.gz")
    webkb = shared_file("webkb.warc.gz")
    urls = [r.url for r, _ in zip(iter_responses(multi), range(40), strict=False)]
    urls += [r.url for r, _ in zip(iter_responses(webkb), range(20), strict=False)]
    assert any(u.startswith("https://") for u in urls)
    pairs = await fetch_both([webkb, multi], urls, max_body_size=50_000)
    for (live, sim), url in zip(pairs, urls, strict=True):
        assert live == sim, url
    assert any(live["truncated"] for live, _ in pairs) or all(
        len(live["body"]) < 50_000 for live, _ in pairs
    )


# --------------------------------------------------------------------------- whole crawls


def test_simulate_sample_web_as_live_bfs(
    sample_archive: Path, sample_replay: ReplayProcess, tmp_path: Path
) -> None:
    # the whole sample web (the budget is larger): the same pages whatever the order
    live, sim = both_runs(
        tmp_path, [sample_archive], sample_replay, SAMPLE_SEEDS,
        strategy="bfs", max_pages=500, delay=0.0, concurrency=16,
    )  # fmt: skip
    assert_same_run_directory(live, sim)
    assert sum(p["status"] == 200 for p in read_pages(sim)) >= 50


def test_simulate_sample_web_as_live_best_first(
    sample_archive: Path, sample_replay: ReplayProcess, tmp_path: Path
) -> None:
    live, sim = both_runs(
        tmp_path, [sample_archive], sample_replay, SAMPLE_SEEDS,
        strategy="best-first", model=CAT_KEYWORDS, max_pages=500, delay=0.0, concurrency=16,
    )  # fmt: skip
    assert_same_run_directory(live, sim)


@pytest.mark.parametrize(
    ("strategy", "model"), [("bfs", None), ("best-first", KEYWORDS)], ids=["bfs", "best-first"]
)
def test_simulate_webkb_fetches_what_live_fetches(
    webkb_replay: ReplayProcess, tmp_path: Path, strategy: str, model: dict[str, Any] | None
) -> None:
    # Depth 1 from the four department pages, no page budget: which URLs are
    # fetched does not depend on the order they are fetched in.
    live, sim = both_runs(
        tmp_path, [shared_file("webkb.warc.gz")], webkb_replay, WEBKB_SEEDS,
        strategy=strategy, model=model, max_pages=0, delay=0.0, concurrency=16,
        scope={"max_depth": 1},
    )  # fmt: skip
    fetched = {(p["url"], p["status"], p["error"]) for p in read_pages(sim)}
    assert fetched == {(p["url"], p["status"], p["error"]) for p in read_pages(live)}
    assert len(fetched) > 50
    assert_same_run_directory(live, sim)


@pytest.mark.parametrize(
    ("strategy", "model"),
    [  # best-first in the full run only: a live crawl of WebKB and its simulation
        pytest.param("bfs", None, id="bfs"),
        pytest.param("best-first", KEYWORDS, id="best-first", marks=pytest.mark.slow),
    ],
)
def test_simulate_webkb_same_order_as_live(
    webkb_replay: ReplayProcess, tmp_path: Path, strategy: str, model: dict[str, Any] | None
) -> None:
    # issue 6 item 2: at concurrency 16, with a budget, the very same URL order
    live, sim = both_runs(
        tmp_path, [shared_file("webkb.warc.gz")], webkb_replay, WEBKB_SEEDS,
        strategy=strategy, model=model, max_pages=300, delay=0.0, concurrency=16,
    )  # fmt: skip
    sim_pages, live_pages = read_pages(sim), read_pages(live)
    assert [p["url"] for p in sim_pages] == [p["url"] for p in live_pages]
    stamps = frozenset({"fetched_at"})
    assert [timeless([p], stamps) for p in sim_pages] == [timeless([p], stamps) for p in live_pages]


# --------------------------------------------------------------------------- simulation itself


def test_simulation_keeps_politeness_in_virtual_time(sample_archive: Path, tmp_path: Path) -> None:
    # the default 1 s per host: kept between the virtual stamps, without sleeping
    crawl(list(SAMPLE_SEEDS), tmp_path / "run", archives=[sample_archive], max_pages=30)
    pages = read_pages(tmp_path / "run")
    assert len(pages) == 30
    by_host: dict[str, list[float]] = collections.defaultdict(list)
    for page in pages:
        by_host[page["url"].split("/")[2]].append(page["fetched_at"])
    gaps = [b - a for times in by_host.values() for a, b in itertools.pairwise(sorted(times))]
    assert gaps
    assert min(gaps) >= 1.0 - 1e-6


def _tiny_archive(path: Path, pages: dict[str, bytes]) -> Path:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body in pages.items():
            http = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )  # fmt: skip
            writer.write_record(
                writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http
                )
            )
    return path


def test_simulation_allows_archived_hosts_only(tmp_path: Path) -> None:
    # an intranet archive: its own private hosts are crawled, other private ones refused
    archive = _tiny_archive(
        tmp_path / "intranet.warc.gz",
        {
            "http://10.1.2.3/": b'<html><a href="/b">b</a> <a href="http://10.9.9.9/">x</a>'
            b' <a href="http://localhost/">y</a></html>',
            "http://10.1.2.3/b": b"<html>b</html>",
        },
    )
    crawl(["http://10.1.2.3/"], tmp_path / "run", archives=[archive], max_pages=10, delay=0.0)
    pages = {p["url"]: (p["status"], p["error"]) for p in read_pages(tmp_path / "run")}
    assert pages == {"http://10.1.2.3/": (200, None), "http://10.1.2.3/b": (200, None)}
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["summary"]["counters"]["blocked-address"] == 2


def test_cli_simulate(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = cli_main([
        "simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS,
        "--out", str(out), "--max-pages", "12", "--quiet",
    ])  # fmt: skip
    assert code == 0
    assert len(read_pages(out)) == 12
    assert "crawled 12 URLs" in capsys.readouterr().out
    missing = tmp_path / "missing.warc.gz"
    code = cli_main([
        "simulate", "--archive", str(missing), "--seeds", *SAMPLE_SEEDS, "--out", str(tmp_path / "x"),
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == f"focuscrawl: simulate: {missing}: no such archive"
    assert not (tmp_path / "x").exists()
