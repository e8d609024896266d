"""The replay web: WARC archives served on 127.0.0.1 as an HTTP forward proxy."""

from __future__ import annotations

import argparse
import asyncio
import gzip
import itertools
import signal
import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDictProxy
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.commands import replay as cli
from focuscrawl.exceptions import ConfigError, FocuscrawlError
from focuscrawl.replay.archive import ArchiveIndex, iter_responses, load_labels
from focuscrawl.replay.faults import Fault, FaultPlan
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.requestlog import LogEntry, min_host_interval, read_log
from focuscrawl.replay.sample import build_sample_archive, labels_path_for
from focuscrawl.replay.server import ReplayServer
from tests.conftest import TESTWEB

WEBKB = TESTWEB / "webkb.warc.gz"
MULTI = TESTWEB / "multilingual-dev.warc.gz"


@pytest.fixture(scope="module")
def testweb_index() -> ArchiveIndex:
    if not TESTWEB.is_dir():
        pytest.skip("../shared/testweb is absent")
    return ArchiveIndex.build([WEBKB, MULTI])


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample_archive(tmp_path_factory.mktemp("sample"))


@pytest.fixture
async def web(testweb_index: ArchiveIndex, tmp_path: Path) -> AsyncIterator[ReplayServer]:
    async with ReplayServer(
        [WEBKB, MULTI], log_path=tmp_path / "log.tsv", index=testweb_index
    ) as srv:
        yield srv


async def fetch(
    server: ReplayServer, url: str, limit: float = 30, **kwargs: Any
) -> tuple[int, CIMultiDictProxy[str], bytes]:
    context = ssl.create_default_context(cafile=str(server.ca_cert_path))
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=limit)) as session,
        session.get(url, proxy=server.proxy_url, ssl=context, **kwargs) as response,
    ):
        return response.status, response.headers, await response.read()


