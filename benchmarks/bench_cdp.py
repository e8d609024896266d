"""The CPU a render costs through Playwright (its Node driver between the crawler and
the browser) against the DevTools protocol spoken directly over the browser's pipe
(``--remote-debugging-pipe``), on the same pages (issue 37's speed goal).

    python benchmarks/bench_cdp.py [--pages 200] [--rounds 2] [--browser PATH]
        [--drivers playwright,cdp] [--flags "--in-process-gpu"] [--without --enable-begin-frame-control]
        [--messages]

Each page is a script shell (``<div id="root">`` and a script writing ~200 words and
6 links), as ``bench_render.py``'s web makes them; the page and its script are answered
from memory by a fetcher stand-in, so only the driver and the browser differ. Both
drivers do the same work a page: a navigation in a reused page of one of
``--contexts`` browser contexts, every request of the page intercepted (Playwright's
route, the DevTools Fetch domain), the load event, the quiet window, the DOM
serialised in the page. Reported: CPU ms a render of this process and of every process
under it by kind (the browser process, its renderers, network, GPU and zygote processes,
Node), from ``/proc`` deltas over the renders after a warm-up, and renders a second; the
browser's start (from its launch to its pool of contexts ready: wall-clock seconds and
CPU ms by kind); the drivers take turns within a round.

``--messages``: the DevTools messages a render (``cdp`` drivers), by method, with their
bytes, and the CPU the pipe's codec (the ``json`` module) spends on them a render, beside
``orjson``'s on the same messages.

``--flags`` / ``--without``: a driver ``cdp+`` launches the browser with these flags
added to (or taken from) the renderer's own, beside ``cdp`` as it is: a flag's cost
measured A/B (``--drivers cdp,cdp+``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import logging
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.fetch.render import browser_path
from focuscrawl.fetch.render import launch as render_launch
from focuscrawl.fetch.render import pipe as render_pipe
from focuscrawl.fetch.render.browser import BrowserRenderer
from focuscrawl.fetch.render.launch import ARGS, process_flags
from focuscrawl.fetch.render.quiet import QUIET, SETTLE
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult

_WORDS = ("the", "a", "of", "and", "kitten", "cat", "market", "river", "school", "energy", "report", "city")
log = logging.getLogger(__name__)
_PW_BLOCKED = frozenset({"image", "font", "media"})
_PW_ANSWER_HEADERS = ("content-type", "cache-control", "location")
_PW_SERIALISE = """() => {
    const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "";
    return doctype + (document.documentElement ? document.documentElement.outerHTML : "");
}"""


class PlaywrightRenderer:
    """The renderer as it was with Playwright (its route interception, its Node driver): the baseline."""

    def __init__(self, settings: FetchSettings, fetcher: HttpFetcher, browser: str) -> None:
        self.settings = settings
        self.fetcher = fetcher
        self.browser = browser  # the executable
        self._playwright: Any = None
        self._browser: Any = None
        self._contexts: asyncio.Queue[Any] = asyncio.Queue()  # open pages, one per context
        self._made = 0
        self._lock = asyncio.Lock()
        self._pages: dict[Any, FetchResult] = {}  # a page being rendered -> its response
        self._busy: dict[Any, int] = {}  # a page being rendered -> its requests under way
        self._last: dict[Any, float] = {}  # ... -> when its last request started or ended
        self._subs: dict[Any, set[asyncio.Task[Any]]] = {}  # ... -> its requests under way
        self._warming: asyncio.Task[None] | None = None

    def warm(self) -> None:
        """Start the browser and fill the pool in the background (the crawl goes on)."""
        if self._warming is None:
            self._warming = asyncio.ensure_future(self._warm())

    async def _warm(self) -> None:
        try:
            await self._ensure_browser()
            async with self._lock:
                missing = self.settings.render_contexts - self._made
                self._made += max(missing, 0)
            pages = await asyncio.gather(*(self._new_page() for _ in range(max(missing, 0))), return_exceptions=True)
            for page in pages:
                if isinstance(page, BaseException):
                    self._made -= 1
                else:
                    self._contexts.put_nowait(page)
        except Exception as exc:  # the first page to render meets it again, and counts it
            log.info("browser not started ahead: %s", str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)

    async def _ensure_browser(self) -> Any:
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            from playwright.async_api import async_playwright  # optional: only when rendering

            if self._playwright is None:
                self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.browser, headless=True, args=[*ARGS, *process_flags(self.settings)],
            )  # fmt: skip
            self._contexts = asyncio.Queue()
            self._made = 0
            return self._browser

    async def _new_page(self) -> Any:
        browser = await self._ensure_browser()
        context = await browser.new_context(
            user_agent=self.settings.user_agent, accept_downloads=False, service_workers="block",
        )  # fmt: skip
        # every request of every page of the context, popups included, comes here
        await context.route("**/*", self._answer)
        page = await context.new_page()
        page.on("popup", lambda popup: asyncio.ensure_future(popup.close()))
        return page

    async def _page(self) -> Any:
        """A page ready to render, each in a context of its own (reused while it behaves)."""
        if self._warming is not None and not self._warming.done():
            await asyncio.shield(self._warming)
        await self._ensure_browser()
        if self._contexts.empty() and self._made < self.settings.render_contexts:
            self._made += 1
            try:
                return await self._new_page()
            except BaseException:
                self._made -= 1
                raise
        return await self._contexts.get()

    async def render(self, result: FetchResult) -> bytes:
        """The DOM the browser built from ``result`` (serialised), or an exception
        (``TimeoutError``, a browser error) that the caller counts."""
        page = await self._page()
        healthy = True
        try:
            self._pages[page] = result
            url = result.final_url
            async with asyncio.timeout(self.settings.render_timeout):
                await page.goto(url, wait_until="load")
                await self._settle(page)
                html: str = await page.evaluate(_PW_SERIALISE)
                if not isinstance(html, str):  # a page that broke its own serialiser
                    html = await page.content()
            return html.encode("utf-8")
        except BaseException:
            healthy = False
            raise
        finally:
            await self._put_back(page, healthy)

    async def _settle(self, page: Any) -> None:
        """Wait for :data:`QUIET` seconds with no request of ``page`` under way (at most
        :data:`SETTLE` seconds)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + SETTLE
        self._last[page] = loop.time()  # the window opens at the load event at the earliest
        while (now := loop.time()) < give_up:
            if self._busy.get(page, 0):
                await asyncio.sleep(QUIET / 2)
                continue
            quiet = now - self._last.get(page, 0.0)
            if quiet >= QUIET:
                # a request the page made before this point may not have reached the
                # route handler yet (its event on the way from the browser, late on a
                # loaded machine): one round trip to the page delivers the events sent
                # before its answer; quiet only if none of them was a request
                last = self._last.get(page, 0.0)
                try:
                    await page.evaluate("0")
                except Exception:  # a page whose document went away: nothing to wait for
                    return
                if self._busy.get(page, 0) or self._last.get(page, 0.0) != last:
                    continue
                return
            await asyncio.sleep(min(QUIET - quiet, give_up - now))

    async def _put_back(self, page: Any, healthy: bool) -> None:
        """Keep the page for the next one; a page that misbehaved (a hung script) is
        closed with its context and replaced, and a browser that does not answer is
        closed (started again for the next page)."""
        self._pages.pop(page, None)
        self._busy.pop(page, None)
        self._last.pop(page, None)
        for sub in self._subs.pop(page, ()):  # a request that never ends holds no host's slot
            sub.cancel()
        if healthy:
            self._contexts.put_nowait(page)
            return
        try:
            async with asyncio.timeout(5.0):
                await page.context.close()
        except Exception:  # a hung or dead browser: started again for the next page
            log.warning("browser not answering: restarted for the next page")
            browser, self._browser = self._browser, None
            if browser is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(browser.close(), 5.0)
        async with self._lock:
            self._made = max(0, self._made - 1)

    async def _answer(self, route: Any) -> None:
        """One request of a page, answered by the crawler's fetcher (or refused: a popup's,
        an image's, a navigation away)."""
        request = route.request
        try:
            result = self._pages.get(request.frame.page)
            if result is None or request.resource_type in _PW_BLOCKED or request.method != "GET":
                await route.abort("blockedbyclient")
                return
            if request.is_navigation_request() and request.frame.parent_frame is None:
                if request.url.split("#", 1)[0] != result.final_url or request.redirected_from is not None:
                    await route.abort("blockedbyclient")  # no navigation away from the page
                    return
                await route.fulfill(status=result.status or 200, headers=_headers(result), body=result.body)
                return
            page = request.frame.page
            self._busy[page] = self._busy.get(page, 0) + 1
            self._last[page] = asyncio.get_running_loop().time()
            fetching = asyncio.ensure_future(self.fetcher.fetch(request.url, any_type=True))
            self._subs.setdefault(page, set()).add(fetching)
            try:
                await asyncio.wait({fetching})
            finally:
                fetching.cancel()  # (done already, unless this handler itself is cancelled)
                self._subs.get(page, set()).discard(fetching)
                if page in self._busy:
                    self._busy[page] = max(0, self._busy[page] - 1)
                    self._last[page] = asyncio.get_running_loop().time()
            if fetching.cancelled():  # its page was taken (or given up) meanwhile
                await route.abort("aborted")
                return
            sub = fetching.result()
            if sub.error is not None or sub.status == 0:
                self.fetcher.counters["render_subrequest_refused"] += 1
                await route.abort("blockedbyclient")
                return
            await route.fulfill(status=sub.status, headers=_headers(sub), body=sub.body)
        except Exception:  # the page or the browser went away meanwhile
            with contextlib.suppress(Exception):
                await route.abort("failed")

    async def close(self) -> None:
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            with contextlib.suppress(BaseException):
                await self._warming
        with contextlib.suppress(Exception):
            if self._browser is not None:
                await asyncio.wait_for(self._browser.close(), 10.0)
        with contextlib.suppress(Exception):
            if self._playwright is not None:
                await asyncio.wait_for(self._playwright.stop(), 10.0)
        self._browser = self._playwright = None


