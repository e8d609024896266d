"""When a rendered page's DOM is taken (:mod:`focuscrawl.fetch.render.quiet`): at once
when the page has nothing pending at its load event, after the quiet window otherwise,
and the same DOM either way."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.render import RenderingFetcher, browser_path
from focuscrawl.settings import FetchSettings
from tests.sites import respond, serve

pytestmark = pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")


def _page(script: str) -> str:
    return f"<!DOCTYPE html><html><body><div id='root'></div><script>{script}</script></body></html>"


_ADD = "const add = (t) => { document.getElementById('root').innerHTML += '<p>' + t + '</p>'; };"


async def _render(routes: dict[str, object], path: str) -> tuple[bytes, int]:
    """The DOM of ``path`` rendered, and whether it was taken at once (the counter)."""
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        result = await fetcher.fetch(site.url(path))
    assert result.rendered is not None
    return result.rendered, fetcher.counters["render_settled_at_once"]


async def test_a_page_with_nothing_pending_is_taken_at_once() -> None:
    """A page whose scripts are done at its load event (what a script shell's bundle
    usually does: build the DOM and return) is taken at once, with all its scripts
    built: no quiet window waited for (it was most of such a render's time)."""
    js = "document.getElementById('root').innerHTML = '<p>kitten built</p><a href=\"/next.html\">n</a>';"
    routes = {
        "/shell.html": respond(
            "<!DOCTYPE html><html><body><div id='root'></div><script src='/app.js'></script>"
            "<script>window.addEventListener('load', () => { document.title = 'kitten loaded'; });</script></body></html>"
        ),
        "/app.js": respond(js, content_type="application/javascript"),
    }  # fmt: skip
    dom, at_once = await _render(routes, "/shell.html")
    assert b'<p>kitten built</p><a href="/next.html">n</a>' in dom
    assert b"<title>kitten loaded</title>" in dom
    assert at_once == 1


async def _slow_data(request: web.Request) -> web.StreamResponse:
    await asyncio.sleep(0.3)
    return web.Response(text="kitten data", content_type="text/plain")


# each page changes its DOM after its load event, by a way the page tracks (a timer, a
# fetch, a script it inserts...) or cannot see the end of (a message, a worker): the
# change is in the DOM taken, which is then taken after the quiet window, as before
PENDING = {
    "timeout": "window.addEventListener('load', () => setTimeout(() => add('kitten late'), 40));",
    "timer given as a string": "window.addEventListener('load', () => setTimeout(\"add('kitten late')\", 40));",
    "interval": "let n = 0; const i = setInterval(() => { if (++n === 3) { add('kitten late'); clearInterval(i); } }, 10);",
    "fetch and its body": (
        "window.addEventListener('load', () => fetch('/data.txt').then((r) => r.text()).then(add));"
    ),
    "XMLHttpRequest": (
        "window.addEventListener('load', () => { const x = new XMLHttpRequest(); x.open('GET', '/data.txt');"
        " x.onload = () => add(x.responseText); x.send(); });"
    ),
    "inserted script": (
        "window.addEventListener('load', () => { const s = document.createElement('script');"
        " s.src = '/late.js'; document.body.appendChild(s); });"
    ),
    "message": (
        "window.addEventListener('load', () => { const c = new MessageChannel();"
        " c.port1.onmessage = () => add('kitten late'); c.port2.postMessage(1); });"
    ),
}  # fmt: skip


@pytest.mark.parametrize("script", list(PENDING.values()), ids=list(PENDING))
async def test_a_page_with_work_pending_at_its_load_event_waits_for_it(script: str) -> None:
    routes = {
        "/page.html": respond(_page(_ADD + script)),
        "/data.txt": _slow_data,
        "/late.js": respond("add('kitten late');", content_type="application/javascript"),
    }
    dom, at_once = await _render(routes, "/page.html")
    assert b"<p>kitten late</p>" in dom or b"<p>kitten data</p>" in dom
    assert at_once == 0


async def test_what_a_page_sees_of_what_is_watched_is_as_before() -> None:
    """The watch keeps what the page's own scripts see of what it wraps: timers' ids
    and arguments, ``this``, fetch's promise, a class extending a wrapped constructor."""
    script = _ADD + (
        "const id = setTimeout(function (a, b) { add([typeof this, a, b].join(' ')); }, 0, 'kitten', 2);"
        "add(typeof id);"
        "class Channel extends MessageChannel {}; add(new Channel() instanceof MessageChannel);"
        "add(fetch('/data.txt') instanceof Promise);"
    )
    routes = {"/page.html": respond(_page(script)), "/data.txt": _slow_data}
    dom, _ = await _render(routes, "/page.html")
    for text in (b"<p>number</p>", b"<p>object kitten 2</p>", b"<p>true</p>"):
        assert text in dom


@pytest.mark.parametrize(
    "page",
    [
        _page(_ADD + "window.addEventListener('load', () => requestAnimationFrame(() => add('kitten late frame')));"),
        _page(_ADD + "window.onload = () => requestAnimationFrame(() => add('kitten late frame'));"),
        "<!DOCTYPE html><html><body onload=\"requestAnimationFrame(() => { document.getElementById('root')"
        ".innerHTML += '<p>kitten late frame</p>'; })\"><div id='root'></div></body></html>",
    ],
    ids=["load-listener", "window-onload", "body-onload"],
)
async def test_an_animation_frame_asked_for_in_the_load_event_is_in_the_dom(page: str) -> None:
    """An animation frame the page asks for in its load event is pending when the load
    event has come, so the page is not taken at once, and the frame runs (frames are made
    on demand, ``--enable-begin-frame-control``) before its DOM is taken."""
    dom, at_once = await _render({"/late.html": respond(page)}, "/late.html")
    assert b"<p>kitten late frame</p>" in dom
    assert at_once == 0


async def test_a_frame_callback_that_throws_does_not_stop_the_others() -> None:
    """As a frame does: each callback runs, whatever the one before it threw."""
    page = _page(_ADD + "window.addEventListener('load', () => {"
                 " requestAnimationFrame(() => { throw new Error('kitten broken'); });"
                 " requestAnimationFrame(() => add('kitten ' + 'second')); });")  # fmt: skip
    dom, _ = await _render({"/throws.html": respond(page)}, "/throws.html")
    assert b"<p>kitten second</p>" in dom


async def test_a_page_animating_for_ever_is_taken_after_a_few_frames() -> None:
    """A page that asks for a new frame in every frame is not waited for: the crawler
    runs a few of its frames (``quiet.FRAMES``) and takes the DOM as it is then."""
    page = _page("let n = 0; const tick = () => { n += 1; document.title = 'frame ' + n; requestAnimationFrame(tick); };"
                 "window.addEventListener('load', () => requestAnimationFrame(tick));")  # fmt: skip
    dom, _ = await _render({"/spin.html": respond(page)}, "/spin.html")
    title = dom.split(b"<title>")[1].split(b"</title>")[0]
    assert title.startswith(b"frame ")
    assert 1 <= int(title.split()[1]) <= 3
