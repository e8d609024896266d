"""The REST API of ``focuscrawl serve`` (aiohttp), its OpenAPI document and /metrics.

Routes are listed in :mod:`focuscrawl.service.openapi`; the web UI's pages are added
by :mod:`focuscrawl.service.ui`. A background task notes the crawls that ended and
brings the search index of each crawl up to date with what it has committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from focuscrawl.control import wait_for_ack, withdraw_request, write_request
from focuscrawl.exceptions import ConfigError
from focuscrawl.service.context import SERVICE, Service
from focuscrawl.service.crawls import remove_moved
from focuscrawl.service.experiments import parse_experiment
from focuscrawl.service.metrics import render_metrics
from focuscrawl.service.openapi import openapi_document
from focuscrawl.service.reading import MAX_LIMIT, read_decisions, read_pages, why
from focuscrawl.service.specs import RequestError, list_models, parse_request
from focuscrawl.service.ui import add_ui

_MAX_BODY = 1 << 20  # bytes of a request body
_ACK_SECONDS = 30.0  # how long a crawl may take to answer a change of parameters


async def read_json(request: web.Request) -> Any:
    """The request's JSON body; a 400 naming what is wrong (never a traceback)."""
    # read(n) answers with what has arrived (a 64 KB chunk), not n bytes: read to the end
    # (a request of 5,000 seeds was cut and refused as malformed JSON, a 40 MB one too)
    chunks: list[bytes] = []
    size = 0
    while chunk := await request.content.read(_MAX_BODY + 1 - size):
        chunks.append(chunk)
        size += len(chunk)
        if size > _MAX_BODY:
            raise RequestError(413, f"the body is over {_MAX_BODY:,} bytes")
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise RequestError(400, f"malformed JSON: {str(exc).splitlines()[0][:200]}") from None


def _int(request: web.Request, key: str, default: int, top: int = MAX_LIMIT) -> int:
    value = request.query.get(key)
    if value is None:
        return default
    # ASCII digits only: str.isdigit() also takes '²', which int() refuses (a 500)
    if not (value.isascii() and value.isdigit()) or int(value) > top:
        raise RequestError(400, f"{key} must be a whole number from 0 to {top:,}", key)
    return int(value)


def ok(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda d: json.dumps(d, ensure_ascii=False))


