"""The crawler's fetcher with pages rendered as ``fetch.render`` says, and the browser
it runs (``fetch.browser``)."""


from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Mapping
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.base import HAND_OFF
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.fetch.render.browser import BrowserRenderer
from focuscrawl.fetch.render.shell import looks_like_shell
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult

log = logging.getLogger(__name__)

RENDER_MODES = ("never", "auto", "always")
# ``fetch.browser = "auto"``: the first of these on the PATH
BROWSERS = ("chromium-headless-shell", "chromium")


def browser_path(settings: FetchSettings) -> str | None:
    """The browser ``fetch.browser`` names (``auto``: the first of :data:`BROWSERS` on
    the PATH), or None when it names none to run."""
    if settings.browser == "auto":
        return next(filter(None, map(shutil.which, BROWSERS)), None)
    return settings.browser if os.access(settings.browser, os.X_OK) else None


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

    async def fetch(self, url: str, *, any_type: bool = False, conditional: Mapping[str, str] | None = None) -> FetchResult:
        result = await super().fetch(url, any_type=any_type, conditional=conditional)
        if any_type or not result.ok or result.content_type not in ("text/html", "application/xhtml+xml"):
            return result
        if self.settings.render == "auto" and not looks_like_shell(result.body):
            return result
        self.counters["render_pages"] += 1
        handed = HAND_OFF.get()
        if handed is not None:  # the crawl's window gives this page's slot back meanwhile
            handed()
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
