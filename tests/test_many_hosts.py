"""A crawl from thousands of seed hosts at the defaults (issue 40 item 6): name checks
run in a bounded number of threads, the WARC builder waits with poll (select fails on
descriptors above 1,024), and a lookup given up on leaves no exception for nobody
(issue 41 item 2: "Future exception was never retrieved" after a resume)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import gzip
import logging
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.fetch import lookups as dns_lookups
from focuscrawl.fetch.addresses import AddressPolicy
from focuscrawl.fetch.lookups import LocalResolver, LookupsLost
from focuscrawl.output.warc_builder import RecordBuilder
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.types import FetchResult

ROOT = Path(__file__).resolve().parents[1]


def _result(n: int) -> FetchResult:
    url = f"http://h.example/{n}"
    return FetchResult(
        url=url, final_url=url, status=200, reason="OK", body=b"<p>%d</p>" % n,
        content_type="text/html", headers={"Content-Type": "text/html"}, fetched_at=1.7e9 + n,
    )  # fmt: skip


@contextlib.contextmanager
def _descriptors_above(count: int) -> Iterator[None]:
    """``count`` descriptors held open (the soft limit raised as needed): the next ones
    this process opens are numbered above ``count``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = count + 256
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"RLIMIT_NOFILE's hard limit {hard} is below {want}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(count)]
    try:
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_record_builder_works_with_descriptors_above_1024() -> None:
    with _descriptors_above(1100):
        builder = RecordBuilder()
        try:
            assert min(builder._rfd, builder._wfd) > 1024  # (what the test is about)
            for n in range(20):
                builder.submit(_result(n), 1.7e9)
            records = builder.take(wait=True)
        finally:
            builder.close()
    assert builder.failed is None
    assert len(records) == 20
    assert all(gzip.decompress(r).startswith(b"WARC/1.1") for r in records)


class GatedDns:
    """A blocking lookup that waits for ``gate`` and then says the name is unknown (as a
    DNS server that answers late does), counting the lookups under way at once."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.running = 0
        self.most = 0
        self.ended = 0
        self._lock = threading.Lock()

    def __call__(self, name: str) -> list[str]:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            self.gate.wait(60)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        finally:
            with self._lock:
                self.running -= 1
                self.ended += 1


async def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.005)


async def test_name_checks_run_in_a_bounded_number_of_threads() -> None:
    dns = GatedDns()
    resolver = LocalResolver(dns)
    names = [f"host{i}.example" for i in range(3 * dns_lookups._LOOKUP_THREADS)]
    lookups = [asyncio.ensure_future(resolver(n)) for n in names]
    try:
        await _until(lambda: dns.running == dns_lookups._LOOKUP_THREADS, "the first lookups never started")
        for _ in range(20):  # others get no thread while those run (nor do retries)
            await asyncio.sleep(0)
        assert dns.most == dns_lookups._LOOKUP_THREADS
    finally:
        dns.gate.set()
    outcomes = await asyncio.gather(*lookups, return_exceptions=True)
    # each "unknown", or given up with the DNS taken for one that loses queries
    assert all(isinstance(o, socket.gaierror | LookupsLost) for o in outcomes)
    assert dns.most == dns_lookups._LOOKUP_THREADS


async def test_a_lookup_given_up_on_leaves_no_exception_unretrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The check's deadline cancels the lookup; the lookup fails later, while the loop
    runs on: its error is dropped, not left in a future nobody reads (asyncio debug)."""
    asyncio.get_running_loop().set_debug(True)
    dns = GatedDns()
    policy = AddressPolicy(resolve=LocalResolver(dns))
    checks = [asyncio.ensure_future(policy.name_refused(f"slow{i}.example")) for i in range(3)]
    await _until(lambda: dns.running == 3, "the lookups never started")
    for check in checks:
        check.cancel()  # what asyncio.timeout does at the check's second
    await asyncio.gather(*checks, return_exceptions=True)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        dns.gate.set()
        await _until(lambda: dns.running == 0, "the lookups never ended")
        for _ in range(10):  # the threads' answers reach the loop
            await asyncio.sleep(0)
        del checks
        gc.collect()
    assert "never retrieved" not in caplog.text


@pytest.fixture(scope="module")
def web_of_2000_hosts() -> Iterator[ReplayProcess]:
    with ReplayProcess([], faults_args=["--generated", "10000", "--hosts", "2000"]) as replay:
        yield replay


@pytest.mark.slow  # a crawl of 2,000 pages
def test_a_crawl_from_2000_seed_hosts_at_the_defaults(
    web_of_2000_hosts: ReplayProcess, tmp_path: Path
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(GeneratedWeb(10000, 2000).home_urls(2000)) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--seeds", str(seeds), "--out", str(out),
           "--proxy", web_of_2000_hosts.proxy_url, "--max-pages", "2000", "-q"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "never retrieved" not in done.stderr
    assert len((out / "pages.jsonl").read_text(encoding="utf-8").splitlines()) == 2000


async def test_a_crawl_with_a_slow_resolver_leaves_no_exception_unretrieved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The name check of slow.example is given up after its second (the fetch goes to the
    proxy), and its lookup fails afterwards while the crawl goes on (b.example's page
    waits for that): nothing is logged as "never retrieved" (asyncio debug mode)."""
    from aiohttp import web

    from focuscrawl.api import crawl_async
    from tests.sites import html, serve, serve_proxy

    asyncio.get_running_loop().set_debug(True)
    gate, ended = threading.Event(), threading.Event()
    real = socket.getaddrinfo

    def slow_getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host != "slow.example":
            return real(host, *args, **kwargs)  # type: ignore[arg-type]
        try:
            gate.wait(60)  # until the crawl has given the check up
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        finally:
            ended.set()

    async def given_up(request: web.Request) -> web.StreamResponse:
        gate.set()  # the proxy was asked for slow.example: its name check was given up
        return await html("slow")(request)

    async def after_the_lookup(request: web.Request) -> web.StreamResponse:
        await asyncio.to_thread(ended.wait, 60)  # the crawl runs on while the lookup fails
        for _ in range(10):  # its answer reaches the loop
            await asyncio.sleep(0)
        gc.collect()
        return await html("b")(request)

    monkeypatch.setattr(socket, "getaddrinfo", slow_getaddrinfo)
    routes = {"/slow": given_up, "/b": after_the_lookup}
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        async with serve(routes) as origin, serve_proxy({"slow.example": origin, "b.example": origin}) as proxy:
            fetch = {"proxy": proxy.url(""), "delay": 0.0, "respect_robots": False}
            stats = await crawl_async(
                tmp_path / "run", ["http://slow.example/slow", "http://b.example/b"],
                overrides={"fetch": fetch},
            )  # fmt: skip
        gc.collect()
    assert stats.fetched == 2
    assert ended.is_set()
    assert "never retrieved" not in caplog.text