async def list_crawls(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return ok({"crawls": [svc.manager.describe(n) for n in svc.manager.names()]})


async def create_crawl(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await read_json(request)
    if isinstance(body, dict) and body.get("kind") == "experiment":
        spec = parse_experiment(body, runs_dir=svc.manager.runs_dir, public_only=svc.public_only)
    else:
        spec = parse_request(body, runs_dir=svc.manager.runs_dir, models_dir=svc.models_dir,
                             public_only=svc.public_only, redis_url=svc.redis_url)  # fmt: skip
    return ok(svc.manager.create(spec), status=201)


async def get_crawl(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    return ok({**svc.manager.describe(name), "spec": svc.manager.spec(name)})


async def delete_crawl(request: web.Request) -> web.Response:
    """Remove an ended crawl, its run directory and what the server kept of it (409 while
    it runs); says what was removed."""
    svc = request.app[SERVICE]
    name = svc.known(request)
    moved = svc.manager.delete(name)
    await asyncio.to_thread(svc.readers.forget, name)
    files, size = await asyncio.to_thread(remove_moved, moved.values())
    return ok({"deleted": name, "removed": sorted(moved), "files": files, "bytes": size})


async def _no_fields(request: web.Request, allowed: frozenset[str] = frozenset()) -> dict[str, Any]:
    body = await read_json(request)
    if not isinstance(body, dict):
        raise RequestError(400, "the body must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise RequestError(400, f"unknown field {unknown[0]!r}", unknown[0])
    return body


async def pause_crawl(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    await _no_fields(request)
    return ok(svc.manager.pause(name))


async def resume_crawl(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    await _no_fields(request)
    return ok(svc.manager.resume(name))


async def stop_crawl(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    body = await _no_fields(request, frozenset({"now"}))
    if not isinstance(body.get("now", False), bool):
        raise RequestError(400, "now must be true or false", "now")
    return ok(svc.manager.stop(name, now=body.get("now", False)))


async def change_params(request: web.Request) -> web.Response:
    """What ``focuscrawl control`` does: new strategy parameters, applied by the crawl."""
    svc = request.app[SERVICE]
    name = svc.known(request)
    body = await read_json(request)
    if not isinstance(body, dict) or not body:
        raise RequestError(400, "the body must be an object of strategy parameters, e.g. {\"high\": 80}")
    if svc.manager.state(name) != "running":
        raise RequestError(409, f"crawl {name!r} is {svc.manager.state(name)}: no crawl runs to change")
    run_dir = svc.manager.run_dir(name)
    try:
        request_id = write_request(run_dir, body)
    except ConfigError as exc:
        raise RequestError(409, str(exc)) from None
    ack = await asyncio.to_thread(wait_for_ack, run_dir, request_id, _ACK_SECONDS)
    if ack is None:
        await asyncio.to_thread(withdraw_request, run_dir, request_id)
        raise RequestError(504, f"no answer from crawl {name!r} within {_ACK_SECONDS:g} s "
                                "(still starting?); request withdrawn")  # fmt: skip
    if not ack.get("ok"):
        raise RequestError(400, str(ack.get("error", "refused")), "params")
    return ok({"applied": body, "request": request_id})


async def numbers(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    snap = await asyncio.to_thread(lambda: svc.readers.tail(name).snapshot())
    return ok({**snap, "path": name, "state": svc.manager.state(name)})


async def pages(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    offset, limit = _int(request, "offset", 0, 10**12), _int(request, "limit", 100)
    rows = await asyncio.to_thread(read_pages, svc.manager.run_dir(name), offset, limit)
    return ok({"offset": offset, "pages": rows})


async def decisions(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    limit = _int(request, "limit", 50)
    return ok({"decisions": await asyncio.to_thread(read_decisions, svc.manager.run_dir(name), limit)})


async def why_url(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    url = request.query.get("url", "")
    if not url or len(url) > 8192:
        raise RequestError(400, "url: give the URL to explain (?url=...)", "url")
    try:
        return ok(await asyncio.to_thread(why, svc.manager.run_dir(name), url))
    except ConfigError as exc:  # not an http(s) URL
        raise RequestError(400, str(exc), "url") from None


async def search(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = svc.known(request)
    query = request.query.get("q", "")
    limit = _int(request, "limit", 20, 200)
    index = svc.readers.index(name)
    behind = await asyncio.to_thread(index.update_or_why)  # a damaged run: a 500 before
    found = await asyncio.to_thread(index.search, query, limit)
    return ok({"query": query, "results": found, **({"warning": behind} if behind else {})})


async def models(request: web.Request) -> web.Response:
    return ok({"models": list_models(request.app[SERVICE].models_dir)})


async def openapi(request: web.Request) -> web.Response:
    return ok(openapi_document())


async def metrics(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    text, content_type = await asyncio.to_thread(render_metrics, svc.manager, svc.readers, svc.redis_url)
    return web.Response(body=text, headers={"Content-Type": content_type})


async def _keep_up(app: web.Application) -> AsyncIterator[None]:
    """While the server runs: note ended crawls, index what running crawls committed."""
    svc = app[SERVICE]

    async def loop() -> None:
        while True:
            svc.manager.reap()
            for name in svc.manager.names():  # an update with nothing new reads one row
                with contextlib.suppress(Exception):  # a crawl being written: next time
                    await asyncio.to_thread(svc.readers.index(name).update)
            await asyncio.sleep(svc.index_every)

    task = asyncio.create_task(loop())
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    svc.readers.close()


def make_app(service: Service) -> web.Application:
    """The server's application: the guard's checks, the API, /metrics, the UI."""
    app = web.Application(middlewares=[service.guard.middleware], client_max_size=_MAX_BODY)
    app[SERVICE] = service
    app.router.add_get("/api/openapi.json", openapi)
    app.router.add_get("/api/models", models)
    app.router.add_get("/api/crawls", list_crawls)
    app.router.add_post("/api/crawls", create_crawl)
    app.router.add_get("/api/crawls/{name}", get_crawl)
    app.router.add_delete("/api/crawls/{name}", delete_crawl)
    app.router.add_post("/api/crawls/{name}/pause", pause_crawl)
    app.router.add_post("/api/crawls/{name}/resume", resume_crawl)
    app.router.add_post("/api/crawls/{name}/stop", stop_crawl)
    app.router.add_post("/api/crawls/{name}/params", change_params)
    app.router.add_get("/api/crawls/{name}/numbers", numbers)
    app.router.add_get("/api/crawls/{name}/pages", pages)
    app.router.add_get("/api/crawls/{name}/decisions", decisions)
    app.router.add_get("/api/crawls/{name}/why", why_url)
    app.router.add_get("/api/crawls/{name}/search", search)
    app.router.add_get("/metrics", metrics)
    add_ui(app)
    app.cleanup_ctx.append(_keep_up)
    return app
