"""WARC records built in a child process: the same records, in order, and none lost."""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from focuscrawl.output import warc_records
from focuscrawl.output.warc_builder import BATCH, RecordBuilder
from focuscrawl.output.writers import WarcOutput
from focuscrawl.types import FetchResult


def _result(n: int) -> FetchResult:
    url = f"http://h.example/{n}"
    body = (f"<html><p>page {n}</p>" + "x" * (n * 37 % 3000) + "</html>").encode()
    return FetchResult(
        url=url, final_url=url, status=200 if n % 5 else 404, reason="OK", body=body,
        content_type="text/html", headers={"Content-Type": "text/html", "X-N": str(n)},
        request_headers={"User-Agent": "focuscrawl-test"}, fetched_at=1.7e9 + n,
    )  # fmt: skip


def _records(path: Path) -> list[tuple[str, str | None, str | None, bytes]]:
    with open(path, "rb") as fh:
        return [
            (
                r.rec_type,
                r.rec_headers.get_header("WARC-Target-URI"),
                r.rec_headers.get_header("WARC-Payload-Digest"),
                r.content_stream().read(),
            )
            for r in ArchiveIterator(fh)
        ]


def _wait_ready(out: WarcOutput) -> None:
    """Until the output's child is up (records written before go the inline way). The one
    place a test reads the writer's builder: that it is up is visible nowhere else."""
    deadline = time.monotonic() + 60
    while out._builder is not None and not out._builder.ready:  # the child starting
        assert time.monotonic() < deadline, "the builder never came up"
        out._take_built(wait=False)
        time.sleep(0.01)


