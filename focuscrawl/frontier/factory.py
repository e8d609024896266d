"""One place that turns the settings into a crawl DB store (``crawl.frontier``).

The engine, the simulation and any later shared store open their frontier here,
so a new store plugs in without editing the API.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.sqlite import SqliteFrontier
from focuscrawl.settings import Settings

# name in ``crawl.frontier`` -> opener of the store's DB file
STORES: dict[str, Callable[[Path], FrontierStore]] = {
    "indexed": IndexedFrontier,  # the default: numpy hot state + SQLite journal
    "sqlite": SqliteFrontier,
}


def open_frontier(settings: Settings, path: Path) -> FrontierStore:
    """Open (or create) the crawl DB at ``path`` with the store ``settings.crawl.frontier``.

    An unknown store name is a :class:`~focuscrawl.exceptions.ConfigError` (one
    line); an unusable file a :class:`~focuscrawl.exceptions.FrontierError`.
    """
    name = settings.crawl.frontier
    opener = STORES.get(name)
    if opener is None:
        choices = ", ".join(STORES)
        raise ConfigError(f"config: crawl.frontier = {name!r} (one of: {choices})")
    return opener(Path(path))
