"""Host names resolved here before a proxy is asked for them (issue 24, the loopback
benchmark): a lost query is asked again, a DNS that loses queries by the burst is not
waited for, and the fetches of one host share its lookup."""

from __future__ import annotations

import asyncio
import collections
import threading

import pytest

from focuscrawl.fetch.addresses import AddressPolicy
from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.fetch.lookups import LocalResolver, LookupsLost
from focuscrawl.settings import FetchSettings
from tests.sites import html, serve, serve_proxy


class LossyDns:
    """A blocking lookup whose first ``lose`` queries of each name are never answered
    (a dropped UDP query: the thread waits until the test ends)."""

    def __init__(self, answers: dict[str, list[str]], lose: int = 0) -> None:
        self.answers = answers
        self.lose = lose
        self.asked: collections.Counter[str] = collections.Counter()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, name: str) -> list[str]:
        with self._lock:
            self.asked[name] += 1
            lost = self.asked[name] <= self.lose
        if lost:
            self.release.wait(10)
            raise OSError("lost")
        if name not in self.answers:
            raise OSError(f"{name}: Name or service not known")
        return self.answers[name]


async def test_a_lost_query_is_asked_again_and_its_answer_counts() -> None:
    dns = LossyDns({"intranet.example": ["10.0.0.1"]}, lose=1)
    resolver = LocalResolver(dns)
    try:
        found = await asyncio.wait_for(resolver("intranet.example"), 30)
    finally:
        dns.release.set()
    assert found == ["10.0.0.1"]
    # asked again after 0.2 s, then 0.4 s more: a third time only if a loaded machine
    # held the second answer that long (any answer counts)
    assert dns.asked["intranet.example"] >= 2
    assert resolver.retries == dns.asked["intranet.example"] - 1
    # and the policy refuses the name on that answer, well within its one second
    policy = AddressPolicy(resolve=LocalResolver(LossyDns({"intranet.example": ["10.0.0.1"]}, lose=1)))
    assert await policy.name_refused("intranet.example")


async def test_a_dns_that_loses_a_burst_is_given_up_at_once() -> None:
    """Sixteen names looked up together, every first query lost: the lookups under way
    end with LookupsLost when the eighth is asked again (not at the check's second), and
    later names are not looked up; the policy leaves them all to the proxy."""
    dns = LossyDns({}, lose=10)
    resolver = LocalResolver(dns)
    names = [f"host{i}.example" for i in range(16)]
    try:
        outcomes = await asyncio.wait_for(
            asyncio.gather(*(resolver(n) for n in names), return_exceptions=True), 30
        )
        with pytest.raises(LookupsLost):
            await resolver("later.example")
    finally:
        dns.release.set()
    assert all(isinstance(o, LookupsLost) for o in outcomes)
    assert resolver.lost
    assert resolver.retries >= 8
    assert "later.example" not in dns.asked
    policy = AddressPolicy(resolve=resolver)
    assert not await policy.name_refused("intranet.example")  # left to the proxy


async def test_a_dns_that_answers_keeps_being_asked() -> None:
    """Answers ("no such name" included) with a lost query now and then: checks go on."""
    answers = {f"n{i}.example": ["93.184.216.34"] for i in range(40)}
    answers["intranet.example"] = ["10.0.0.1"]
    dns = LossyDns(answers, lose=0)
    resolver = LocalResolver(dns)
    policy = AddressPolicy(resolve=resolver)
    refused = [await policy.name_refused(name) for name in [*answers, "unknown.example"]]
    assert refused == [False] * 40 + [True, False]
    assert not resolver.lost


async def test_fetches_waiting_for_one_lookup_share_it() -> None:
    asked: collections.Counter[str] = collections.Counter()
    gate = asyncio.Event()

    async def resolve(name: str) -> list[str]:
        asked[name] += 1
        await gate.wait()
        return ["10.0.0.1"] if name == "intranet.example" else ["93.184.216.34"]

    async with serve({}) as origin, serve_proxy({"intranet.example": origin}) as proxy:
        settings = FetchSettings(delay=0.0, retries=0, proxy=proxy.url(""))
        fetcher = HttpFetcher(
            settings, AiohttpTransport(settings), policy=AddressPolicy(resolve=resolve)
        )
        async with fetcher as f:
            fetches = [asyncio.ensure_future(f.fetch(f"http://intranet.example/{i}")) for i in range(3)]
            await asyncio.sleep(0.02)
            fetches[0].cancel()  # one waiter gone: the lookup goes on for the others
            gate.set()
            results = await asyncio.gather(*fetches[1:])
    assert [r.error for r in results] == ["blocked-address"] * 2
    assert asked["intranet.example"] == 1
    assert proxy.hits == []
    async with serve({"/page": html("ok")}) as origin, serve_proxy({"public.example": origin}) as proxy:
        settings = FetchSettings(delay=0.0, retries=0, proxy=proxy.url(""))
        fetcher = HttpFetcher(
            settings, AiohttpTransport(settings), policy=AddressPolicy(resolve=resolve)
        )
        async with fetcher as f:
            first = await f.fetch("http://public.example/page")
            again = await f.fetch("http://public.example:80/page")  # remembered: not asked
    assert (first.status, again.status) == (200, 200)
    assert asked["public.example"] == 1