def _builder_child() -> int:
    """The pid of this process's one record-building child (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat, cmdline = (entry / "stat").read_text(), (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"warc_builder" in cmdline:
            found.append(int(entry.name))
    assert len(found) == 1, found
    return found[0]


def _wait_dead(pid: int) -> None:
    """Until the killed child is a zombie (dead, not reaped: its parent's Popen does that)."""
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child did not die"
        time.sleep(0.01)


def test_builder_writes_the_records_the_writer_would_in_the_same_order(tmp_path: Path) -> None:
    inline = WarcOutput(tmp_path / "inline.warc.gz")
    built = WarcOutput(tmp_path / "built.warc.gz")
    built.start_builder()
    _wait_ready(built)
    n = 3 * BATCH + 3  # whole batches and a partial one, which sync must send
    for i in range(n):
        inline.write(_result(i))
        built.write(_result(i))
    sizes = built.sync(), inline.sync()
    assert sizes[0] > 0
    assert built.builder_counts == {}  # still running: counted when it ends
    built.close()
    inline.close()
    assert built.builder_counts == {"warc_builder_records": n}
    ours, theirs = _records(tmp_path / "built.warc.gz"), _records(tmp_path / "inline.warc.gz")
    assert len(ours) == 1 + 2 * n
    assert ours == theirs  # types, targets, payload digests and blocks, in order


def test_sync_holds_every_record_written_before_it(tmp_path: Path) -> None:
    out = WarcOutput(tmp_path / "c.warc.gz")
    out.start_builder()
    _wait_ready(out)
    for i in range(5):  # fewer than a batch: nothing is sent until sync
        out.write(_result(i))
    committed = out.sync()
    assert committed == (tmp_path / "c.warc.gz").stat().st_size
    uris = [u for t, u, _, _ in _records(tmp_path / "c.warc.gz") if t == "response"]
    assert uris == [f"http://h.example/{i}" for i in range(5)]
    out.close()


def test_a_killed_builder_loses_nothing_its_results_are_built_here(tmp_path: Path) -> None:
    out = WarcOutput(tmp_path / "c.warc.gz")
    out.start_builder()
    _wait_ready(out)
    for i in range(BATCH + 2):
        out.write(_result(i))
    child = _builder_child()
    os.kill(child, signal.SIGKILL)
    _wait_dead(child)
    for i in range(BATCH + 2, 2 * BATCH + 5):  # written while (and after) it is found dead
        out.write(_result(i))
    out.close()
    uris = [u for t, u, _, _ in _records(tmp_path / "c.warc.gz") if t == "response"]
    assert uris == [f"http://h.example/{i}" for i in range(2 * BATCH + 5)]
    assert out.builder_counts["warc_builder_failed"] == 1
    assert out.builder_counts["warc_builder_records_rebuilt"] >= 1


def test_revisits_wait_for_the_records_before_them(tmp_path: Path) -> None:
    out = WarcOutput(tmp_path / "c.warc.gz")
    out.start_builder()
    _wait_ready(out)
    out.write(_result(1))
    out.write(_result(2))
    out.write_revisit(_result(1))  # built here, after the builder's two
    out.write(_result(3))
    out.close()
    kinds = [(t, u) for t, u, _, _ in _records(tmp_path / "c.warc.gz") if t != "request"]
    assert kinds == [
        ("warcinfo", None),
        ("response", "http://h.example/1"),
        ("response", "http://h.example/2"),
        ("revisit", "http://h.example/1"),
        ("response", "http://h.example/3"),
    ]


def test_records_written_before_the_child_is_up_stay_in_order(tmp_path: Path) -> None:
    out = WarcOutput(tmp_path / "c.warc.gz")
    out.start_builder()
    for i in range(3 * BATCH):  # some or all before the child answers READY
        out.write(_result(i))
    out.close()
    uris = [u for t, u, _, _ in _records(tmp_path / "c.warc.gz") if t == "response"]
    assert uris == [f"http://h.example/{i}" for i in range(3 * BATCH)]


def test_the_child_builds_exactly_what_exchange_builds() -> None:
    builder = RecordBuilder(level=1)
    try:
        results = [_result(i) for i in range(BATCH)]
        for r in results:
            builder.submit(r, 1.7e9)
        got = builder.take(wait=True)
    finally:
        builder.close()
    assert builder.failed is None
    assert len(got) == BATCH
    for r, data in zip(results, got, strict=True):
        mine = warc_records.exchange(r, level=1, when=1.7e9)
        # byte for byte the same records, but for their random IDs
        assert _without_ids(gzip.decompress(data)) == _without_ids(gzip.decompress(mine))


def _without_ids(records: bytes) -> bytes:
    out = re.sub(rb"<urn:uuid:[0-9a-f-]+>", b"<id>", records)
    assert out.count(b"<id>") == 3  # the response's, the request's and its Concurrent-To
    return out


def test_the_child_imports_only_what_building_records_needs() -> None:
    # the package's names load on first use: the child does not import the crawler
    # (aiohttp, numpy, the engine), whose import and teardown cost the crawl 0.4 s of
    # the second core and 60 ms of waiting at its end
    code = (
        "import sys; from focuscrawl.output.warc_builder import main; "
        "print(sorted(m for m in ('aiohttp', 'numpy', 'focuscrawl.crawler.engine', "
        "'focuscrawl.api', 'selectolax') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_child_ends_with_status_0_when_its_input_closes() -> None:
    child = [sys.executable, "-c", "from focuscrawl.output.warc_builder import main; main()"]
    done = subprocess.run(child, input=b"", capture_output=True, timeout=60)
    assert done.returncode == 0
    assert b"READY" in done.stdout  # it came up, answered, and ended with its input


def test_a_304_is_a_server_not_modified_revisit_pointing_to_the_earlier_record(tmp_path: Path) -> None:
    url = "http://h.example/page"
    answer = FetchResult(
        url=url, final_url=url, status=304, reason="Not Modified", body=b"", content_type="",
        headers={"ETag": '"abc"'}, request_headers={"If-None-Match": '"abc"'}, fetched_at=1.7e9,
    )  # fmt: skip
    earlier = "2026-01-02T03:04:05Z"
    path = tmp_path / "a.warc.gz"
    path.write_bytes(warc_records.not_modified(answer, url, earlier))
    with open(path, "rb") as fh:
        records = [(r.rec_type, r.rec_headers, r.http_headers, r.content_stream().read()) for r in ArchiveIterator(fh)]
    assert [r[0] for r in records] == ["revisit", "request"]
    _, head, http, payload = records[0]
    assert head.get_header("WARC-Profile") == "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    assert head.get_header("WARC-Refers-To-Target-URI") == url
    assert head.get_header("WARC-Refers-To-Date") == earlier
    assert http.get_statuscode() == "304"
    assert payload == b""  # costs no body
    assert records[1][2].get_header("If-None-Match") == '"abc"'