async def raw_exchange(server: ReplayServer, data: bytes) -> bytes:
    """Send raw bytes to the server and read until it closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    await writer.wait_closed()
    return answer


def first_records(path: Path, n: int) -> list[Any]:
    return list(itertools.islice(iter_responses(path), n))


async def test_archived_pages_arrive_byte_identical(web: ReplayServer) -> None:
    for record in first_records(WEBKB, 3):
        status, headers, body = await fetch(web, record.url)
        assert status == record.status == 200
        assert body == record.body
        assert len(body) > 0
        assert headers["Content-Type"] == record.content_type
        assert headers["Content-Length"] == str(len(record.body))
        assert headers["Date"] == record.header("Date")


async def test_euc_kr_page_through_https_tunnel_is_byte_identical(
    web: ReplayServer, testweb_index: ArchiveIndex
) -> None:
    labels = load_labels(MULTI.with_name("multilingual-dev.labels.jsonl"))
    url = next(
        u for u, lab in labels.items() if lab["lang_dir"] == "ko" and lab["lang_detected"] == "ko"
    )
    record = testweb_index.get(url)
    assert record is not None
    assert url.startswith("https://")
    assert "euc-kr" in record.content_type.lower()
    with pytest.raises(UnicodeDecodeError):
        record.body.decode("utf-8")  # really not UTF-8: a re-encoding would show
    status, headers, body = await fetch(web, url)
    assert (status, body) == (200, record.body)
    assert headers["Content-Type"] == record.content_type


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("http://www.cs.cornell.edu/no/such/page.html", 404),
        ("http://www.cs.cornell.edu/robots.txt", 404),
        ("http://no-such-host.example/", 502),
        ("https://httpd.apache.org/docs/2.4/xx/nothing.html", 404),
        # a known host asked with the other scheme: a different URL, not the twin
        ("http://httpd.apache.org/docs/2.4/ko/bind.html", 404),
    ],
    ids=["unknown-path", "robots-absent", "unknown-host", "https-unknown-path", "no-scheme-twin"],
)
async def test_missing_urls(web: ReplayServer, url: str, status: int) -> None:
    got, headers, body = await fetch(web, url)
    assert got == status
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert body.startswith(f"{status} ".encode())


async def test_connect_to_unknown_host_is_502(web: ReplayServer) -> None:
    with pytest.raises(aiohttp.ClientHttpProxyError) as info:
        await fetch(web, "https://no-such-host.example/")
    assert info.value.status == 502


async def test_host_case_and_default_port_are_normalised(web: ReplayServer) -> None:
    record = first_records(WEBKB, 1)[0]
    assert record.url.startswith("http://cs.cornell.edu/")
    twin = record.url.replace("http://cs.cornell.edu/", "http://CS.Cornell.EDU:80/")
    request = f"GET {twin} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    answer = await raw_exchange(web, request)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert body == record.body


async def test_origin_form_keep_alive_head_and_plain_https(web: ReplayServer) -> None:
    record = first_records(WEBKB, 1)[0]
    path = record.url.removeprefix("http://cs.cornell.edu")
    https_url = "https://httpd.apache.org/docs/2.4/ko/bind.html"
    https_record = web.index.get(https_url)
    assert https_record is not None
    request = (
        f"GET {path} HTTP/1.1\r\nHost: cs.cornell.edu\r\n\r\n"
        f"HEAD {path} HTTP/1.1\r\nHost: cs.cornell.edu\r\n\r\n"
        f"GET {https_url} HTTP/1.1\r\nConnection: close\r\n\r\n"
    ).encode()
    answer = await raw_exchange(web, request)
    n = len(record.body)
    first = answer.index(b"\r\n\r\n") + 4
    assert answer[first : first + n] == record.body
    rest = answer[first + n :]
    second = rest.index(b"\r\n\r\n") + 4
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n")
    assert f"Content-Length: {n}\r\n".encode() in rest[:second]
    third = rest[second:]  # HEAD had no body: the next answer follows at once
    assert third.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Connection: close\r\n" in third
    assert third.endswith(https_record.body)


@pytest.mark.parametrize(
    "request_bytes",
    [b"NONSENSE\r\n\r\n", b"GET relative HTTP/1.1\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\n\r\n"],
    ids=["garbage", "bad-target", "no-host"],
)
async def test_bad_requests_get_400(web: ReplayServer, request_bytes: bytes) -> None:
    answer = await raw_exchange(web, request_bytes)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")


async def test_request_log(web: ReplayServer) -> None:
    record = first_records(WEBKB, 1)[0]
    await fetch(web, record.url)
    await fetch(web, "http://cs.cornell.edu/missing?q=1")
    await fetch(web, "http://no-such-host.example/x")
    entries = read_log(web.log_path or Path())
    assert [(e.method, e.host, e.path, e.status, e.nbytes, e.note) for e in entries] == [
        (
            "GET",
            "cs.cornell.edu",
            record.url.removeprefix("http://cs.cornell.edu"),
            200,
            len(record.body),
            "-",
        ),
        (
            "GET",
            "cs.cornell.edu",
            "/missing?q=1",
            404,
            len(b"404 Not Found: not in the archive\n"),
            "-",
        ),
        (
            "GET",
            "no-such-host.example",
            "/x",
            502,
            len(b"502 Bad Gateway: unknown host no-such-host.example\n"),
            "-",
        ),
    ]
    assert entries[0].time <= entries[1].time <= entries[2].time
    assert all(e.client > 0 for e in entries)


def test_min_host_interval_on_a_hand_made_log(tmp_path: Path) -> None:
    log = tmp_path / "log.tsv"
    log.write_text(
        "100.5\t1\tGET\ta.org\t/1\t200\t10\t-\n"
        "101.0\t1\tGET\tb.org\t/1\t200\t10\t-\n"
        "103.0\t2\tGET\ta.org\t/2\t404\t5\t-\n"
        "102.0\t3\tGET\ta.org\t/3\t0\t0\treset\n"
        "110.0\t3\tGET\tc.org\t/\t200\t1\t-\n"
        "101.25\t4\tGET\tb.org\t/2\t200\t10\t-\n"
    )
    entries = read_log(log)
    assert [e.time for e in entries] == [100.5, 101.0, 101.25, 102.0, 103.0, 110.0]
    assert entries[3] == LogEntry(102.0, 3, "GET", "a.org", "/3", 0, 0, "reset")
    # a.org: 100.5, 102.0, 103.0 -> gaps 1.5, 1.0; b.org: 101.0, 101.25 -> 0.25; c.org once
    assert min_host_interval(entries) == {"a.org": 1.0, "b.org": 0.25}


def test_bad_log_line_is_a_one_line_error(tmp_path: Path) -> None:
    log = tmp_path / "log.tsv"
    log.write_text("not a log line\n")
    with pytest.raises(FocuscrawlError, match=r"log.tsv:1: not a request-log line"):
        read_log(log)


def served(sample: Path, tmp_path: Path, plan: FaultPlan) -> ReplayServer:
    return ReplayServer([sample], log_path=tmp_path / "log.tsv", faults=plan)


@pytest.fixture
async def sample_web(sample: Path, tmp_path: Path) -> AsyncIterator[ReplayServer]:
    async with ReplayServer([sample], log_path=tmp_path / "log.tsv") as server:
        yield server


CAT = "http://cats.example/siamese.html"


@pytest.mark.parametrize(
    ("kind", "retry_after"), [("500", None), ("503", "2"), ("429", "2")], ids=["500", "503", "429"]
)
async def test_status_faults(
    sample: Path, tmp_path: Path, kind: str, retry_after: str | None
) -> None:
    plan = FaultPlan.parse([], [f"cats.example/siam={kind}:retry-after=2"])
    async with served(sample, tmp_path, plan) as server:
        status, headers, _ = await fetch(server, CAT)
        other, _, _ = await fetch(server, "http://cats.example/persian.html")
    assert (status, headers.get("Retry-After"), other) == (int(kind), retry_after, 200)
    notes = [(e.path, e.status, e.note) for e in read_log(tmp_path / "log.tsv")]
    assert notes == [("/siamese.html", int(kind), kind), ("/persian.html", 200, "-")]


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("reset", aiohttp.ClientOSError),
        ("timeout", asyncio.TimeoutError),
        ("truncate", aiohttp.ClientPayloadError),
    ],
    ids=["reset", "timeout", "truncate"],
)
async def test_failing_faults(
    sample: Path, tmp_path: Path, kind: str, error: type[BaseException]
) -> None:
    plan = FaultPlan.parse([], [f"*={kind}"])
    async with served(sample, tmp_path, plan) as server:
        with pytest.raises(error):
            # a fresh connection each time: aiohttp retries a reset on a reused one
            await fetch(server, CAT, limit=1.0, headers={"Connection": "close"})
    assert [(e.status, e.note) for e in read_log(tmp_path / "log.tsv")][:1] == [
        (200 if kind == "truncate" else 0, kind)
    ]


async def test_slow_fault_still_delivers_the_whole_body(sample: Path, tmp_path: Path) -> None:
    record = next(r for r in iter_responses(sample) if r.url == CAT)
    plan = FaultPlan.parse([], ["cats.example=slow:chunk=100:pause=0.001"])
    async with served(sample, tmp_path, plan) as server:
        status, _, body = await fetch(server, CAT)
    assert (status, body) == (200, record.body)
    assert [e.note for e in read_log(tmp_path / "log.tsv")] == ["slow"]


async def test_first_n_requests_fail_then_retries_succeed(sample: Path, tmp_path: Path) -> None:
    plan = FaultPlan.parse([], ["*=503:first=2"])
    async with served(sample, tmp_path, plan) as server:
        statuses = [(await fetch(server, CAT))[0] for _ in range(3)]
        other = (await fetch(server, "http://cats.example/persian.html"))[0]
    assert statuses == [503, 503, 200]
    assert other == 503  # counted per URL: this one is on its first try


async def test_latency_delays_only_its_host(sample: Path, tmp_path: Path) -> None:
    plan = FaultPlan.parse(["cats.example=30"], [])
    async with served(sample, tmp_path, plan) as server:
        with pytest.raises(asyncio.TimeoutError):
            await fetch(server, CAT, limit=0.5)
        status, _, _ = await fetch(server, "http://shop.example/")
    assert status == 200


def test_fault_plan_rules() -> None:
    plan = FaultPlan.parse(["*=0.5", "*.example=1", "cats.example=2"], ["*/a=500", "*=reset:p=0"])
    assert [plan.latency_for(h) for h in ("cats.example", "shop.example", "x.org")] == [
        2.0,
        1.0,
        0.5,
    ]
    hit = plan.pick("x.org", "/abc")
    assert hit is not None
    assert hit.kind == "500"
    assert plan.pick("x.org", "/b") is None  # p=0 never fires


def test_probabilistic_faults_are_reproducible() -> None:
    def fired(seed: int) -> list[bool]:
        plan = FaultPlan.parse([], ["*=reset:0.5"], seed=seed)
        return [plan.pick("a.org", f"/{i}") is not None for i in range(200)]

    assert fired(1) == fired(1)
    assert fired(1) != fired(2)
    assert 60 < sum(fired(1)) < 140


@pytest.mark.parametrize(
    "spec",
    ["*=boom", "=500", "*=500:p=2", "*=500:first=x", "*=500:bogus=1", "a.org/[=500", "a b=500"],
    ids=["kind", "no-host", "prob-range", "first-nan", "option", "regex", "space"],
)
def test_bad_fault_specs(spec: str) -> None:
    with pytest.raises(ConfigError):
        Fault.parse(spec)


@pytest.mark.parametrize("spec", ["a.org", "a.org=x", "a.org=-1"], ids=["no-eq", "nan", "negative"])
def test_bad_latency_specs(spec: str) -> None:
    with pytest.raises(ConfigError):
        FaultPlan.parse([spec])


def test_sample_archive_is_reproducible_and_labelled(sample: Path, tmp_path: Path) -> None:
    again = build_sample_archive(tmp_path / "again.warc.gz")
    assert again.read_bytes() == sample.read_bytes()
    records = list(iter_responses(sample))
    labels = load_labels(labels_path_for(sample))
    assert len(records) == 57  # 55 pages + a 301 + robots.txt
    assert len(labels) == 55
    # pets section, 2 pet news, cats index + 14 cat pages + ko + ja, cat food, private cat page
    assert sum(label["relevant"] for label in labels.values()) == 22
    assert set(labels) <= {r.url for r in records}


@pytest.mark.parametrize(
    ("url", "status", "header", "value"),
    [
        ("http://cats.example/ko/goyangi.html", 200, "Content-Type", "text/html; charset=EUC-KR"),
        ("http://cats.example/ja/neko.html", 200, "Content-Type", "text/html; charset=Shift_JIS"),
        ("http://shop.example/robots.txt", 200, "Content-Type", "text/plain"),
        (
            "http://www.daily-news.example/pets",
            301,
            "Location",
            "http://www.daily-news.example/sections/pets.html",
        ),
        ("http://cats.example/robots.txt", 404, "Content-Type", "text/plain; charset=utf-8"),
    ],
    ids=["euc-kr", "shift-jis", "robots", "redirect", "robots-absent"],
)
async def test_sample_web_served(
    sample_web: ReplayServer, sample: Path, url: str, status: int, header: str, value: str
) -> None:
    got, headers, body = await fetch(sample_web, url, allow_redirects=False)
    assert (got, headers[header]) == (status, value)
    if status != 404:
        assert body == next(r.body for r in iter_responses(sample) if r.url == url)


def test_replay_process(sample: Path, tmp_path: Path) -> None:
    log = tmp_path / "proc.tsv"
    with ReplayProcess(
        [sample],
        log_path=log,
        faults_args=["--fault", "shop.example=503"],
        stop_signal=signal.SIGINT,
    ) as proc:
        assert proc.urls == 57
        assert proc.ca_cert_path.is_file()
        pid = proc.pid

        async def two() -> tuple[int, int]:
            context = ssl.create_default_context(cafile=str(proc.ca_cert_path))
            async with aiohttp.ClientSession() as session:
                async with session.get(CAT, proxy=proc.proxy_url) as first:
                    await first.read()
                async with session.get(
                    "https://shop.example/", proxy=proc.proxy_url, ssl=context
                ) as second:
                    return first.status, second.status

        assert asyncio.run(two()) == (200, 503)
    assert pid > 0
    assert proc.pid == 0
    assert proc.returncode == 0  # Ctrl-C (SIGINT) stops the server cleanly
    assert [(e.host, e.path, e.status) for e in read_log(log)] == [
        ("cats.example", "/siamese.html", 200),
        ("shop.example", "/", 503),
    ]


def test_replay_process_reports_a_bad_archive(tmp_path: Path) -> None:
    with (
        pytest.raises(FocuscrawlError, match="no such archive"),
        ReplayProcess([tmp_path / "none.warc.gz"]),
    ):
        pass


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ARCHIVE", "--host", "0.0.0.0"], "must be a loopback address"),
        (["missing.warc.gz"], "no such archive"),
        (["ARCHIVE", "--latency", "x"], "bad latency"),
        (["ARCHIVE", "--port", "70000"], "--port must be"),
    ],
    ids=["public-host", "missing-archive", "bad-latency", "bad-port"],
)
def test_cli_errors(
    sample: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    argv = [str(sample) if a == "ARCHIVE" else a for a in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_cli_is_wired_for_python_m() -> None:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["a.warc.gz", "--port", "0", "--fault", "*=503", "--latency", "*=1"])
    assert (args.port, args.fault, args.latency, args.host) == (0, ["*=503"], ["*=1"], "127.0.0.1")


def warcio_entries(path: Path) -> dict[str, tuple[str, int]]:
    entries: dict[str, tuple[str, int]] = {}
    with open(path, "rb") as fh:
        iterator = ArchiveIterator(fh)
        for record in iterator:
            if record.rec_type == "response":
                url = record.rec_headers.get_header("WARC-Target-URI")
                entries.setdefault(url, (str(path), iterator.get_record_offset()))
    return entries


@pytest.mark.parametrize("which", ["sample", "webkb"], ids=["sample", "webkb"])
def test_fast_index_scan_agrees_with_warcio(sample: Path, which: str) -> None:
    if which == "webkb" and not WEBKB.is_file():
        pytest.skip("../shared/testweb is absent")
    path = sample if which == "sample" else WEBKB
    index = ArchiveIndex.build([path])
    assert len(index) == (57 if which == "sample" else 8213)
    assert index.entries == warcio_entries(path)


def test_uncompressed_warc_is_indexed_and_served(sample: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.warc"
    plain.write_bytes(gzip.decompress(sample.read_bytes()))
    index = ArchiveIndex.build([plain])
    gz_index = ArchiveIndex.build([sample])
    assert sorted(index.entries) == sorted(gz_index.entries)
    record, gz_record = index.get(CAT), gz_index.get(CAT)
    assert record is not None
    assert gz_record is not None
    assert record.body == gz_record.body
    assert record.reason == "OK"


@pytest.fixture
def archive_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """The archive module's warnings, whatever an earlier CLI test did to the package's
    logger (its level, propagate = False)."""
    import logging

    logger = logging.getLogger("focuscrawl.replay.archive")
    caplog.set_level(logging.WARNING, logger=logger.name)
    logger.addHandler(caplog.handler)
    try:
        yield caplog
    finally:
        logger.removeHandler(caplog.handler)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        pytest.param(b"", "no response record in it (an empty or cut-short archive)", id="empty"),
        pytest.param(b'{"url": "http://a.example/", "type": "course", "university": "misc"}\n' * 50, "not a WARC archive (it starts with b'{\"url\"", id="a-label-file"),
    ],
)  # fmt: skip
def test_a_file_that_holds_no_warc_record_is_one_line(
    data: bytes, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before (b44): an empty archive was an empty web (simulate: "no page could be fetched:
    # proxy"); a label file given as the archive printed warcio's warning for each of its
    # lines (12,000 lines for webkb.labels.jsonl) and was an empty web too
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(data)
    with pytest.raises(FocuscrawlError) as caught:
        ArchiveIndex.build([bad])
    assert said in str(caught.value)
    assert capsys.readouterr().err == ""


def test_a_cut_short_archive_says_so_and_serves_its_whole_records(
    sample: Path, tmp_path: Path, archive_log: pytest.LogCaptureFixture
) -> None:
    # before (b44): an archive cut short (a download stopped half-way) was read to its last
    # whole record without a word: a simulation over a third of the web
    whole = ArchiveIndex.build([sample])
    last = max(offset for _, offset in whole.entries.values())
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(sample.read_bytes()[: last + 40])
    index = ArchiveIndex.build([cut])
    assert sorted(index.entries.values()) == sorted((str(cut), o) for _, o in whole.entries.values() if o < last)
    assert f"cut.warc.gz is cut short: the record at byte {last} ends past the file's end; the {len(index)} response records before it are used" in archive_log.text


@pytest.mark.parametrize("compressed", [True, False], ids=["gzip", "plain"])
def test_a_url_archived_as_a_revisit_is_answered_with_the_record_it_refers_to(compressed: bool, tmp_path: Path) -> None:
    # before (b44): a deduplicating crawler's revisit record (the same payload as another
    # URL's) was no page: simulate and replay answered its URL 404
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp_path / ("dedup.warc.gz" if compressed else "dedup.warc")
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=compressed)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://a.example/one", "response",
                                                      payload=io.BytesIO(b"<p>same</p>"), http_headers=http))  # fmt: skip
        writer.write_record(writer.create_revisit_record(
            "http://a.example/two", digest="sha1:X", refers_to_uri="http://a.example/one",
            refers_to_date="2020-01-01T00:00:00Z", http_headers=http))  # fmt: skip
        writer.write_record(writer.create_revisit_record(
            "http://a.example/gone", digest="sha1:Y", refers_to_uri="http://a.example/none",
            refers_to_date="2020-01-01T00:00:00Z", http_headers=http))  # fmt: skip
    index = ArchiveIndex.build([path])
    two = index.get("http://a.example/two")
    assert two is not None
    assert (two.status, two.body) == (200, b"<p>same</p>")
    assert "http://a.example/gone" not in index  # what it refers to is not archived


def test_a_url_labelled_twice_differently_is_reported(tmp_path: Path, archive_log: pytest.LogCaptureFixture) -> None:
    # before (b44): the last line silently won; a label file merged from two judges (one
    # saying course, the other student) changed the figures without a word
    path = tmp_path / "l.jsonl"
    path.write_text('{"url": "http://a/", "t": "x"}\n{"url": "http://a/", "t": "y"}\n'
                    '{"url": "http://b/", "t": "x"}\n{"url": "http://b/", "t": "x"}\n')  # fmt: skip
    labels = load_labels(path)
    assert (len(labels), labels["http://a/"]["t"]) == (2, "y")
    assert "l.jsonl: 1 URLs labelled twice with different labels, the last line's used (the first: http://a/)" in archive_log.text


async def test_stop_closes_held_connections(sample: Path, tmp_path: Path) -> None:
    server = served(sample, tmp_path, FaultPlan.parse([], ["*=timeout"]))
    await server.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(f"GET {CAT} HTTP/1.1\r\nHost: cats.example\r\n\r\n".encode())
    await writer.drain()
    for _ in range(3000):  # until the server has decided to hold it
        if read_log(tmp_path / "log.tsv"):
            break
        await asyncio.sleep(0.01)
    assert [e.note for e in read_log(tmp_path / "log.tsv")] == ["timeout"]
    await asyncio.wait_for(server.stop(), 30)
    assert await asyncio.wait_for(reader.read(), 30) == b""  # closed, never answered
    writer.close()