def _headers(result: FetchResult) -> dict[str, str]:
    out = {k: v for k, v in result.headers.items() if k.lower() in _PW_ANSWER_HEADERS}
    if result.content_type and not any(k.lower() == "content-type" for k in out):
        out["Content-Type"] = result.content_type
    return out




def build_pages(count: int) -> dict[str, FetchResult]:
    """``count`` shells and their scripts, by URL."""
    rng = random.Random(37)
    out: dict[str, FetchResult] = {}
    for n in range(count):
        url = f"http://h{n % 20}.render.example/p{n}.html"
        text = " ".join(rng.choice(_WORDS) for _ in range(200))
        links = " ".join(f'<a href="/q{rng.randrange(1000)}.html">q</a>' for _ in range(6))
        content = f"<h1>page {n}</h1><p>{text}</p>{links}"
        script = url.rsplit("/", 1)[0] + f"/static/p{n}.js"
        js = f"document.getElementById('root').innerHTML = {json.dumps(content)};"
        html = f'<!DOCTYPE html><html><head><title>p{n}</title></head><body><div id="root"></div><script src="/static/p{n}.js"></script></body></html>'
        out[url] = FetchResult(url, url, 200, {"Content-Type": "text/html"}, html.encode(), "text/html")
        out[script] = FetchResult(script, script, 200, {}, js.encode(), "application/javascript")
    return out


