"""The generated web (``focuscrawl replay --generated``): deterministic, shaped as
documented, served over real HTTP on 127.0.0.1 and crawlable by focuscrawl."""

from __future__ import annotations

import asyncio
import http.client
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from focuscrawl.api import crawl
from focuscrawl.commands import replay as cli
from focuscrawl.parse.html import page_from_bytes
from focuscrawl.replay.generated import GeneratedWeb, _mix, host_sizes
from focuscrawl.replay.process import ReplayProcess

PAGES, HOSTS, SEED = 3000, 30, 7


@pytest.fixture(scope="module")
def web() -> GeneratedWeb:
    return GeneratedWeb(PAGES, HOSTS, SEED)


def test_mix_is_splitmix64() -> None:
    # the first output of splitmix64 from state 0 (Steele, Lea & Flood 2014; Vigna's reference)
    assert _mix(0) == 0xE220A8397B1DCDAF


def test_host_sizes_by_hand() -> None:
    # weights 1, 2**-0.8, 3**-0.8 (sum 1.989); 1 + floor(7 * w / sum) = 4, 3, 2; the page
    # left over goes to the smallest host; the cap ceil(10 / 3) = 4 is not exceeded
    assert sorted(host_sizes(10, 3, random.Random(0))) == [3, 3, 4]
    assert host_sizes(5, 5, random.Random(0)) == [1, 1, 1, 1, 1]


def test_same_seed_same_bytes_other_seed_other_bytes(web: GeneratedWeb) -> None:
    again, other = GeneratedWeb(PAGES, HOSTS, SEED), GeneratedWeb(PAGES, HOSTS, SEED + 1)
    pages = [0, 1, 17, 999, PAGES - 1]
    assert [again.html_of(p) for p in pages] == [web.html_of(p) for p in pages]
    assert again.host_names == web.host_names
    assert [again.robots_of(k) for k in range(HOSTS)] == [web.robots_of(k) for k in range(HOSTS)]
    assert [other.html_of(p) for p in pages] != [web.html_of(p) for p in pages]
    # the bytes are the same through the asynchronous answer, as the server sends them
    answer = asyncio.run(web.answer(web.url_of(17)))
    assert answer.body == again.html_of(17)


def test_hosts_and_urls(web: GeneratedWeb) -> None:
    assert sum(web.sizes) == PAGES
    assert min(web.sizes) >= 1
    assert max(web.sizes) <= PAGES // 25 or max(web.sizes) == -(-PAGES // HOSTS)
    assert len(set(web.host_names)) == HOSTS
    assert all(".example." in name and "site" in name for name in web.host_names)
    for page in range(PAGES):
        url = web.url_of(page)
        assert web.page_of(url) == (page, False)
        assert url.endswith(".html") or web.path_of(page) == "/"
    home = web.url_of(web.starts[3])
    assert home == f"http://{web.host_names[3]}/"
    assert web.page_of(web.url_of(5) + "?q=1") is None
    assert web.page_of(web.url_of(5).replace(".html", "-x.html")) is None
    assert web.page_of("http://unknown.example.org/") is None
    assert web.page_of(f"http://{web.host_names[0]}/news/x-{web.sizes[0]}.html") is None


