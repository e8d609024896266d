"""A request to start a crawl, checked before anything starts.

The body of ``POST /api/crawls`` names the crawl, its seeds, and its settings as the
tables of the TOML file (``crawl``, ``fetch``, ``scope``, ``parse``, ``model``,
``filters``). They are checked by the one parameter system
(:func:`focuscrawl.settings.load_settings`, the strategy registry and the model
table), and every refusal is a :class:`RequestError` naming the field it is about.
The crawl then runs from a TOML file written from the same tables
(:func:`to_toml`, checked to read back equal), so the server, the CLI and a config
file cannot drift apart.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.base import MODELS, model_params
from focuscrawl.settings import SECTIONS, load_settings
from focuscrawl.strategies import STRATEGIES
from focuscrawl.strategies.filters import filter_spec

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
KINDS = ("crawl", "simulate")
_FIELDS = frozenset({"name", "kind", "seeds", "settings", "model", "archives", "workers"})
_MAX_WORKERS = 64
_TABLES = frozenset(SECTIONS) | {"model", "filters"}
_MAX_SEEDS = 10_000
# a setting named in ConfigError's text: "config: crawl.max_pages = -1 must be >= 0"
_NAMED = re.compile(r"\b((?:crawl|fetch|scope|parse)\.[a-z_]+)")


class RequestError(Exception):
    """A request refused: an HTTP status, a one-line message and the field it is about."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.message}
        if self.field:
            out["field"] = self.field
        return out


@dataclass(frozen=True)
class CrawlSpec:
    """A checked request: what the child process is started with."""

    name: str
    kind: str
    seeds: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    archives: tuple[str, ...] = ()
    workers: int = 0  # a shared crawl on the server's Redis: its local workers
    experiment: Mapping[str, Any] | None = None  # an experiment's tables (its files absolute)

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "kind": self.kind, "seeds": list(self.seeds),
               "settings": dict(self.settings), "archives": list(self.archives),
               "workers": self.workers}  # fmt: skip
        if self.experiment is not None:
            out["experiment"] = dict(self.experiment)
        return out