class MemoryFetcher:
    """The crawler's fetcher, answering from memory."""

    def __init__(self, pages: dict[str, FetchResult]) -> None:
        self.pages = pages
        self.counters: collections.Counter[str] = collections.Counter()

    async def fetch(self, url: str, *, any_type: bool = False, conditional: Any = None) -> FetchResult:
        await asyncio.sleep(0)
        return self.pages.get(url) or FetchResult(url, url, 0, error="dns")


def _kind(proc: psutil.Process, me: int) -> str:
    """What a process under this one is: Chromium's by its ``--type`` (its command line)."""
    if proc.pid == me:
        return "this process"
    if proc.name().startswith("node"):
        return "node"
    flags = " ".join(proc.cmdline())
    if "--type=" not in flags:
        return "browser"
    kind = flags.split("--type=", 1)[1].split()[0]
    return {"utility": "network", "gpu-process": "gpu"}.get(kind, kind)


def tree_cpu() -> dict[str, float]:
    """CPU seconds so far of this process and of every process under it, by kind (psutil)."""
    me = psutil.Process()
    out: dict[str, float] = collections.defaultdict(float)
    for proc in [me, *me.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):  # gone since the listing
            used = proc.cpu_times()
            out[_kind(proc, me.pid)] += used.user + used.system
    return out


class Messages:
    """The protocol's messages a render (``--messages``): counted by method, with their
    bytes, as the pipe encodes and decodes them (its ``json`` module, wrapped)."""

    def __init__(self) -> None:
        self.count: collections.Counter[str] = collections.Counter()
        self.size: collections.Counter[str] = collections.Counter()
        self.raw: list[bytes] = []  # the messages read, for the codec's cost
        self.sent: list[Any] = []

    def loads(self, raw: bytes) -> Any:
        message = json.loads(raw)
        self.raw.append(bytes(raw))
        kind = "in " + (message.get("method") or "answer")
        self.count[kind] += 1
        self.size[kind] += len(raw)
        return message

    def dumps(self, message: Any) -> str:
        text = json.dumps(message)
        self.sent.append(message)
        self.count["out " + message["method"]] += 1
        self.size["out " + message["method"]] += len(text)
        return text

    def clear(self) -> None:
        for part in (self.count, self.size, self.raw, self.sent):
            part.clear()

    def report(self, renders: int) -> None:
        for kind, n in self.count.most_common():
            print(f"    {n / renders:5.2f} a render, {self.size[kind] / n:6.0f} B each: {kind}")
        # the codec's CPU over the same messages: the json module's, and orjson's (a dependency already)
        import orjson

        for name, decode, encode in (("json", json.loads, json.dumps), ("orjson", orjson.loads, orjson.dumps)):
            start = time.process_time()
            for _ in range(10):
                for raw in self.raw:
                    decode(raw)
                for message in self.sent:
                    encode(message)
            print(f"    {name}: {(time.process_time() - start) / 10 / renders * 1000:.3f} ms CPU a render to decode and encode")


