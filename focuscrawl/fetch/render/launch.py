"""The flags the renderer's browser is launched with, and why each."""

from __future__ import annotations

from focuscrawl.settings import FetchSettings

# the browser's own network goes to a closed port (loopback included): every request of a
# page is answered through the Fetch domain, and what would slip past it (a download the
# browser starts itself, a prefetch) reaches nothing, whatever its address
ARGS = (
    "--no-sandbox", "--disable-gpu", "--js-flags=--max-old-space-size=256",
    "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
)  # fmt: skip
# pages of every site share their context's renderer process, page after page: Chromium
# otherwise starts a new renderer for each page it navigates to (some 15 ms of the
# renderer's CPU and 10 ms of the browser's a render, bench_render.py); the review of what
# site isolation gave up is in docs/content.md
_SHARED_PROCESS = ("--disable-site-isolation-trials",)


def process_flags(settings: FetchSettings) -> list[str]:
    """One renderer process for each context of the pool (a soft limit: contexts never share one)."""
    return [*_SHARED_PROCESS, f"--renderer-process-limit={max(1, settings.render_contexts)}"]


# what Playwright's launch turns off that a crawler's browser does not need either: its
# own background traffic, throttling of pages out of view, features that change a page
# between runs (HTTPS upgrades of http:// navigations: every request is the crawler's)
LAUNCH = (
    "--headless", "--remote-debugging-pipe", "--no-startup-window", "--no-first-run",
    "--no-default-browser-check", "--disable-background-networking", "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows", "--disable-renderer-backgrounding", "--disable-breakpad",
    "--disable-component-update", "--disable-component-extensions-with-background-pages", "--disable-default-apps",
    "--disable-dev-shm-usage", "--disable-extensions", "--disable-sync", "--disable-hang-monitor",
    "--disable-ipc-flooding-protection", "--disable-prompt-on-repost", "--disable-field-trial-config",
    "--disable-back-forward-cache", "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
    "--mute-audio", "--hide-scrollbars",
    # frames made when something asks for one, not at the display's rate: the page's
    # requestAnimationFrame, IntersectionObserver and timers run as before (nothing is
    # shown: there is no screen); a quarter of a render's CPU (bench_cdp.py --without)
    "--enable-begin-frame-control",
    # RenderDocument off: a navigation reuses the page's frame (its renderer-side frame,
    # widget and compositor) instead of building new ones for each document; the new
    # document still gets a new window and script realm. A third of a render's CPU
    # (bench_cdp.py --without/--flags, 33 -> 21 ms)
    "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,MediaRouter,OptimizationHints,Translate,"
    "NetworkTimeServiceQuerying,PaintHolding,DestroyProfileOnBrowserClose,AvoidUnnecessaryBeforeUnloadCheckSync,"
    "RenderDocument",
)  # fmt: skip


def browser_flags(settings: FetchSettings) -> list[str]:
    """Every flag of the browser but its profile directory."""
    return [*LAUNCH, *ARGS, *process_flags(settings)]