def check_name(name: Any) -> str:
    """A crawl's name: letters, digits, ``. _ -``, not starting with a dot (no path)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise RequestError(400, "name must be 1-64 letters, digits, '.', '_' or '-', "
                                "not starting with '.' or '-'", "name")  # fmt: skip
    return name


def _check_seed(i: int, seed: Any, public_only: bool) -> str:
    where = f"seeds[{i}]"
    if not isinstance(seed, str) or len(seed) > 4096:
        raise RequestError(400, f"{where} must be a URL (text)", where)
    parts = urlsplit(seed.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RequestError(400, f"{where} {seed[:200]!r} is not an http(s) URL", where)
    if public_only and _private_host(parts.hostname):
        raise RequestError(403, f"{where}: a private or loopback address; this server is "
                                "not on loopback, so crawls reach public addresses only", where)  # fmt: skip
    return seed.strip()


def _private_host(host: str) -> bool:
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return not ip.is_global


def _settings_error(exc: ConfigError) -> RequestError:
    text = str(exc)
    named = _NAMED.search(text)
    return RequestError(400, text, f"settings.{named.group(1)}" if named else "settings")


def _check_tables(settings: Any) -> dict[str, Any]:
    if not isinstance(settings, Mapping):
        raise RequestError(400, "settings must be an object of tables (crawl, fetch, ...)", "settings")
    for key, table in settings.items():
        if key not in _TABLES:
            raise RequestError(400, f"settings.{key}: unknown table (known: "
                                    f"{', '.join(sorted(_TABLES))})", f"settings.{key}")  # fmt: skip
        if key == "filters":
            if not isinstance(table, list) or not all(isinstance(t, Mapping) for t in table):
                raise RequestError(400, "settings.filters must be a list of tables", "settings.filters")
        elif not isinstance(table, Mapping):
            raise RequestError(400, f"settings.{key} must be an object", f"settings.{key}")
    return dict(settings.items())


def check_public(settings: Mapping[str, Any]) -> None:
    """Off loopback, settings that reach private addresses are refused."""
    fetch = settings.get("fetch") or {}
    for key in ("allow_private", "proxy"):
        if fetch.get(key):
            raise RequestError(403, f"settings.fetch.{key}: refused, this server is not on "
                                    "loopback (crawls reach public addresses only)",
                               f"settings.fetch.{key}")  # fmt: skip
    if (settings.get("crawl") or {}).get("frontier_url"):
        raise RequestError(403, "settings.crawl.frontier_url: refused off loopback",
                           "settings.crawl.frontier_url")  # fmt: skip


def parse_request(
    body: Any, *, runs_dir: Path, models_dir: Path | None = None, public_only: bool = False,
    redis_url: str | None = None,
) -> CrawlSpec:
    """The checked spec of a ``POST /api/crawls`` body, or :class:`RequestError`."""
    if not isinstance(body, Mapping):
        raise RequestError(400, "the body must be a JSON object")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise RequestError(400, f"unknown field {unknown[0]!r} (known: {', '.join(sorted(_FIELDS))})",
                           unknown[0])  # fmt: skip
    name = check_name(body.get("name"))
    kind = body.get("kind", "crawl")
    if kind not in KINDS:
        raise RequestError(400, f"kind must be one of {', '.join(KINDS)}", "kind")
    seeds = body.get("seeds")
    if not isinstance(seeds, list) or not seeds or len(seeds) > _MAX_SEEDS:
        raise RequestError(400, f"seeds must be a list of 1 to {_MAX_SEEDS:,} URLs", "seeds")
    checked = tuple(_check_seed(i, s, public_only) for i, s in enumerate(seeds))
    settings = _check_tables(body.get("settings", {}))
    if public_only:
        check_public(settings)
    model = body.get("model")
    if model is not None:
        settings["model"] = _saved_model(model, models_dir)
    archives = _archives(body.get("archives"), kind, runs_dir)
    workers = _workers(body.get("workers", 0), kind, redis_url, settings)
    check_settings(settings)
    return CrawlSpec(name, kind, checked, settings, archives, workers)


def _workers(workers: Any, kind: str, redis_url: str | None, settings: dict[str, Any]) -> int:
    """A shared crawl: its frontier on the server's Redis (``serve --redis``), never on one
    a request names, and ``workers`` local worker processes (more join from elsewhere)."""
    if workers == 0:
        return 0
    if not isinstance(workers, int) or isinstance(workers, bool) or not 0 < workers <= _MAX_WORKERS:
        raise RequestError(400, f"workers must be a whole number from 0 to {_MAX_WORKERS}", "workers")
    if redis_url is None:
        raise RequestError(400, "workers: this server has no Redis for shared crawls (serve --redis URL)",
                           "workers")  # fmt: skip
    if kind != "crawl":
        raise RequestError(400, "workers: a simulation runs in one process", "workers")
    settings["crawl"] = {**settings.get("crawl", {}), "frontier": "redis", "frontier_url": redis_url}
    return workers


def _saved_model(model: Any, models_dir: Path | None) -> dict[str, Any]:
    """``model``: the name of a trained model in the server's models directory."""
    if models_dir is None:
        raise RequestError(400, "model: this server has no models directory (serve --models DIR); "
                                "give a model table in settings.model instead", "model")  # fmt: skip
    if not isinstance(model, str) or not NAME.fullmatch(model) or not (models_dir / model).is_dir():
        known = ", ".join(list_models(models_dir)) or "none"
        raise RequestError(400, f"model {str(model)[:80]!r}: no such trained model (known: {known})", "model")
    return {"path": str((models_dir / model).resolve())}


def list_models(models_dir: Path | None) -> list[str]:
    """The trained models the start form offers: the directories of ``models_dir``."""
    if models_dir is None or not models_dir.is_dir():
        return []
    return sorted(p.name for p in models_dir.iterdir() if p.is_dir() and NAME.fullmatch(p.name))


