"""One place that turns the settings into a crawl DB store (``crawl.frontier``).

The engine, the simulation and any later shared store open their frontier here,
so a new store plugs in without editing the API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.sqlite import SqliteFrontier
from focuscrawl.settings import Settings


class Opener(Protocol):
    """A store's constructor: its DB file, and whether the caller reads parent edges."""

    def __call__(self, path: Path, *, parents: bool = ...) -> FrontierStore: ...


# name in ``crawl.frontier`` -> opener of the store's DB file
STORES: dict[str, Opener] = {
    "indexed": IndexedFrontier,  # the default: numpy hot state + SQLite journal
    "sqlite": SqliteFrontier,
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
    if opener is None:
        choices = ", ".join(STORES)
        raise ConfigError(f"config: crawl.frontier = {name!r} (one of: {choices})")
    return opener(Path(path), parents=parents)
