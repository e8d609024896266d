"""The single-core limit of ``bench_crawl.py``: the least work a crawler of our kind must do.

    python benchmarks/limit_loop.py --proxy http://127.0.0.1:PORT \
        --seeds http://schools-wikipedia.org/index.htm --max-pages 3000 --out /tmp/limit

A bare breadth-first loop, run in its own process like the two crawlers:

* one aiohttp client session through the replay proxy, ``--concurrency``
  connections, ``--per-host`` requests per host at once (a semaphore each), no
  delay; the connections to the proxy carry any host's requests, as ours and
  Scrapy's do (``ProxyPooledRequest``);
* robots.txt fetched once per host and obeyed (protego; a 5xx answer disallows
  all, a 4xx allows all, as RFC 9309 says and as both crawlers do);
* every response counted as a page whatever its status; links extracted with
  selectolax (``a/area[href]``, ``frame/iframe[src]``) from 2xx HTML pages only,
  resolved against the page URL, fragment cut, http(s) only, denied extensions
  (images, archives, ...) skipped as both crawlers skip them, followed once (a set);
* every response written to a WARC file as one gzip member (the same compressor
  and level as ours) with the WARC-Block-Digest (sha1, base32) a real WARC record
  carries; robots.txt too.

``--schedule ordered`` adds what a reproducible crawl must do, and nothing else: at
most ``--window`` URLs taken and not yet settled, results settled strictly in the
order their URLs were taken (a host's slot is given back, and a page's links are
queued, only when it is settled), as focuscrawl's engine does. The difference from
``ready`` is the price of a reproducible schedule, apart from any crawler's code.

No scoring, no durable frontier, no URL normalisation beyond ``urljoin`` and the
fragment, no scope rules, no crash safety: what is left is the cost of HTTP,
link extraction, a set and a queue, and compressed WARC output, i.e. the floor
under any crawler that keeps what it fetches. Prints one JSON line like the
Scrapy side: ``{"pages": N, "html": H, "crawl_elapsed": S}``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import heapq
import json
import sys
import time
import uuid
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import IO
from urllib.parse import urljoin, urlsplit

import aiohttp
from protego import Protego
from selectolax.lexbor import LexborHTMLParser
from yarl import URL

from focuscrawl.fetch.aiohttp_transport import ProxyPooledRequest
from focuscrawl.output.warc_records import gzip_member
from focuscrawl.settings import ScopeSettings

_LINK_SELECTOR = "a[href], area[href], frame[src], iframe[src]"
_DISALLOW_ALL = "User-agent: *\nDisallow: /\n"
# the same denied extensions as both crawlers (images, archives, ...): not pages
_DENY = tuple(f".{ext.lower().lstrip('.')}" for ext in ScopeSettings().deny_extensions)


def warc_record(
    fh: IO[bytes], uri: str, status: int, reason: str, headers: list[tuple[str, str]], body: bytes
) -> None:
    """One WARC/1.1 response record in its own gzip member (readable by warcio).

    Compressed by the same deflate at the same level as focuscrawl's records
    (``gzip_member``: ISA-L, or zlib level 1 without it), so the limit is not
    made slower than ours by a slower compressor.
    """
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    block = head.encode("latin-1", "replace") + body
    digest = base64.b32encode(hashlib.sha1(block).digest()).decode()
    warc = (
        "WARC/1.1\r\nWARC-Type: response\r\n"
        f"WARC-Record-ID: <urn:uuid:{uuid.uuid4()}>\r\n"
        f"WARC-Date: {datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}\r\n"
        f"WARC-Target-URI: {uri}\r\n"
        f"WARC-Block-Digest: sha1:{digest}\r\n"
        "Content-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(block)}\r\n\r\n"
    ).encode()
    fh.write(gzip_member(warc + block + b"\r\n\r\n"))


class FifoQueue:
    """``--schedule fifo``: the next URL in discovery order, whatever its host; a worker
    then waits for that host's slot (head-of-line blocking, as Scrapy's default queue)."""

    def __init__(self, seeds: list[str], per_host: int) -> None:
        self.urls: deque[str] = deque(seeds)

    def push(self, url: str) -> None:
        self.urls.append(url)

    def pop(self) -> str | None:
        return self.urls.popleft() if self.urls else None

    def done(self, url: str) -> None:
        pass

    def __bool__(self) -> bool:
        return bool(self.urls)


class ReadyQueue:
    """``--schedule ready``: the earliest-discovered URL of a host with a free slot
    (Mercator's per-host queues, a heap of their heads): a free connection is never
    held by a busy host. This is focuscrawl's schedule (its window takes the best URL
    of a host with room), so with 1 per host on many hosts both meet as many hosts,
    and ask as many of them for robots.txt."""

    def __init__(self, seeds: list[str], per_host: int) -> None:
        self.per_host = per_host
        self.seq = 0
        self.hosts: dict[str, deque[tuple[int, str]]] = {}
        self.busy: dict[str, int] = {}
        self.heads: list[tuple[int, str]] = []  # (seq of the host's first URL, host)
        self.listed: set[str] = set()  # hosts in heads
        self.queued = 0
        for url in seeds:
            self.push(url)

    def _list(self, host: str) -> None:
        queue = self.hosts.get(host)
        if queue and host not in self.listed and self.busy.get(host, 0) < self.per_host:
            heapq.heappush(self.heads, (queue[0][0], host))
            self.listed.add(host)

    def push(self, url: str) -> None:
        host = urlsplit(url).netloc
        self.hosts.setdefault(host, deque()).append((self.seq, url))
        self.seq += 1
        self.queued += 1
        self._list(host)

    def pop(self) -> str | None:
        if not self.heads:
            return None
        _, host = heapq.heappop(self.heads)
        self.listed.discard(host)
        _, url = self.hosts[host].popleft()
        self.queued -= 1
        self.busy[host] = self.busy.get(host, 0) + 1
        self._list(host)
        return url

    def done(self, url: str) -> None:
        host = urlsplit(url).netloc
        self.busy[host] -= 1
        self._list(host)

    def __bool__(self) -> bool:
        return self.queued > 0


class Taken:
    """A URL taken, and its page's links once its result is in (``ordered``)."""

    __slots__ = ("links", "url")

    def __init__(self, url: str) -> None:
        self.url = url
        self.links: list[str] | None = None


