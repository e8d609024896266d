"""Pages built by scripts, rendered by a headless Chromium (issue 37 item 1).

``fetch.render``: ``never`` (the default), ``auto`` (a page whose HTML looks like a
script shell, :func:`looks_like_shell`), ``always``. The browser is the system's
headless Chromium (``fetch.browser``; ``auto``: :func:`browser_path`), driven over
the DevTools protocol on its own pipe (:mod:`focuscrawl.fetch.render_cdp`); no
browser is ever downloaded and no driver process runs between the crawler and the
browser. Debian's ``chromium-headless-shell`` is Chromium's old headless mode, the same
engine without the browser UI (no UI renderer, a lighter browser process): half the
CPU a render of ``chromium`` and 60 % of its memory (``bench_render.py --browser``), so
``auto`` takes it when it is installed.

Every request the page makes goes through the crawler's own fetcher (the protocol's
Fetch domain pauses each and :meth:`HttpFetcher.fetch` answers it): the address policy,
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

A page that cannot be rendered (out of time, a crashed browser) is one logged
failure of its rendering (counter ``render_failed_<why>``): the page is recorded
from its HTML as fetched, so nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.fetch.render_cdp import BrowserRenderer
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult

log = logging.getLogger(__name__)

RENDER_MODES = ("never", "auto", "always")
_ROOT_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "svelte", "main-app", "react-root"})
_SHELL_WORDS = 50  # visible words below which a page with scripts may be a shell
# ``fetch.browser = "auto"``: the first of these on the PATH
BROWSERS = ("chromium-headless-shell", "chromium")


def browser_path(settings: FetchSettings) -> str | None:
    """The browser ``fetch.browser`` names (``auto``: the first of :data:`BROWSERS` on
    the PATH), or None when it names none to run."""
    if settings.browser == "auto":
        return next(filter(None, map(shutil.which, BROWSERS)), None)
    return settings.browser if os.access(settings.browser, os.X_OK) else None


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


class RenderingFetcher(HttpFetcher):
    """The crawler's fetcher, with pages rendered as ``fetch.render`` says."""

    def __init__(self, settings: FetchSettings, *args: Any, **kwargs: Any) -> None:
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
