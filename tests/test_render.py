"""Pages built by scripts, rendered by the system's Chromium (issue 37 item 1)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import signal
from pathlib import Path

import pytest
from aiohttp import web

from focuscrawl.api import crawl_async, open_crawl
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.render import RenderingFetcher, browser_path, looks_like_shell
from focuscrawl.settings import FetchSettings, load_settings
from tests.sites import html, respond, serve

pytestmark = pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")

SHELL = (
    '<!DOCTYPE html><html><head><title>app</title></head><body><div id="root"></div>'
    '<img src="/img.png"><script src="/app.js"></script><script src="/private.js"></script></body></html>'
)
APP_JS = (
    "document.getElementById('root').innerHTML = '<p>' + 'kitten care guide '.repeat(30) + '</p>"
    "<a href=\"/built.html\">built</a>';"
    "fetch('http://10.1.2.3/secret').catch(() => {});"
)
HANGS = "<!DOCTYPE html><html><body><div id='app'></div><script>while (true) {}</script></body></html>"
POPUP = (
    "<!DOCTYPE html><html><body><div id='root'></div><script>window.open('/popup.html');"
    "location.href = '/elsewhere.html';</script></body></html>"
)


def _routes() -> dict[str, object]:
    return {
        "/robots.txt": respond("User-agent: *\nDisallow: /private.js\n", content_type="text/plain"),
        "/": html('<a href="/app.html">app</a> <a href="/plain.html">plain</a> <a href="/hangs.html">h</a>'
                  ' <a href="/popup.html">p</a>'),
        "/app.html": respond(SHELL),
        "/app.js": respond(APP_JS, content_type="application/javascript"),
        "/private.js": respond("document.body.innerHTML += '<a href=\"/robots-denied.html\">x</a>';",
                               content_type="application/javascript"),
        "/img.png": respond(b"\x89PNG", content_type="image/png"),
        "/built.html": html("<p>kitten page only a script links to</p>"),
        "/plain.html": html("<p>" + "kitten " * 60 + "</p><a href='/'>home</a>"),
        "/hangs.html": respond(HANGS),
        "/popup.html": respond(POPUP),
        "/elsewhere.html": html("<p>navigated to</p>"),
    }  # fmt: skip


async def _crawl(tmp_path: Path, render: str) -> tuple[list[str], dict[str, int], Path]:
    async with serve(_routes()) as site:  # type: ignore[arg-type]
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={
                "crawl": {"max_pages": 30},
                "fetch": {"delay": 0, "allow_private": ("127.0.0.1",), "render": render, "render_timeout": 8.0},
            },
            model={"name": "keyword", "keywords": ["kitten"]},
        )  # fmt: skip
        paths = site.paths()
    counters = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"]
    return paths, counters, tmp_path / "run"


@pytest.mark.parametrize(("render", "built"), [("never", False), ("auto", True), ("always", True)])
async def test_script_built_links_found_only_when_rendered(tmp_path: Path, render: str, built: bool) -> None:
    paths, counters, run = await _crawl(tmp_path, render)
    assert ("/built.html" in paths) == built
    assert "/img.png" not in paths  # images are never requested
    assert "/robots-denied.html" not in paths  # robots.txt holds for a page's scripts
    assert "/private.js" not in paths
    assert "/elsewhere.html" not in paths  # no navigation away from a page
    if not built:
        assert "/app.js" not in paths
        return
    assert counters["render_subrequest_refused"] >= 2  # the robots-denied script, the private address
    assert counters["blocked-address"] >= 1
    assert counters["render_failed_timeout"] == 1  # the endless script: one failure, the crawl went on
    rows = {json.loads(line)["url"].rsplit("/", 1)[1]: json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()}
    assert rows["app.html"]["relevant"] is True  # judged on the rendered DOM
    assert rows["hangs.html"]["status"] == 200  # recorded from its HTML as fetched
    # the WARC keeps the original response and the rendered DOM, linked to it
    data = gzip.decompress((run / "corpus.warc.gz").read_bytes())
    assert data.count(b"WARC-Type: conversion") == counters["render_pages"] - 1
    assert b'<div id="root"><p>kitten care guide' in data
    assert b'<div id="root"></div><img src="/img.png">' in data
    if render == "auto":
        assert counters["render_pages"] == 3  # app, hangs, popup: not the plain pages


def test_render_settings_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"fetch.render = 'sometimes'"):
        load_settings(overrides={"fetch": {"render": "sometimes"}})
    assert load_settings().fetch.render == "never"
    with pytest.raises(ConfigError, match=r"fetch\.browser '/no/chromium' is not a browser"):
        open_crawl(tmp_path / "run", ["http://h.org/"], overrides={"fetch": {"render": "auto", "browser": "/no/chromium"}})


def _fake_browsers(where: Path, *names: str) -> str:
    where.mkdir()
    for name in names:
        (where / name).write_text("#!/bin/sh\n")
        (where / name).chmod(0o755)
    return str(where)


def test_browser_auto_takes_the_headless_shell_when_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fetch.browser = "auto"`` (the default): ``chromium-headless-shell`` when it is on
    the PATH, else ``chromium``; neither is one clear error when the crawl opens."""
    assert load_settings().fetch.browser == "auto"
    monkeypatch.setenv("PATH", _fake_browsers(tmp_path / "both", "chromium", "chromium-headless-shell"))
    assert browser_path(FetchSettings()) == str(tmp_path / "both" / "chromium-headless-shell")
    assert browser_path(FetchSettings(browser=str(tmp_path / "both" / "chromium"))) == str(tmp_path / "both" / "chromium")
    monkeypatch.setenv("PATH", _fake_browsers(tmp_path / "one", "chromium"))
    assert browser_path(FetchSettings()) == str(tmp_path / "one" / "chromium")
    monkeypatch.setenv("PATH", _fake_browsers(tmp_path / "none"))
    assert browser_path(FetchSettings()) is None
    with pytest.raises(ConfigError, match=r"neither chromium-headless-shell nor chromium is on the PATH"):
        open_crawl(tmp_path / "run", ["http://h.org/"], overrides={"fetch": {"render": "auto"}})


