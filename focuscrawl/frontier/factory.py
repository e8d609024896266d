"""One place that turns the settings into a crawl DB store (``crawl.frontier``).

The engine, the simulation and the shared store open their frontier here, so a new
store plugs in without editing the API.

A crawl on Redis (``crawl.frontier = "redis"``, the server in ``crawl.frontier_url``)
keeps no frontier in its run directory: its ``crawl.db`` is a small JSON marker that
names the crawl's key prefix in Redis (``fc:<random hex>``, made when the crawl
starts). Two crawls on one Redis never share keys, ``--resume`` finds its own, and
the run directory's checks ("holds a crawl already", a failed start taken back)
work unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.redis.keys import new_prefix
from focuscrawl.settings import Settings

MARKER_STORE = "focuscrawl-redis-frontier"  # the "store" of a Redis crawl's crawl.db marker


class Opener(Protocol):
    """A store's constructor: its DB file (or marker), whether the caller reads parent
    edges, and the server of a shared store (``crawl.frontier_url``; embedded stores
    ignore it)."""

    def __call__(self, path: Path, *, parents: bool = ..., url: str = ...) -> FrontierStore: ...


def open_indexed(path: Path, *, parents: bool = True, url: str = "") -> FrontierStore:
    return IndexedFrontier(path, parents=parents)


def redis_prefix(path: Path) -> str:
    """The key prefix of the Redis crawl whose marker is ``path`` (made if absent)."""
    if path.exists():
        try:
            marker = json.loads(path.read_bytes())
            if marker.get("store") != MARKER_STORE:
                raise ValueError(marker.get("store"))
            return str(marker["prefix"])
        except (ValueError, AttributeError, KeyError, TypeError) as exc:
            raise FrontierError(
                f"crawl DB {path} is not a Redis crawl's marker (a crawl of another"
                f" store: crawl.frontier as in its run.json): {exc}"
            ) from None
    prefix = new_prefix()
    write_marker(path, prefix)
    return prefix


def write_marker(path: Path, prefix: str, **more: str) -> None:
    """The crawl DB marker of a Redis crawl at ``path`` (replaced atomically): its key
    prefix, and ``more`` (a shared crawl's worker: its name)."""
    tmp = path.with_name(path.name + ".tmp")
    marker = {"store": MARKER_STORE, "prefix": prefix, **more}
    tmp.write_text(json.dumps(marker) + "\n", encoding="utf-8")
    tmp.replace(path)


def open_redis(path: Path, *, parents: bool = True, url: str = "") -> FrontierStore:
    """The Redis store of the crawl whose run directory holds ``path`` (its marker)."""
    from focuscrawl.frontier.redis.store import RedisFrontier  # the redis client only when used

    if not url:
        raise ConfigError(
            'config: crawl.frontier = "redis" needs crawl.frontier_url'
            " (--frontier redis://HOST:PORT/DB)"
        )
    return RedisFrontier(url, prefix=redis_prefix(Path(path)), parents=parents)


# name in ``crawl.frontier`` -> opener of the store's DB file
STORES: dict[str, Opener] = {
    "indexed": open_indexed,  # the default: numpy hot state + SQLite journal
    "redis": open_redis,  # shared past one machine: crawl.frontier_url names the server
}


def open_frontier(settings: Settings, path: Path, *, parents: bool = False) -> FrontierStore:
    """Open (or create) the crawl DB at ``path`` with the store ``settings.crawl.frontier``.

    ``parents``: the caller reads parent edges (the crawl's strategy has
    ``needs_parents``); a new DB then keeps them, else only first parents, which
    spares every page ~30 index inserts. An unknown store name is a
    :class:`~focuscrawl.exceptions.ConfigError` (one line); an unusable file, or a
    DB without parent edges opened with ``parents``, a
    :class:`~focuscrawl.exceptions.FrontierError`.
    """
    name = settings.crawl.frontier
    opener = STORES.get(name)
    if name == "sqlite":  # (removed in issue 25: the default keeps its data in SQLite too)
        raise ConfigError(
            'config: crawl.frontier = "sqlite": the plain SQLite store is gone; the default,'
            ' "indexed", keeps the crawl DB in SQLite too (numpy for the hot state)'
        )
    if opener is None:
        choices = ", ".join(STORES)
        raise ConfigError(f"config: crawl.frontier = {name!r} (one of: {choices})")
    return opener(Path(path), parents=parents, url=settings.crawl.frontier_url)
