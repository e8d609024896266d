"""The web UI: the crawl list with the start form, each crawl's live page (the
dashboard's figures and plots, renewed), and search over the crawled pages.

Pages are Jinja2 templates with autoescaping on (every value shown is escaped; the
dashboard's fragment is escaped where it is made), self-contained (no external
asset: inline style, script and SVG), with labels on every control. They act
through the JSON API, as any client does.
"""

from __future__ import annotations

import asyncio
import functools
from html import escape
from typing import Any

from aiohttp import web

from focuscrawl.dashboard import _STYLE as DASHBOARD_STYLE
from focuscrawl.dashboard import render_fragment
from focuscrawl.service.context import SERVICE, Service
from focuscrawl.service.search import SearchError, snippet_parts
from focuscrawl.service.security import COOKIE
from focuscrawl.service.specs import list_models
from focuscrawl.settings import CrawlSettings
from focuscrawl.strategies import STRATEGIES


@functools.cache
def templates() -> Any:
    """The Jinja2 environment of the package's templates (autoescape on)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("focuscrawl.service", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined,
    )  # fmt: skip


def page(template: str, status: int = 200, **values: Any) -> web.Response:
    text = templates().get_template(template).render(style=DASHBOARD_STYLE, **values)
    return web.Response(text=text, status=status, content_type="text/html")


async def index(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]

    def rows() -> list[dict[str, Any]]:
        out = []
        for name in svc.manager.names():
            tail = svc.readers.tail(name)
            out.append({**svc.manager.describe(name), "urls": tail.urls, "pages": tail.pages})
        return out

    return page(
        "index.html", crawls=await asyncio.to_thread(rows), strategies=STRATEGIES.names(),
        default_strategy=CrawlSettings().strategy, models=list_models(svc.models_dir),
        loopback=not svc.public_only,
    )  # fmt: skip


def live(svc: Service, name: str) -> tuple[str, str]:
    """(the crawl's state, its live figures): the table's state is the server's (the run's
    files alone said 'waiting' for a crawl failed at start, 'finished' for one that could
    fetch nothing), and
    a failed crawl's error line is shown under them."""
    described = svc.manager.describe(name)
    state = str(described["state"])
    text = render_fragment([svc.readers.tail(name)], states={name: state})
    if state == "failed" and described.get("error"):
        text = f'<p class="error" id="crawl-error">{escape(str(described["error"]))}</p>' + text
    return state, text


async def crawl_page(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    state, fragment = await asyncio.to_thread(live, svc, name)
    return page("crawl.html", name=name, state=state, fragment=fragment)


async def fragment(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    state, text = await asyncio.to_thread(live, svc, name)
    return web.Response(text=text, content_type="text/html",
                        headers={"X-Crawl-State": state, "Cache-Control": "no-store"})  # fmt: skip


async def search_page(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    query = request.query.get("q", "")
    index = svc.readers.index(name)
    behind = await asyncio.to_thread(index.update_or_why)
    try:
        found = await asyncio.to_thread(index.search, query, 50)
    except SearchError as exc:
        return page("search.html", 400, name=name, query=query[:1000], results=[], error=str(exc), behind=behind)
    results = [{**r, "parts": snippet_parts(r["snippet"] or "")} for r in found]
    return page("search.html", name=name, query=query, results=results, error=None, behind=behind)


async def login_form(request: web.Request) -> web.Response:
    return page("login.html", error=None)


async def login(request: web.Request) -> web.StreamResponse:
    svc = request.app[SERVICE]
    form = await request.post()
    given = form.get("token")
    if svc.guard.token is None:
        raise web.HTTPSeeOther("/")
    if not isinstance(given, str) or not svc.guard.matches(given):
        return page("login.html", 401, error="not the server's token")
    response = web.HTTPSeeOther("/")
    response.set_cookie(COOKIE, given, httponly=True, samesite="Strict", path="/")
    raise response


def add_ui(app: web.Application) -> None:
    app.router.add_get("/", index)
    app.router.add_get("/crawls/{name}", crawl_page)
    app.router.add_get("/crawls/{name}/fragment", fragment)
    app.router.add_get("/crawls/{name}/search", search_page)
    app.router.add_get("/login", login_form)
    app.router.add_post("/login", login)