@pytest.mark.parametrize(
    ("body", "shell"),
    [
        pytest.param(SHELL.encode(), True, id="framework-root"),
        pytest.param(HANGS.encode(), True, id="app-root"),
        pytest.param(b"<html><body><script>document.write('x')</script></body></html>", True, id="no-links"),
        pytest.param(b"<html><body><p>" + b"text " * 60 + b"</p><script>x()</script></body></html>", False, id="text"),
        pytest.param(b"<html><body><p>short</p><a href=/a>a</a></body></html>", False, id="no-script"),
    ],
)
def test_looks_like_shell(body: bytes, shell: bool) -> None:
    assert looks_like_shell(body) == shell


def _browser_pids() -> list[int]:
    """The Chromium processes descending from this one (read from /proc)."""
    parent: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            names[int(entry)] = stat[stat.index("(") + 1 : stat.rindex(")")]
            parent[int(entry)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    out = []
    for pid, name in names.items():
        up = pid
        while up > 1 and up != os.getpid():
            up = parent.get(up, 1)
        if up == os.getpid() and name.startswith("chrom"):
            out.append(pid)
    return out


def _main_browsers() -> list[int]:
    """The browsers descending from this process: each one's first process launched
    for the DevTools pipe (Debian's launchers are scripts that start the binary)."""
    launched = set()
    for pid in _browser_pids():
        with contextlib.suppress(OSError):
            if b"--remote-debugging-pipe" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                launched.add(pid)
    out = []
    for pid in launched:
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            if int(stat[stat.rindex(")") + 2 :].split()[1]) not in launched:
                out.append(pid)
    return out


async def test_the_browser_starts_when_the_fetcher_opens_and_renders_every_page(tmp_path: Path) -> None:
    """The warm start: the browser is launched as the fetcher opens, before any page is
    fetched (no shell met yet), and that one browser renders every shell after it."""
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="auto", respect_robots=False)
    async with serve(_routes()) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        for _ in range(600):  # (up to a minute for a loaded machine to start it)
            if started := _main_browsers():
                break
            await asyncio.sleep(0.1)
        assert len(started) == 1, "no browser started before the first page"
        plain = await fetcher.fetch(site.url("/plain.html"))
        assert plain.rendered is None  # auto: not a shell
        for _ in range(3):
            shell = await fetcher.fetch(site.url("/app.html"))
            assert shell.rendered is not None
            assert b"kitten care guide" in shell.rendered
        assert _main_browsers() == started  # launched once, reused
        assert fetcher.counters["render_pages"] == 3


async def test_a_browser_that_crashes_mid_page_is_one_failure(tmp_path: Path) -> None:
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", render_timeout=60.0,
                             respect_robots=False)  # fmt: skip
    served = asyncio.Event()
    hangs = respond(HANGS)

    async def hanging_page(request: web.Request) -> web.StreamResponse:
        served.set()
        return await hangs(request)

    routes = {**_routes(), "/hangs.html": hanging_page}
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        first = await fetcher.fetch(site.url("/app.html"))  # the browser started
        assert first.rendered is not None
        hanging = asyncio.ensure_future(fetcher.fetch(site.url("/hangs.html")))
        await asyncio.wait_for(served.wait(), 60)
        await asyncio.sleep(0.5)  # (the page on its way to the browser, its script to loop)
        for pid in _browser_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        crashed = await asyncio.wait_for(hanging, 60)
        assert crashed.ok  # the page as fetched: nothing lost
        assert crashed.rendered is None
        assert sum(v for k, v in fetcher.counters.items() if k.startswith("render_failed")) == 1
        again = await fetcher.fetch(site.url("/app.html"))  # a new browser
        assert again.rendered is not None
        assert b"kitten care guide" in again.rendered


