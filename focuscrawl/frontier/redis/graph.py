"""The link graph of the Redis frontier: parent and child edges, the sibling raise.

:class:`RedisLinkGraph` is the :class:`~focuscrawl.frontier.base.LinkGraph` role of
:class:`~focuscrawl.frontier.redis.store.RedisFrontier`. The edges are written by
the queue's adds (``P par:<url>``, ``P ch:<url>`` in the URL's partition, when the
namespace keeps them); here they are read, in discovery order, and a parent's queued
children raised (one script per partition of its children).
"""

from __future__ import annotations

from focuscrawl.frontier.redis.decode import decoded
from focuscrawl.frontier.redis.namespace import Namespace
from focuscrawl.frontier.redis.rows import float_arg, text
from focuscrawl.frontier.rules import checked_score

__all__ = ["RedisLinkGraph"]


class RedisLinkGraph:
    """The link graph of a Redis frontier (see the module docstring)."""

    def __init__(self, core: Namespace) -> None:
        self._core = core

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise queued children of ``parent`` below ``score`` to ``score``."""
        core = self._core
        score = checked_score(parent, score)
        core.check_edges()
        groups: dict[int, list[str]] = {}
        for child in core.db.hkeys(core.keys.partition(core.part(parent)) + "ch:" + parent):
            url = text(child)
            groups.setdefault(core.part(url), []).append(url)
        if not groups:
            return 0
        calls = [
            (p, ("raise", float_arg(score), exclude or "", *urls)) for p, urls in groups.items()
        ]
        return sum(int(r) for r in core.calls(calls))

    def parents(self, url: str) -> list[str]:
        """First parent first, then the others in discovery order."""
        core = self._core
        core.check_edges()
        row = core.row(url)
        if row is None or not row[7]:
            return []
        first = row[7]
        others = [
            text(p) for p in core.db.smembers(core.keys.partition(core.part(url)) + "par:" + url)
        ]
        rows = core.rows(o for o in others if o != first)
        return [first, *sorted(rows, key=lambda p: rows[p][5])]

    def children(self, parent: str) -> list[str]:
        """Children in discovery order."""
        return [child for child, _ in self.children_counts(parent)]

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        """Children with t(parent, child), in discovery order."""
        self._core.check_edges()
        key = self._core.keys.partition(self._core.part(parent)) + "ch:" + parent
        raw = self._core.db.hgetall(key)
        counts = {text(c): decoded(key, k) for c, k in raw.items()}
        rows = self._core.rows(counts)
        return [(c, counts[c]) for c in sorted(counts, key=lambda c: rows[c][5])]