def _archives(archives: Any, kind: str, runs_dir: Path) -> tuple[str, ...]:
    """A simulation's WARC files: paths inside the runs directory, nowhere else."""
    if kind != "simulate":
        if archives:
            raise RequestError(400, "archives: only a simulate crawl reads archives", "archives")
        return ()
    if not isinstance(archives, list) or not archives:
        raise RequestError(400, "archives: a simulation needs a list of WARC files", "archives")
    root = runs_dir.resolve()
    out = []
    for i, item in enumerate(archives):
        where = f"archives[{i}]"
        if not isinstance(item, str):
            raise RequestError(400, f"{where} must be a path", where)
        path = (root / item).resolve()
        if not path.is_relative_to(root):
            raise RequestError(403, f"{where}: outside the runs directory", where)
        if not path.is_file():
            raise RequestError(400, f"{where}: no such file in the runs directory", where)
        out.append(str(path))
    return tuple(out)


def check_settings(settings: Mapping[str, Any]) -> None:
    """The tables as a crawl would read them: the parameter system, the strategy's name
    and parameters, the model table's name (a model is not loaded here)."""
    try:
        loaded = load_settings(None, {k: v for k, v in settings.items() if k != "filters"}, environ={})
        strategy = STRATEGIES.get(loaded.crawl.strategy)
    except ConfigError as exc:
        error = _settings_error(exc)
        if "unknown strategy" in str(exc):
            error.field = "settings.crawl.strategy"
        raise error from None
    # the parts' names and parameters by their own Params, nothing built or read (a bad
    # one was a crawl started, 201, that failed at once with exit 2)
    where = "settings.crawl.strategy_params"
    try:
        strategy.make_params(loaded.crawl.strategy_params)
        where = "settings.model"
        model = dict(settings.get("model") or {})
        if "name" in model and "topic" not in model:  # (a topic file gives parameters)
            cls = MODELS.get(str(model.pop("name")))
            model_params(cls, model, Path("."))  # (no file read: no topic)
        for i, table in enumerate(settings.get("filters") or ()):
            where = f"settings.filters[{i}]"
            kind, params = filter_spec(table)
            kind.make_params(params)
    except ConfigError as exc:
        raise RequestError(400, str(exc), where) from None
    text = to_toml((), settings)
    if tomllib.loads(text).get("model", {}) != dict(settings.get("model") or {}):
        raise RequestError(400, "settings.model: values TOML cannot hold", "settings.model")


def toml_value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RequestError(400, f"settings.{where}: must be a finite number", f"settings.{where}")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string is JSON's
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v, where) for v in value) + "]"
    if isinstance(value, Mapping):
        items = (f"{json.dumps(str(k))} = {toml_value(v, f'{where}.{k}')}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if value is None:
        raise RequestError(400, f"settings.{where}: null is no TOML value (leave it out)", f"settings.{where}")
    raise RequestError(400, f"settings.{where}: not a TOML value", f"settings.{where}")


def to_toml(seeds: tuple[str, ...] | list[str], settings: Mapping[str, Any]) -> str:
    """The config file of a crawl: ``seeds`` and the settings' tables.

    >>> text = to_toml(["http://a.org/"], {"crawl": {"max_pages": 5}, "filters": [{"name": "x"}]})
    >>> tomllib.loads(text)
    {'seeds': ['http://a.org/'], 'crawl': {'max_pages': 5}, 'filters': [{'name': 'x'}]}
    """
    lines = [f"seeds = {toml_value(list(seeds), 'seeds')}"]
    for section, table in settings.items():
        if section == "filters":
            continue
        lines.append(f"[{section}]")
        lines.extend(f"{json.dumps(str(k))} = {toml_value(v, f'{section}.{k}')}"
                     for k, v in table.items() if v is not None)  # fmt: skip
    for table in settings.get("filters") or ():
        lines.append("[[filters]]")
        lines.extend(f"{json.dumps(str(k))} = {toml_value(v, f'filters.{k}')}" for k, v in table.items())
    return "\n".join(lines) + "\n"