async def test_simulate_renders_script_built_pages_from_the_archive(tmp_path: Path) -> None:
    """``simulate`` accepts ``render``: the page's scripts and their requests are
    answered from the archive (it was ignored: the script-built links never found)."""
    from focuscrawl.replay.content_web import SEEDS, build_content_web

    (tmp_path / "web").mkdir()
    archive = build_content_web(tmp_path / "web", articles=30, reports=2)
    found = {}
    for render in ("never", "always"):
        run = tmp_path / render
        await crawl_async(run, list(SEEDS), archives=[archive], overrides={"fetch": {"render": render}})
        found[render] = {json.loads(line)["url"] for line in (run / "pages.jsonl").read_text().splitlines()}
        counters = json.loads((run / "run.json").read_text())["summary"]["counters"]
        assert counters.get("render_pages", 0) == (0 if render == "never" else len(found[render]) - 2)
    # the pages only a script links to are reached only when rendered
    assert found["never"] < found["always"]


async def test_data_a_script_fetches_after_loading_is_in_the_dom(tmp_path: Path) -> None:
    """The DOM is taken after the load event and a quiet window with no request of the
    page under way: text a script builds from data it fetches (answered slowly) is in
    it (the DOM was taken at the load event: an empty shell)."""
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)

    async def slow_data(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.5)
        return web.json_response({"html": "<p>kitten data</p><a href='/from-data.html'>x</a>"})

    page = (
        "<!DOCTYPE html><html><body><div id='root'></div><script>"
        "fetch('/data.json').then(r => r.json()).then(d => { document.getElementById('root').innerHTML = d.html; });"
        "</script></body></html>"
    )
    routes = {"/spa.html": respond(page), "/data.json": slow_data}
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        result = await fetcher.fetch(site.url("/spa.html"))
    assert result.rendered is not None
    assert b"<p>kitten data</p>" in result.rendered
    assert result.rendered.startswith(b"<!DOCTYPE html>")


LOADING = "<!DOCTYPE html><html><body><div id='root'></div><script src='/forever.js'></script></body></html>"
DOWNLOAD = (
    "<!DOCTYPE html><html><body><div id='root'></div><a id='d' href='/file.bin' download>f</a><script>"
    "document.getElementById('d').click();"
    "const a = document.createElement('a'); a.href = URL.createObjectURL(new Blob(['x'.repeat(1000)]));"
    "a.download = 'x.bin'; document.body.appendChild(a); a.click();"
    "window.open('/file.bin');"
    "document.getElementById('root').innerHTML = '<p>kitten after the download</p><a href=\"/next.html\">n</a>';"
    "</script></body></html>"
)


async def test_a_page_that_never_loads_or_downloads_is_one_failure_and_the_crawl_goes_on(tmp_path: Path) -> None:
    """A page whose script is never answered (its load event never comes) is one failure
    of its rendering at ``render_timeout``, and its request that never ends is given up
    (one connection to the host: it held the host's only slot for ``fetch_timeout``, every
    later page of the host waiting); a page that starts downloads and opens a popup is
    rendered, nothing downloaded (the browser fetched a ``<a download>`` itself, past the
    route interception and the address policy). Every page recorded, the crawl went on."""
    hung = asyncio.Event()

    async def forever(request: web.Request) -> web.StreamResponse:
        hung.set()
        await asyncio.Event().wait()  # never answered (cancelled when the server stops)
        raise AssertionError

    routes = {
        "/": html("<a href='/loading.html'>l</a> <a href='/download.html'>d</a>"),
        "/loading.html": respond(LOADING),
        "/forever.js": forever,
        "/download.html": respond(DOWNLOAD),
        "/file.bin": respond(b"\0" * 1000, content_type="application/octet-stream",
                             headers={"Content-Disposition": "attachment; filename=file.bin"}),
        "/next.html": html("<p>kitten</p><a href='/after.html'>after</a>"),
        "/after.html": html("<p>the crawl goes on</p>"),
    }  # fmt: skip
    async with serve(routes) as site:  # type: ignore[arg-type]
        run = tmp_path / "run"
        fetch = {"delay": 0, "per_host": 1, "allow_private": ("127.0.0.1",), "render": "auto",
                 "render_timeout": 8.0, "fetch_timeout": 600.0, "read_timeout": 600.0, "retries": 0}  # fmt: skip
        crawling = crawl_async(run, [site.url("/")], overrides={"crawl": {"max_pages": 30}, "fetch": fetch},
                               model={"name": "keyword", "keywords": ["kitten"]})  # fmt: skip
        await asyncio.wait_for(crawling, 120)  # (a guard: a held slot would keep it 600 s)
        paths = site.paths()
    assert hung.is_set()
    counters = json.loads((run / "run.json").read_text())["summary"]["counters"]
    assert counters["render_failed_timeout"] == 1
    assert sum(v for k, v in counters.items() if k.startswith("render_failed")) == 1
    rows = {json.loads(line)["url"].rsplit("/", 1)[1]: json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()}
    assert set(rows) == {"", "loading.html", "download.html", "next.html", "after.html"}
    assert rows["loading.html"]["status"] == 200  # recorded from its HTML as fetched
    assert rows["download.html"]["relevant"] is True  # rendered, judged on its DOM
    assert "/file.bin" not in paths  # nothing downloaded


