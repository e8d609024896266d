"""robots.txt against Google's robots_test.cc (every ``IsUserAgentAllowed``
expectation, transcribed into tests/data/standards/robotstxt/robots_test.json with
its licence, plus the allow/disallow its parser-level tests imply), run on the
parser directly and through the fetcher on a loopback site; the RFC 9309 cache
rules (24 hours, unreachable asked again sooner).

The cases where focuscrawl answers otherwise are ``DEPARTURES``: each is a row of
docs/standards.md.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.fetch.aiohttp_fetcher import AiohttpFetcher
from focuscrawl.fetch.robots import RobotsCache, RobotsTxt, rules_from_response, user_agent_token
from tests.sites import html, respond, serve
from tests.test_fetch import ROBOTS_TYPE, settings

DATA = Path(__file__).parent / "data" / "standards" / "robotstxt" / "robots_test.json"
CASES: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))

# (test, url) -> the docs/standards.md rule that makes focuscrawl answer otherwise
DEPARTURES = {
    # RFC 9309 2.2.2's own table: /foo/bar/%62%61%7A matches /foo/bar/baz
    ("ID_Encoding", "http://foo.bar/foo/bar/baz"): "robots-unreserved-escapes",
}
# Google cuts lines at 16,664 bytes; RFC 9309 has no line limit
DEPARTURES.update(
    ((c["test"], c["url"]), "robots-line-limit")
    for c in CASES
    if c["test"] == "GoogleOnly_LineTooLong" and c["url"].endswith("/fux") and len(c["url"]) > 1000
)


def _body(case: dict[str, Any]) -> bytes:
    if "robotstxt_hex" in case:
        return bytes.fromhex(case["robotstxt_hex"])
    return str(case["robotstxt"]).encode("utf-8")


def _id(case: dict[str, Any]) -> str:
    return f"{CASES.index(case)}:{case['test']}:{case['useragent']}:{case['url'][-30:]}"


def _expected(case: dict[str, Any]) -> bool:
    departure = DEPARTURES.get((case["test"], case["url"]))
    return not case["allowed"] if departure else bool(case["allowed"])


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_google_robots_expectations(case: dict[str, Any]) -> None:
    robots = RobotsTxt.parse(_body(case))
    assert robots.allowed(case["url"], case["useragent"]) is _expected(case)


def test_departures_are_listed_and_still_departures() -> None:
    listed = (Path(__file__).parents[1] / "docs" / "standards.md").read_text(encoding="utf-8")
    keys = {(c["test"], c["url"]) for c in CASES}
    assert set(DEPARTURES) <= keys
    assert all(f"`{rule}`" in listed for rule in DEPARTURES.values())


async def test_google_robots_expectations_through_the_fetcher() -> None:
    """The same cases, the file served by a loopback site and the URL fetched by a
    fetcher whose User-Agent names the case's agent (a URL path, the agent, one fetch)."""
    checked = 0
    for case in CASES:
        agent = case["useragent"]
        url: str = case["url"]
        if not url.startswith("http://") or user_agent_token(agent) != agent or not url.isascii():
            continue  # the fetcher's agent is a product token; its URLs are normalised
        path = "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"
        routes = {"/robots.txt": respond(_body(case), content_type=ROBOTS_TYPE)}
        async with (
            serve(routes, fallback=html("x")) as site,
            AiohttpFetcher(settings(user_agent=f"{agent}/1.0")) as fetcher,
        ):
            result = await fetcher.fetch(site.url(path))
        assert (result.error != "robots") is _expected(case), case
        checked += 1
    assert checked >= 120


@pytest.mark.parametrize(
    ("robots_txt", "agent", "allowed"),
    [
        pytest.param(b"\xef\xbb\xbfUser-agent: *\nDisallow: /", "focuscrawl", False, id="bom"),
        pytest.param(b"User-agent: focus\nDisallow: /", "focuscrawl", True, id="no-prefix-match"),
        pytest.param(b"User-agent: *\nDisallow: /\nUser-agent: focus\nAllow: /", "focuscrawl", False, id="star-not-prefix"),
        pytest.param(b"User-agent: focuscrawl/1.0\nDisallow: /", "focuscrawl", False, id="version-in-line"),
        pytest.param(b"User-agent: foo bar\nDisallow: /", "foo", False, id="first-word"),
        pytest.param(b"User-agent: a\nUnknown: x\nUser-agent: b\nDisallow: /", "a", False, id="unknown-line-keeps-group"),
        pytest.param(b"User-agent: a\nDisallow: /\n\nUser-agent: b\nAllow: /", "a", False, id="blank-lines"),
        pytest.param(b"Disallow: /\nUser-agent: *\nAllow: /x", "bot", True, id="rules-outside-groups"),
    ],
)
def test_issue_cases(robots_txt: bytes, agent: str, allowed: bool) -> None:
    assert RobotsTxt.parse(robots_txt).allowed("http://h.org/x", agent) is allowed


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        pytest.param("focuscrawl/0.1 (+https://x.org)", "focuscrawl", id="product"),
        pytest.param("Mozilla/5.0 (compatible; FooBot/1.0; +http://foo.example/bot)", "FooBot", id="browser-style"),
        pytest.param("Mozilla/5.0 (X11; Linux x86_64)", "Mozilla", id="browser"),
        pytest.param("  ", "*", id="empty"),
    ],
)
def test_user_agent_token(user_agent: str, token: str) -> None:
    assert user_agent_token(user_agent) == token


def test_crawl_delay_of_the_agents_group() -> None:
    robots = RobotsTxt.parse(b"User-agent: *\nCrawl-delay: 3\nUser-agent: bot\nCrawl-delay: x\nCrawl-delay: 1.5")
    assert (robots.crawl_delay("bot"), robots.crawl_delay("other")) == (1.5, 3.0)


async def test_cache_expires_after_24_hours_and_retries_unreachable_sooner() -> None:
    now = [0.0]
    answers = {"http://a.test/robots.txt": (200, b"User-agent: *\nDisallow: /x", None),
               "http://b.test/robots.txt": (503, b"", None)}  # fmt: skip
    asked: list[str] = []

    async def download(url: str) -> tuple[int, bytes, str | None]:
        asked.append(url)
        return answers[url]

    cache = RobotsCache(download, clock=lambda: now[0])
    assert not (await cache.rules_for("http://a.test/x")).allowed("http://a.test/x", "bot")
    assert not (await cache.rules_for("http://b.test/")).allowed("http://b.test/", "bot")
    now[0] = 599.0
    assert cache.cached("http://b.test/") is not None
    now[0] = 601.0  # the unreachable one is asked again, the other kept
    assert cache.cached("http://b.test/") is None
    assert cache.cached("http://a.test/") is not None
    answers["http://b.test/robots.txt"] = (404, b"", None)
    assert (await cache.rules_for("http://b.test/")).allowed("http://b.test/", "bot")
    now[0] = 24 * 3600.0 + 1
    answers["http://a.test/robots.txt"] = (200, b"", None)
    assert (await cache.rules_for("http://a.test/x")).allowed("http://a.test/x", "bot")
    assert asked == [f"http://{host}.test/robots.txt" for host in "abba"]
    await asyncio.sleep(0)


def test_rules_from_response_unreachable_has_its_time() -> None:
    assert rules_from_response(500, b"", None).error == "robots"