class Loop:
    def __init__(self, args: argparse.Namespace, warc: IO[bytes]) -> None:
        self.args = args
        self.warc = warc
        schedule = FifoQueue if args.schedule == "fifo" else ReadyQueue
        self.queue = schedule(list(args.seeds), args.per_host)
        self.ordered = args.schedule == "ordered"
        self.taken: deque[Taken] = deque()  # ordered: the URLs taken, in order
        self.seen: set[str] = set(args.seeds)
        self.robots: dict[str, Protego | asyncio.Future[Protego]] = {}
        self.pages = self.html = self.in_flight = 0
        self.last_at = 0.0
        self.wakeup = asyncio.Event()
        self.slots: dict[str, asyncio.Semaphore] = {}

    async def get(
        self, session: aiohttp.ClientSession, url: str
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        host = urlsplit(url).netloc
        slot = self.slots.get(host)
        if slot is None:
            slot = self.slots[host] = asyncio.Semaphore(self.args.per_host)
        # encoded=True: sent as written (yarl would otherwise decode %28 to "(", which the archive does not hold)
        async with (
            slot,
            session.get(URL(url, encoded=True), proxy=self.args.proxy, allow_redirects=False) as resp,
        ):
            body = await resp.read()
            return resp.status, resp.reason or "", list(resp.headers.items()), body

    async def robots_for(self, session: aiohttp.ClientSession, url: str) -> Protego:
        parts = urlsplit(url)
        key = f"{parts.scheme}://{parts.netloc}"
        known = self.robots.get(key)
        if isinstance(known, Protego):
            return known
        if known is not None:
            return await known
        future: asyncio.Future[Protego] = asyncio.get_running_loop().create_future()
        self.robots[key] = future
        robots_url = key + "/robots.txt"
        status, reason, headers, body = await self.get(session, robots_url)
        warc_record(self.warc, robots_url, status, reason, headers, body)
        text = (
            _DISALLOW_ALL
            if status >= 500
            else ""
            if status >= 400
            else body.decode("utf-8", "replace")
        )
        parsed = Protego.parse(text)
        self.robots[key] = parsed
        future.set_result(parsed)
        return parsed

    def links(self, url: str, body: bytes) -> list[str]:
        found = []
        for node in LexborHTMLParser(body).css(_LINK_SELECTOR):
            value = node.attributes.get("href") or node.attributes.get("src")
            if not value:
                continue
            link = urljoin(url, value.strip()).split("#", 1)[0]
            if link.startswith(("http://", "https://")) and not urlsplit(
                link
            ).path.lower().endswith(_DENY):
                found.append(link)
        return found

    def settle(self, entry: Taken, links: list[str]) -> None:
        """``ordered``: the result of ``entry`` is in; settle every finished entry at the
        head of the taken list, in order: give its host's slot back, queue its links."""
        entry.links = links
        taken = self.taken
        while taken and taken[0].links is not None:
            head = taken.popleft()
            self.push_new(head.links or [])
            self.queue.done(head.url)

    def push_new(self, links: list[str]) -> None:
        for link in links:
            if link not in self.seen:
                self.seen.add(link)
                self.queue.push(link)

    async def worker(self, session: aiohttp.ClientSession) -> None:
        while self.pages < self.args.max_pages:
            full = self.ordered and len(self.taken) >= self.args.window
            url = None if full else self.queue.pop()
            if url is None:
                if self.in_flight == 0 and not self.queue:
                    return
                self.wakeup.clear()
                await self.wakeup.wait()
                continue
            self.in_flight += 1
            entry = Taken(url) if self.ordered else None  # (no object per URL otherwise)
            if entry is not None:
                self.taken.append(entry)
            found: list[str] = []
            try:
                robots = await self.robots_for(session, url)
                if not robots.can_fetch(url, "focuscrawl"):
                    continue
                try:
                    status, reason, headers, body = await self.get(session, url)
                except (TimeoutError, aiohttp.ClientError):
                    continue
                if self.pages >= self.args.max_pages:
                    return
                self.pages += 1
                self.last_at = time.perf_counter()
                warc_record(self.warc, url, status, reason, headers, body)
                ctype = dict(headers).get("Content-Type", "")
                if 200 <= status < 300 and "html" in ctype:
                    self.html += 1
                    found = self.links(url, body)
            finally:
                self.in_flight -= 1
                if entry is not None:
                    self.settle(entry, found)
                else:
                    self.push_new(found)
                    self.queue.done(url)
                self.wakeup.set()

    async def run(self) -> float:
        connector = aiohttp.TCPConnector(limit=self.args.concurrency, limit_per_host=0)
        async with aiohttp.ClientSession(
            connector=connector, request_class=ProxyPooledRequest
        ) as session:
            start = time.perf_counter()
            await asyncio.gather(*(self.worker(session) for _ in range(self.args.concurrency)))
        return start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--seeds", nargs="+", required=True)
    ap.add_argument("--max-pages", type=int, default=3000)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--per-host", type=int, default=1)
    ap.add_argument(
        "--schedule", choices=["fifo", "ready", "ordered"], default="fifo",
        help="fifo: discovery order, waiting for a busy host; ready: the first URL of a free host;"
        " ordered: ready, with results settled in the order taken (see the module docstring)",
    )  # fmt: skip
    ap.add_argument("--window", type=int, default=32, help="ordered: URLs taken and not settled")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "limit.warc.gz").open("wb") as warc:
        loop = Loop(args, warc)
        start = asyncio.run(loop.run())
    print(
        json.dumps(
            {
                "pages": loop.pages,
                "html": loop.html,
                "crawl_elapsed": round(loop.last_at - start, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