async def test_a_script_pages_share_is_fetched_once() -> None:
    """The pages of a site load the same bundle: it is fetched once in a crawl, then
    answered from what was kept (it was fetched for every page, each time waiting for
    its host's delay); a script sent ``no-store`` is fetched every time."""
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)
    shell = (
        '<!DOCTYPE html><html><body><div id="root"></div><script src="/bundle.js"></script>'
        '<script src="/fresh.js"></script></body></html>'
    )
    routes = {
        "/a.html": respond(shell), "/b.html": respond(shell), "/c.html": respond(shell),
        "/bundle.js": respond("document.getElementById('root').innerHTML += '<p>kitten bundle</p>';",
                              content_type="application/javascript"),
        "/fresh.js": respond("document.getElementById('root').innerHTML += '<p>fresh</p>';",
                             content_type="application/javascript", headers={"Cache-Control": "no-store"}),
    }  # fmt: skip
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        for page in ("/a.html", "/b.html", "/c.html"):
            result = await fetcher.fetch(site.url(page))
            assert result.rendered is not None
            assert b"<p>kitten bundle</p><p>fresh</p>" in result.rendered
        paths = site.paths()
    assert paths.count("/bundle.js") == 1
    assert paths.count("/fresh.js") == 3
    assert fetcher.counters["render_subrequest_kept"] == 2


async def test_animation_frames_observers_and_timers_run() -> None:
    """Frames are made on demand (``--enable-begin-frame-control``), not at a display's
    rate: what a page builds in ``requestAnimationFrame``, an IntersectionObserver or a
    timer is in the DOM all the same."""
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)
    page = (
        "<!DOCTYPE html><html><body><div id='root'></div><div id='seen'>x</div><script>"
        "const add = (t) => { document.getElementById('root').innerHTML += '<p>' + t + '</p>'; };"
        "requestAnimationFrame(() => add('kitten frame'));"
        "new IntersectionObserver((e) => { if (e[0].isIntersecting) add('kitten observed'); })"
        ".observe(document.getElementById('seen'));"
        "setTimeout(() => add('kitten timer'), 10);"
        "</script></body></html>"
    )
    async with serve({"/frames.html": respond(page)}) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        result = await fetcher.fetch(site.url("/frames.html"))
    assert result.rendered is not None
    for text in (b"kitten frame", b"kitten observed", b"kitten timer"):
        assert text in result.rendered


async def test_a_page_rendered_after_another_in_the_same_tab_sees_none_of_it() -> None:
    """A context's one tab renders page after page, each navigation reusing the page's
    frame (RenderDocument off): the next document still has a window and a realm of its
    own: no global, timer or listener of the page before it reaches it."""
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False,
                             render_contexts=1)  # fmt: skip
    first = (
        "<!DOCTYPE html><html><body><div id='root'></div><script>"
        "window.left = 'kitten secret'; globalThis.counter = 41;"
        "setInterval(() => { document.body.innerHTML += '<p>kitten tick</p>'; }, 5);"
        "window.addEventListener('load', () => { document.body.innerHTML += '<p>kitten listener</p>'; });"
        "document.getElementById('root').innerHTML = '<p>kitten first</p>';"
        "</script></body></html>"
    )
    second = (
        "<!DOCTYPE html><html><body><div id='root'></div><script>"
        "document.getElementById('root').innerHTML = '<p>' + typeof window.left + ' ' + typeof counter + '</p>';"
        "</script></body></html>"
    )
    routes = {"/first.html": respond(first), "/second.html": respond(second)}
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        one = await fetcher.fetch(site.url("/first.html"))
        two = await fetcher.fetch(site.url("/second.html"))
    assert one.rendered is not None
    assert two.rendered is not None
    assert b"kitten first" in one.rendered
    assert b"kitten tick" in one.rendered
    assert b"<p>undefined undefined</p>" in two.rendered
    assert b"kitten" not in two.rendered
