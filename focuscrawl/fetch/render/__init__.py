"""Pages built by scripts, rendered by a headless Chromium (issue 37 item 1).

``fetch.render``: ``never`` (the default), ``auto`` (a page whose HTML looks like a
script shell, :func:`looks_like_shell`), ``always``. The browser is the system's
headless Chromium (``fetch.browser``; ``auto``: :func:`browser_path`), driven over
the DevTools protocol on its own pipe (:mod:`.browser`, over :mod:`.pipe`); no
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

from focuscrawl.fetch.render.fetcher import BROWSERS, RENDER_MODES, RenderingFetcher, browser_path
from focuscrawl.fetch.render.shell import looks_like_shell

__all__ = ["BROWSERS", "RENDER_MODES", "RenderingFetcher", "browser_path", "looks_like_shell"]