MESSAGES = Messages()


async def measure(driver: str, pages: dict[str, FetchResult], args: argparse.Namespace) -> dict[str, Any]:
    settings = FetchSettings(render="always", render_contexts=args.contexts, browser=args.browser)
    fetcher = MemoryFetcher(pages)
    browser = browser_path(settings)
    assert browser is not None
    renderer: Any
    if driver == "playwright":
        renderer = PlaywrightRenderer(settings, fetcher, browser)  # type: ignore[arg-type]
    else:
        renderer = BrowserRenderer(settings, fetcher, browser)  # type: ignore[arg-type]
    launch = render_launch.LAUNCH
    if driver == "cdp+":
        render_launch.LAUNCH = (*(a for a in launch if a not in args.without.split()), *args.flags.split())
    shells = [r for u, r in pages.items() if u.endswith(".html")]
    semaphore = asyncio.Semaphore(args.contexts)

    async def one(result: FetchResult) -> bytes:
        async with semaphore:
            return await renderer.render(result)  # type: ignore[no-any-return]

    counting = args.messages and driver != "playwright"
    try:
        started, begun = tree_cpu(), time.perf_counter()
        renderer.warm()
        await renderer._warming
        ready, start_wall = tree_cpu(), time.perf_counter() - begun
        await asyncio.gather(*(one(r) for r in shells[:10]))  # warm-up
        if counting:
            render_pipe.json = MESSAGES  # type: ignore[assignment,attr-defined]
            MESSAGES.clear()
        before = tree_cpu()
        start = time.perf_counter()
        doms = await asyncio.gather(*(one(r) for r in shells[10:]))
        wall = time.perf_counter() - start
        after = tree_cpu()
    finally:
        render_pipe.json = json  # type: ignore[attr-defined]
        await renderer.close()
        render_launch.LAUNCH = launch
    built = sum(1 for d in doms if b"<h1>page" in d)
    n = len(doms)
    by = {k: (after[k] - before.get(k, 0.0)) / n * 1000 for k in after}
    start_cpu = {k: (ready[k] - started.get(k, 0.0)) * 1000 for k in ready}
    if counting:
        MESSAGES.report(n)
    return {"renders": n, "built": built, "wall": wall, "cpu": sum(by.values()), "by": by,
            "start": start_wall, "start_cpu": start_cpu}  # fmt: skip


async def main_async(args: argparse.Namespace) -> None:
    pages = build_pages(args.pages + 10)
    drivers = args.drivers.split(",")
    runs: dict[str, list[dict[str, Any]]] = {d: [] for d in drivers}
    print(f"{args.pages} renders a run after 10 to warm up, {args.contexts} contexts, browser {args.browser}; "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    for r in range(args.rounds):
        for driver in drivers[r % len(drivers) :] + drivers[: r % len(drivers)]:
            res = await measure(driver, pages, args)
            runs[driver].append(res)
            by = ", ".join(f"{k} {v:.1f}" for k, v in sorted(res["by"].items()))
            at_start = ", ".join(f"{k} {v:.0f}" for k, v in sorted(res["start_cpu"].items()))
            print(f"  round {r + 1} {driver:>10}: {res['cpu']:6.1f} ms CPU a render ({by}), "
                  f"{res['renders'] / res['wall']:5.1f} renders/s, {res['built']}/{res['renders']} built; the browser's "
                  f"start {res['start']:.2f} s, its CPU ms {at_start}")  # fmt: skip
    print("medians:")
    for driver in drivers:
        cpu = statistics.median(r["cpu"] for r in runs[driver])
        print(f"  {driver:>10}: {cpu:6.1f} ms CPU a render")
    if len(drivers) == 2:
        a, b = (statistics.median(r["cpu"] for r in runs[d]) for d in drivers)
        print(f"  {drivers[1]} / {drivers[0]}: {b / a:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--contexts", type=int, default=2)
    parser.add_argument("--browser", default="auto")
    parser.add_argument("--drivers", default="playwright,cdp", help="playwright, cdp, cdp+ (cdp with --flags, --without)")
    parser.add_argument("--flags", default="", help="browser flags cdp+ adds")
    parser.add_argument("--without", default="", help="browser flags cdp+ leaves out")
    parser.add_argument("--messages", action="store_true", help="the protocol's messages a render, and the codec's CPU")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
