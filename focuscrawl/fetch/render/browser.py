"""The browser driven over the DevTools protocol directly (:mod:`.pipe`), with no
driver process between the crawler and the browser (Playwright's Node driver cost
some 12 ms of CPU a render, and its client in the crawler 3 ms more:
``benchmarks/bench_cdp.py`` measures the two drivers on the same pages).

Every request of a page is paused by the protocol's Fetch domain and answered by the
crawler's own fetcher (:meth:`BrowserRenderer._answer`), as
:mod:`focuscrawl.fetch.render` describes; new pages a page opens (popups) are attached
paused and closed before they load anything, downloads are denied, dialogs dismissed,
service workers never registered.

Speed (``benchmarks/bench_render.py``): the browser and its pool of contexts are
started when the fetcher opens, beside the crawl's first requests, not when the first
shell is met; each context keeps one page (a tab), reused from page to page, and one
renderer process (``--renderer-process-limit``, site isolation off), reused from page
to page whatever their site, where Chromium would start a process for each page. A
page's DOM is taken after its load event: at once when the page has nothing pending
then, else after a short quiet window (:mod:`.quiet`), so data a script fetches after
loading is in it, with no fixed wait. The DOM is serialised by a script in the page's own world.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import shutil
import tempfile
from typing import Any

from focuscrawl.fetch.base import SCOPE
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.fetch.render.kept import KEPT_TYPES, KeptAnswers
from focuscrawl.fetch.render.launch import browser_flags
from focuscrawl.fetch.render.pipe import BrowserError, BrowserGone, DevToolsPipe
from focuscrawl.fetch.render.quiet import WATCH, settle
from focuscrawl.fetch.render.tab import Tab
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult
from focuscrawl.urls import normalize_url

log = logging.getLogger(__name__)

# a tab's renderer has its garbage collected after this many pages (BrowserRenderer._collect)
COLLECT_EVERY = 50
_BLOCKED = frozenset({"Image", "Font", "Media"})
# a page may not register a service worker (it would answer the page's requests itself)
_NO_SERVICE_WORKERS = (
    "if (navigator.serviceWorker) navigator.serviceWorker.register = "
    "() => Promise.reject(new DOMException('blocked', 'SecurityError'));"
)


class BrowserRenderer:
    """A headless Chromium and a pool of contexts rendering fetched pages."""

    def __init__(self, settings: FetchSettings, fetcher: HttpFetcher, browser: str) -> None:
        self.settings = settings
        self.fetcher = fetcher
        self.browser = browser  # the executable
        self._pipe: DevToolsPipe | None = None
        self._profile: str | None = None
        self._generation = 0
        self._lock = asyncio.Lock()
        # tabs ready to render; None wakes a render waiting for one to make one itself
        self._tabs: asyncio.Queue[Tab | None] = asyncio.Queue()
        self._made = 0
        self._attached: dict[str, asyncio.Future[str]] = {}  # a context being made -> its page's session
        self._live: dict[str, Tab] = {}  # session -> tab
        self._warming: asyncio.Task[None] | None = None
        self._background: set[asyncio.Future[Any]] = set()  # answers to the browser's events under way
        self.kept = KeptAnswers()

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def warm(self) -> None:
        """Start the browser and fill the pool in the background (the crawl goes on)."""
        if self._warming is None:
            self._warming = asyncio.ensure_future(self._warm())

    async def _warm(self) -> None:
        try:
            await self._ensure_browser()
            missing = max(self.settings.render_contexts - self._made, 0)
            self._made += missing
            tabs = await asyncio.gather(*(self._new_tab() for _ in range(missing)), return_exceptions=True)
            for tab in tabs:
                if isinstance(tab, BaseException):
                    self._made -= 1
                else:
                    self._tabs.put_nowait(tab)
        except Exception as exc:  # the first page to render meets it again, and counts it
            log.info("browser not started ahead: %s", str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)

    async def _ensure_browser(self) -> DevToolsPipe:
        async with self._lock:
            if self._pipe is not None and self._pipe.alive:
                return self._pipe
            if self._pipe is not None:
                await self._pipe.close(1.0)
            if self._profile is None:
                self._profile = tempfile.mkdtemp(prefix="focuscrawl-browser-")
            argv = [self.browser, *browser_flags(self.settings), f"--user-data-dir={self._profile}"]
            pipe = await DevToolsPipe.launch(argv)
            self._generation += 1
            self._made = 0
            self._attached.clear()
            self._live.clear()
            for _ in range(self.settings.render_contexts):  # renders waiting for a tab make one
                self._tabs.put_nowait(None)
            pipe.on(None, lambda method, params: self._on_browser(pipe, method, params))
            # a page waiting for its document to stop loading learns the browser is gone
            pipe.when_gone = functools.partial(self._gone, self._generation)
            # every new page, popups included, is attached paused before it loads anything
            await pipe.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
            self._pipe = pipe
            return pipe

    def _on_browser(self, pipe: DevToolsPipe, method: str, params: dict[str, Any]) -> None:
        if method == "Target.attachedToTarget":
            info, session = params["targetInfo"], params["sessionId"]
            waiting = self._attached.get(info.get("browserContextId", ""))
            if info.get("type") == "page" and waiting is not None and not waiting.done():
                waiting.set_result(session)  # the page of a context being made
            elif info.get("type") == "page" and info.get("browserContextId") in self._attached:
                self._spawn(self._close_popup(pipe, session, info["targetId"]))
            else:  # a page of the browser's own (its first blank one) or a worker: let it be
                self._spawn(self._quietly(pipe, "Runtime.runIfWaitingForDebugger", {}, session))
        elif method == "Target.detachedFromTarget":
            tab = self._live.pop(params.get("sessionId", ""), None)
            if tab is not None:
                tab.broken()

    @staticmethod
    async def _close_popup(pipe: DevToolsPipe, session: str, target: str) -> None:
        """Close a popup of one of the pool's pages. It shares its opener's renderer, which
        waits while the popup waits for us: the popup runs with its requests held (the
        Fetch domain on, nothing answered) and is closed."""
        with contextlib.suppress(BrowserError):
            await pipe.send("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}, session)
            await pipe.send("Runtime.runIfWaitingForDebugger", {}, session)
            await pipe.send("Target.closeTarget", {"targetId": target})

    @staticmethod
    async def _quietly(pipe: DevToolsPipe, method: str, params: dict[str, Any], session: str | None = None) -> None:
        with contextlib.suppress(BrowserError):
            await pipe.send(method, params, session)

    async def _new_tab(self) -> Tab:
        pipe = await self._ensure_browser()
        generation = self._generation
        context = (await pipe.send("Target.createBrowserContext", {"disposeOnDetach": False}))["browserContextId"]
        attached = self._attached[context] = asyncio.get_running_loop().create_future()
        try:
            await pipe.send("Browser.setDownloadBehavior", {"behavior": "deny", "browserContextId": context})
            target = (await pipe.send("Target.createTarget", {"url": "about:blank", "browserContextId": context}))["targetId"]
            session = await asyncio.wait_for(attached, 30.0)
        except BaseException:
            self._attached.pop(context, None)
            await self._quietly(pipe, "Target.disposeBrowserContext", {"browserContextId": context})
            raise
        tab = Tab(context, target, session, generation)
        self._live[session] = tab
        pipe.on(session, lambda method, params: self._on_tab(tab, method, params))
        await asyncio.gather(
            pipe.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}, session),
            pipe.send("Page.enable", {}, session),
            pipe.send("Page.addScriptToEvaluateOnNewDocument", {"source": f"{_NO_SERVICE_WORKERS}\n{WATCH}"}, session),
            pipe.send("Emulation.setUserAgentOverride", {"userAgent": self.settings.user_agent}, session),
        )  # fmt: skip
        await pipe.send("Runtime.runIfWaitingForDebugger", {}, session)
        return tab

    def _on_tab(self, tab: Tab, method: str, params: dict[str, Any]) -> None:
        if method == "Fetch.requestPaused":
            self._spawn(self._answer(tab, params))
        elif method == "Page.frameNavigated":
            if params.get("frame", {}).get("id") == tab.target:
                tab.shown = params["frame"].get("loaderId", "")
        elif method == "Page.frameStoppedLoading":
            # after the load event, or cut short (a navigation away the page started,
            # answered 204: the page stays as it is)
            if params.get("frameId") == tab.target:
                tab.stopped.add(tab.shown)
                tab.changed.set()
        elif method == "Page.javascriptDialogOpening":  # an alert() would hold the page
            pipe = self._pipe
            if pipe is not None:
                self._spawn(self._quietly(pipe, "Page.handleJavaScriptDialog", {"accept": False}, tab.session))
        elif method == "Inspector.targetCrashed":
            tab.broken()

    def _gone(self, generation: int) -> None:
        for tab in self._live.values():
            if tab.generation == generation:
                tab.broken()

    async def _tab(self) -> Tab:
        """A tab ready to render (reused while it behaves)."""
        if self._warming is not None and not self._warming.done():
            await asyncio.shield(self._warming)
        await self._ensure_browser()
        while True:
            if self._tabs.empty() and self._made < self.settings.render_contexts:
                self._made += 1
                try:
                    return await self._new_tab()
                except BaseException:
                    self._made -= 1
                    raise
            tab = await self._tabs.get()
            if tab is None or tab.generation != self._generation:
                continue  # (a wake-up, or a tab of a browser gone)
            if not tab.crashed:
                return tab
            await self._put_back(tab, healthy=False)

    async def render(self, result: FetchResult) -> bytes:
        """The DOM the browser built from ``result`` (serialised), or an exception
        (``TimeoutError``, :class:`BrowserError`) that the caller counts."""
        tab = await self._tab()
        pipe = self._pipe
        healthy = False
        try:
            if pipe is None:
                raise BrowserGone("browser closed")
            tab.result = result
            async with asyncio.timeout(self.settings.render_timeout):
                navigated = await pipe.send("Page.navigate", {"url": result.final_url}, tab.session)
                if navigated.get("errorText"):
                    raise BrowserError(navigated["errorText"])
                # this navigation's document stopped loading (its loader), whenever that came
                loader = navigated.get("loaderId")
                while loader and loader not in tab.stopped:
                    if tab.crashed:
                        raise BrowserError("page crashed")
                    tab.changed.clear()
                    await tab.changed.wait()
                if tab.crashed:
                    raise BrowserError("page crashed")
                answer = await settle(pipe, tab, self.fetcher.counters)
            html = answer.get("result", {}).get("value")
            if not isinstance(html, str):  # a page that broke its own serialiser
                raise BrowserError("the page's DOM could not be serialised")
            healthy = True
            return html.encode("utf-8")
        finally:
            await self._put_back(tab, healthy and not tab.crashed)

    async def _put_back(self, tab: Tab, healthy: bool) -> None:
        """Keep the tab for the next page; a tab that misbehaved is closed with its
        context, and a browser that does not answer is closed (started again)."""
        tab.result = None
        tab.stopped.clear()
        tab.busy = 0
        for sub in tab.subs:  # a request that never ends holds no host's slot
            sub.cancel()
        tab.subs.clear()
        pipe = self._pipe
        if tab.generation != self._generation or pipe is None:
            return
        if healthy:
            tab.renders += 1
            if tab.renders % COLLECT_EVERY:
                self._tabs.put_nowait(tab)
            else:
                self._spawn(self._collect(pipe, tab))
            return
        self._made = max(0, self._made - 1)
        self._tabs.put_nowait(None)  # a render waiting for a tab makes one
        self._live.pop(tab.session, None)
        self._attached.pop(tab.context, None)
        pipe.on(tab.session, None)
        try:
            await asyncio.wait_for(pipe.send("Target.disposeBrowserContext", {"browserContextId": tab.context}), 5.0)
        except Exception:  # a hung or dead browser: started again for the next page
            if pipe.alive:
                log.warning("browser not answering: restarted for the next page")
            async with self._lock:
                if self._pipe is pipe:
                    self._pipe = None
                    self._generation += 1
            await pipe.close(1.0)

    async def _collect(self, pipe: DevToolsPipe, tab: Tab) -> None:
        """Collect the garbage of the tab's renderer, then give the tab back: each page
        leaves its document to a collector that does not feel the need (a renderer grew
        by 0.35 MiB a page, 8 renderers to 1.1 GiB; collected every 50 pages, 0.2 GiB)."""
        with contextlib.suppress(BrowserError, TimeoutError):
            await asyncio.wait_for(pipe.send("HeapProfiler.collectGarbage", {}, tab.session), 5.0)
        self._tabs.put_nowait(tab)

    async def _answer(self, tab: Tab, paused: dict[str, Any]) -> None:
        """One request of a page, answered by the crawler's fetcher (or refused: an
        image's, a navigation away, one of a page no longer rendered)."""
        pipe = self._pipe
        if pipe is None:
            return
        SCOPE.set(None)  # a page's own requests go where its page needs (this task's context)
        request_id = paused["requestId"]
        request = paused["request"]
        url = request["url"]
        result = tab.result
        try:
            if result is None or paused.get("resourceType") in _BLOCKED or request.get("method") != "GET":
                await tab.fail(pipe, request_id, "BlockedByClient")
                return
            if paused.get("resourceType") == "Document" and paused.get("frameId") == tab.target:
                if url != result.final_url.split("#", 1)[0] or paused.get("redirectedRequestId"):
                    # no navigation away from the page: a 204 leaves the page as it is
                    # (a refused navigation would put an error page in its place)
                    await tab.fulfill(pipe, request_id, FetchResult(url, url, 204))
                    return
                await tab.fulfill(pipe, request_id, result)
                return
            kept, ask = self.kept.get(url) if paused.get("resourceType") in KEPT_TYPES else (None, {})
            if kept is not None:  # no request: still, none the crawler would refuse now
                if (target := normalize_url(url)) is None or await self.fetcher.admission.admit(target):
                    self.fetcher.counters["render_subrequest_refused"] += 1
                    await tab.fail(pipe, request_id, "BlockedByClient")
                    return
                self.fetcher.counters["render_subrequest_kept"] += 1
                await tab.fulfill(pipe, request_id, kept)
                return
            loop = asyncio.get_running_loop()
            tab.busy += 1
            tab.last = loop.time()
            fetching = asyncio.ensure_future(self.fetcher.fetch(url, any_type=True, conditional=ask))
            tab.subs.add(fetching)
            try:
                await asyncio.wait({fetching})
            finally:
                fetching.cancel()
                tab.subs.discard(fetching)
                if tab.result is result:
                    tab.busy = max(0, tab.busy - 1)
                    tab.last = loop.time()
            if fetching.cancelled():  # its page was taken (or given up) meanwhile
                await tab.fail(pipe, request_id, "Aborted")
                return
            sub = fetching.result()
            if ask and sub.error is None and sub.status == 304:  # still what was kept
                renewed = self.kept.renewed(url, sub)
                if renewed is not None:
                    self.fetcher.counters["render_subrequest_revalidated"] += 1
                    await tab.fulfill(pipe, request_id, renewed)
                    return
            if sub.error is not None or sub.status == 0:
                self.fetcher.counters["render_subrequest_refused"] += 1
                await tab.fail(pipe, request_id, "BlockedByClient")
                return
            if paused.get("resourceType") in KEPT_TYPES:
                self.kept.keep(url, sub)
            await tab.fulfill(pipe, request_id, sub)
        except BrowserError:  # the page or the browser went away meanwhile
            pass

    async def close(self) -> None:
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            with contextlib.suppress(BaseException):
                await self._warming
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            await pipe.close()
        for task in list(self._background):  # answers to a browser now gone
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None
