"""Pages built by scripts, rendered by a headless Chromium (issue 37 item 1).

``fetch.render``: ``never`` (the default), ``auto`` (a page whose HTML looks like a
script shell, :func:`looks_like_shell`), ``always``. The browser is the system's
headless Chromium (``fetch.browser``; ``auto``: :func:`browser_path`) driven by
Playwright for Python; no browser is ever downloaded. Debian's
``chromium-headless-shell`` is Chromium's old headless mode, the same engine without
the browser UI (no UI renderer, a lighter browser process): half the CPU a render of
``chromium`` and 60 % of its memory (``bench_render.py --browser``), so ``auto`` takes
it when it is installed.

Every request the page makes goes through the crawler's own fetcher (Playwright's
route interception answers each from :meth:`HttpFetcher.fetch`): the address policy,
the proxy, robots.txt and the host's delay hold for a script or a style sheet as for
a page, and a private address the plain fetcher refuses is refused to the page too.
The page's own document is answered with the response already fetched (no second
request). Images, fonts and media are never requested; navigations away from the
page, popups and downloads are refused, and the browser has no network of its own (a
proxy at a closed port): a download it would start itself, past the interception,
reaches nothing. A page has ``fetch.render_timeout`` seconds of
wall-clock time; each renderer process has a JavaScript heap cap. Pages render in a
pool of ``fetch.render_contexts`` browser contexts, as many pages at once; a browser
that dies is started again for the next page.

Speed (``benchmarks/bench_render.py``): the browser and its pool of contexts are
started when the fetcher opens, beside the crawl's first requests, not when the first
shell is met; each context keeps one page, reused from page to page, and one renderer
process (``--renderer-process-limit``, site isolation off), reused from page to page
whatever their site, where Chromium would start a process for each page. A page's DOM is
taken after its load event and a short quiet window (:data:`QUIET` seconds without a
request of the page under way, at most :data:`SETTLE` seconds: a page that polls is
taken as it is then), so data a script fetches after loading is in it, with no fixed
wait. The DOM is serialised by a script in the page's own world (what
``page.content()`` returns, without building Playwright's utility world in every new
document).

A page that cannot be rendered (out of time, a crashed browser) is one logged
failure of its rendering (counter ``render_failed_<why>``): the page is recorded
from its HTML as fetched, so nothing is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import shutil
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult

log = logging.getLogger(__name__)

RENDER_MODES = ("never", "auto", "always")
_BLOCKED = frozenset({"image", "font", "media"})
_ROOT_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "svelte", "main-app", "react-root"})
_SHELL_WORDS = 50  # visible words below which a page with scripts may be a shell
_ANSWER_HEADERS = ("content-type", "cache-control", "location")
QUIET = 0.1  # seconds without a request of the page under way after its load event
SETTLE = 1.0  # at most this long waiting for that quiet after the load event
# the browser's own network goes to a closed port (loopback included): every request of a
# page is answered by route interception, and what would slip past it (a download the
# browser starts itself, a prefetch) reaches nothing, whatever its address
_ARGS = (
    "--no-sandbox", "--disable-gpu", "--js-flags=--max-old-space-size=256",
    "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
)  # fmt: skip
# pages of every site share their context's renderer process, page after page: Chromium
# otherwise starts a new renderer for each page it navigates to (some 15 ms of the
# renderer's CPU and 10 ms of the browser's a render, bench_render.py); the review of what
# site isolation gave up is in docs/content.md
_SHARED_PROCESS = ("--disable-site-isolation-trials",)
# ``fetch.browser = "auto"``: the first of these on the PATH
BROWSERS = ("chromium-headless-shell", "chromium")


def browser_path(settings: FetchSettings) -> str | None:
    """The browser ``fetch.browser`` names (``auto``: the first of :data:`BROWSERS` on
    the PATH), or None when it names none to run."""
    if settings.browser == "auto":
        return next(filter(None, map(shutil.which, BROWSERS)), None)
    return settings.browser if os.access(settings.browser, os.X_OK) else None


def _process_args(settings: FetchSettings) -> list[str]:
    """One renderer process for each context of the pool (a soft limit: contexts never share one)."""
    return [*_SHARED_PROCESS, f"--renderer-process-limit={max(1, settings.render_contexts)}"]


# the page's DOM serialised in the page's own world: Playwright's ``page.content()`` first
# builds its utility world in each new document: some 40 ms of a 130 ms render here
_SERIALISE = """() => {
    const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "";
    return doctype + (document.documentElement ? document.documentElement.outerHTML : "");
}"""


def looks_like_shell(body: bytes) -> bool:
    """``auto``'s rule: little visible text (under 50 words) and a script, with a known
    framework root (``<div id="root">``, ``#app``, ``#__next``...) or scripts making up
    most of the bytes, or at most one link to follow.

    >>> looks_like_shell(b'<html><body><div id="root"></div><script src="/app.js"></script></body></html>')
    True
    >>> looks_like_shell(b'<html><body><p>' + b'word ' * 80 + b'</p><script>x()</script></body></html>')
    False
    >>> looks_like_shell(b'<html><body><p>Hello</p><a href="/a">a</a><a href="/b">b</a></body></html>')
    False
    """
    tree = LexborHTMLParser(body)
    scripts = tree.css("script")
    if not scripts:
        return False
    script_bytes = sum(len(node.text() or "") for node in scripts)
    for node in tree.css("script, style, noscript, template"):
        node.decompose()
    root = tree.body
    words = len((root.text(separator=" ") if root is not None else "").split())
    if words >= _SHELL_WORDS:
        return False
    framework = any((node.attributes.get("id") or "") in _ROOT_IDS for node in tree.css("[id]"))
    links = len(tree.css("a[href]"))
    # a shell often keeps a "home" link in its HTML: one link is still no page to follow
    return framework or links <= 1 or script_bytes > len(body) // 2


class BrowserRenderer:
    """A headless Chromium and a pool of contexts rendering fetched pages."""

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
                executable_path=self.browser, headless=True, args=[*_ARGS, *_process_args(self.settings)],
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
                html: str = await page.evaluate(_SERIALISE)
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
            if result is None or request.resource_type in _BLOCKED or request.method != "GET":
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
    out = {k: v for k, v in result.headers.items() if k.lower() in _ANSWER_HEADERS}
    if result.content_type and not any(k.lower() == "content-type" for k in out):
        out["Content-Type"] = result.content_type
    return out


class RenderingFetcher(HttpFetcher):
    """The crawler's fetcher, with pages rendered as ``fetch.render`` says."""

    def __init__(self, settings: FetchSettings, *args: Any, **kwargs: Any) -> None:
        if importlib.util.find_spec("playwright") is None:
            raise ConfigError("config: fetch.render needs Playwright for Python: pip install 'focuscrawl[render]'")
        browser = browser_path(settings)
        if browser is None and settings.browser == "auto":
            raise ConfigError(
                "config: fetch.render needs a headless Chromium: neither chromium-headless-shell nor chromium is "
                "on the PATH (apt-get install chromium-headless-shell), or set fetch.browser to one"
            )
        if browser is None:
            raise ConfigError(f"config: fetch.browser {settings.browser!r} is not a browser to run (Chromium)")
        super().__init__(settings, *args, **kwargs)
        self.renderer = BrowserRenderer(settings, self, browser)

    async def __aenter__(self) -> RenderingFetcher:
        await super().__aenter__()
        self.renderer.warm()  # the browser starts beside the crawl's first requests
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.renderer.close()
        await super().__aexit__(*exc)

    async def fetch(self, url: str, *, any_type: bool = False) -> FetchResult:
        result = await super().fetch(url, any_type=any_type)
        if any_type or not result.ok or result.content_type not in ("text/html", "application/xhtml+xml"):
            return result
        if self.settings.render == "auto" and not looks_like_shell(result.body):
            return result
        self.counters["render_pages"] += 1
        task = asyncio.current_task()
        if task is not None:  # a page being rendered is work under way: a stop's grace waits for it
            self._sending.add(task)
        try:
            result.rendered = await self.renderer.render(result)
        except TimeoutError:
            self.counters["render_failed_timeout"] += 1
            log.info("%s: not rendered in %g s", url, self.settings.render_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a crashed browser, a closed page: this page's rendering
            self.counters[f"render_failed_{type(exc).__name__}"] += 1
            log.info("%s: not rendered (%s)", url, str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
        finally:
            self._sending.discard(task)
        return result
