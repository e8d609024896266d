"""The OpenAPI 3.1 document of the REST API, served at ``/api/openapi.json``."""

from __future__ import annotations

from typing import Any

from focuscrawl.service.specs import KINDS, NAME

_ERROR = {"description": "a one-line error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_NAME = {"name": "name", "in": "path", "required": True, "schema": {"type": "string", "pattern": NAME.pattern}}


def _query(name: str, description: str, kind: str = "integer") -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": {"type": kind}}


def _op(summary: str, *, body: str | None = None, params: tuple[dict[str, Any], ...] = (),
        ok: str = "200", errors: tuple[str, ...] = ("400", "404")) -> dict[str, Any]:  # fmt: skip
    op: dict[str, Any] = {
        "summary": summary,
        "parameters": list(params),
        "responses": {ok: {"description": "done", "content": {"application/json": {"schema": {"type": "object"}}}},
                      **dict.fromkeys(errors, _ERROR)},
    }  # fmt: skip
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}}}
    return op


def openapi_document() -> dict[str, Any]:
    """The document: every route of :func:`focuscrawl.service.app.make_app` under /api, and /metrics."""
    crawl = ("/api/crawls/{name}",)
    return {
        "openapi": "3.1.0",
        "info": {"title": "focuscrawl", "version": "1",
                 "description": "Start, watch, steer and search focused crawls."},
        "paths": {
            "/api/openapi.json": {"get": _op("this document", errors=())},
            "/api/models": {"get": _op("the trained models a crawl may name", errors=())},
            "/api/crawls": {
                "get": _op("the crawls and their states", errors=()),
                "post": _op("start a crawl", body="CrawlRequest", ok="201", errors=("400", "403", "409", "415")),
            },
            crawl[0]: {"get": _op("a crawl: its state and request", params=(_NAME,)),
                       "delete": _op("remove an ended crawl: its run directory and what the server kept of it "
                                     "(409 while it runs); answers what was removed, files and bytes",
                                     params=(_NAME,), errors=("404", "409"))},
            crawl[0] + "/pause": {"post": _op("stop cleanly, to resume later", params=(_NAME,), errors=("404", "409"))},
            crawl[0] + "/resume": {"post": _op("resume a paused, stopped or interrupted crawl", params=(_NAME,), errors=("404", "409"))},
            crawl[0] + "/stop": {"post": _op("stop (now: as a second Ctrl-C)", params=(_NAME,), body="Stop", errors=("400", "404", "409"))},
            crawl[0] + "/params": {"post": _op("change strategy parameters (focuscrawl control)", params=(_NAME,), body="Params", errors=("400", "404", "409", "504"))},
            crawl[0] + "/numbers": {"get": _op("the dashboard's figures", params=(_NAME,))},
            crawl[0] + "/pages": {"get": _op("pages in fetch order", params=(_NAME, _query("offset", "first line"), _query("limit", "lines, at most 1000")))},
            crawl[0] + "/decisions": {"get": _op("the latest decisions", params=(_NAME, _query("limit", "lines, at most 1000")))},
            crawl[0] + "/why": {"get": _op("why a URL has its priority (focuscrawl why)", params=(_NAME, _query("url", "the URL", "string")))},
            crawl[0] + "/search": {"get": _op("full-text search of the crawled pages (SQLite FTS5 syntax)", params=(_NAME, _query("q", "the query, at most 1000 characters", "string"), _query("limit", "results, at most 200")))},
            "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "text format", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
        },
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer", "description": "needed when the server is not on loopback"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}, "field": {"type": "string"}}},
                "Stop": {"type": "object", "additionalProperties": False, "properties": {"now": {"type": "boolean"}}},
                "Params": {"type": "object", "description": "strategy parameters, e.g. {\"high\": 80}"},
                "CrawlRequest": {
                    "type": "object", "additionalProperties": False, "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "pattern": NAME.pattern, "description": "also the run directory's name"},
                        "kind": {"enum": [*KINDS, "experiment"], "default": "crawl"},
                        "seeds": {"type": "array", "items": {"type": "string", "format": "uri"}, "minItems": 1},
                        "settings": {"type": "object", "description": "the TOML file's tables: crawl, fetch, scope, parse, model, filters"},
                        "model": {"type": "string", "description": "a trained model of the server's models directory"},
                        "archives": {"type": "array", "items": {"type": "string"}, "description": "simulate: WARC files inside the runs directory"},
                        "workers": {"type": "integer", "minimum": 0, "maximum": 64, "description": "a shared crawl on the server's Redis (serve --redis) with this many local workers"},
                        "experiment": {"type": "object", "description": "kind experiment (then no seeds): the tables of an experiment file (focuscrawl experiment); its files are paths inside the runs directory"},
                    },
                },
            },
        },
        "security": [{}, {"token": []}],
    }  # fmt: skip