def test_link_graph_shape(web: GeneratedWeb) -> None:
    counts, cross, total = [], 0, 0
    for page in range(PAGES):
        links = web.links_of(page)
        assert len(links) == len(set(links))
        assert all(0 <= target < PAGES for target in links)
        k = web.host_of(page)
        if page != web.starts[k]:
            assert links[0] == web.starts[k]  # the home link comes first
        counts.append(len(links))
        cross += sum(web.host_of(t) != k for t in links)
        total += len(links)
    assert 25 <= sum(counts) / PAGES <= 35
    assert 0.05 <= cross / total <= 0.2
    # popular pages: the 10 % most linked-to pages get a large share of the links
    indegree = Counter(t for page in range(PAGES) for t in web.links_of(page))
    top = sum(n for _, n in indegree.most_common(PAGES // 10))
    assert top / total > 0.3


def test_statuses_and_robots(web: GeneratedWeb) -> None:
    statuses = Counter(web.status_of(page) for page in range(PAGES))
    assert set(statuses) == {200, 301, 404}
    assert statuses[404] < PAGES * 0.03
    assert statuses[301] < PAGES * 0.03
    assert all(web.status_of(start) == 200 for start in web.starts)
    big = GeneratedWeb(20_000, 1000, SEED)
    robots = Counter(big.robots_of(k) for k in range(1000))
    assert robots["User-agent: *\nDisallow:\n"] > 850
    assert 30 < robots["User-agent: *\nDisallow: /archive/\n"] < 150
    # the rule disallows pages that exist: hosts that disallow /archive/ have such pages
    # (all but the smallest, whose few pages may all be in other sections)
    disallowing = [k for k in range(1000) if big.robots_of(k) == "User-agent: *\nDisallow: /archive/\n"]
    archived = [k for k in disallowing if any(
        big.path_of(p).startswith("/archive/") for p in range(big.starts[k], big.starts[k] + big.sizes[k])
    )]  # fmt: skip
    assert len(archived) > 0.8 * len(disallowing)


def test_the_parser_sees_the_generated_links(web: GeneratedWeb) -> None:
    for page in (0, 5, 250, 2999):
        url = web.url_of(page)
        body = web.html_of(page)
        assert 1500 < len(body) < 20_000
        parsed = page_from_bytes(url, body, "text/html; charset=utf-8")
        # the header's logo links home first, then the links in document order, each once
        home = web.starts[web.host_of(page)]
        expected = dict.fromkeys(web.url_of(t) for t in [home, *web.links_of(page)])
        assert [link.url for link in parsed.links] == list(expected)
        k = web.host_of(page)
        if page == web.starts[k]:
            assert parsed.title == f"Site {k}: home"
        else:
            section, _, stem = web.path_of(page).strip("/").partition("/")
            adj, noun, _ = stem.split("-")
            assert parsed.title == f"{adj.capitalize()} {noun} ({section}) | Site {k}"


def _get(port: int, url: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", url)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_served_over_http(web: GeneratedWeb) -> None:
    args = ["--generated", str(PAGES), "--hosts", str(HOSTS), "--seed", str(SEED)]
    moved = next(p for p in range(PAGES) if web.status_of(p) == 301)
    gone = next(p for p in range(PAGES) if web.status_of(p) == 404)
    disallowing = next(
        k for k in range(HOSTS) if web.robots_of(k) not in (None, "User-agent: *\nDisallow:\n")
    )
    with ReplayProcess([], faults_args=args) as replay:
        assert replay.urls == PAGES
        status, headers, body = _get(replay.port, web.url_of(42))
        assert (status, headers["content-type"], body) == (
            200,
            "text/html; charset=utf-8",
            web.html_of(42),
        )
        assert headers["content-length"] == str(len(body))
        status, headers, _ = _get(replay.port, web.url_of(moved))
        target = web.path_of(moved).removesuffix(".html") + "/"
        assert (status, headers["location"]) == (301, target)
        host = web.host_names[web.host_of(moved)]
        assert _get(replay.port, f"http://{host}{target}")[::2] == (200, web.html_of(moved))
        assert _get(replay.port, web.url_of(gone))[0] == 404
        assert _get(replay.port, web.url_of(43).replace(".html", "/"))[0] == 404
        status, _, body = _get(replay.port, f"http://{web.host_names[disallowing]}/robots.txt")
        assert (status, body) == (200, b"User-agent: *\nDisallow: /archive/\n")
        assert _get(replay.port, "http://not-generated.example.org/")[0] == 502


def test_crawled_by_focuscrawl(web: GeneratedWeb, tmp_path: Path) -> None:
    args = ["--generated", str(PAGES), "--hosts", str(HOSTS), "--seed", str(SEED)]
    with ReplayProcess([], faults_args=args) as replay:
        stats = crawl(
            web.home_urls(3), tmp_path / "run", strategy="bfs", max_pages=300,
            proxy=replay.proxy_url, delay=0.0, concurrency=8,
        )  # fmt: skip
    assert stats.fetched == 300
    lines = (tmp_path / "run" / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 300
    disallowed = {
        web.host_names[k]
        for k in range(HOSTS)
        if web.robots_of(k) == "User-agent: *\nDisallow: /archive/\n"
    }
    hosts = set()
    for record in records:
        found = web.page_of(record["url"])
        assert found is not None, record["url"]
        page, _ = found
        host = web.host_names[web.host_of(page)]
        hosts.add(host)
        assert not (host in disallowed and "/archive/" in record["url"])
        expected = web.status_of(page)
        if expected == 200:
            assert record["status"] == 200
            assert record["out_links"] == len({web.starts[web.host_of(page)], *web.links_of(page)})
        elif expected == 404:
            assert record["status"] == 404
    assert len(hosts) > 3  # cross-host links were followed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give ARCHIVE files to serve, or --generated"),
        (["a.warc.gz", "--generated", "10"], "not both"),
        (["--generated", "10", "--hosts", "20"], "pages >= hosts"),
    ],
    ids=["nothing", "both", "fewer-pages-than-hosts"],
)
def test_cli_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert cli.main([*argv, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
