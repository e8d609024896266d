"""The URL columns of the Redis frontier: scores, tiers and the extra value columns.

:class:`RedisColumns` is the :class:`~focuscrawl.frontier.base.UrlColumns` role of
:class:`~focuscrawl.frontier.redis.store.RedisFrontier`: the merges of scores and
column values into known URLs (applied by the script where the rows live, so that
writers commute where the merge rule does), tiers, a host's URLs (a scan of its
partition), the extra columns and their linear combination (a scan of every
partition), ``value`` and ``top`` (the FETCHED URLs' score indexed: each
partition's best; anything else a scan).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from focuscrawl.frontier.redis.decode import decoded_float
from focuscrawl.frontier.redis.namespace import Namespace
from focuscrawl.frontier.redis.rows import float_arg, row_of, text
from focuscrawl.frontier.rules import (
    SCORE,
    aggregated,
    checked_column,
    checked_int,
    checked_score,
)
from focuscrawl.types import Merge, URLState

__all__ = ["RedisColumns", "best_of_tops"]


def best_of_tops(results: Iterable[Any]) -> tuple[str, float] | None:
    """The best of the partitions' "top" answers (url, value, seq; empty: none there):
    the highest value, then the first discovered."""
    best: tuple[float, int, str] | None = None
    for result in results:
        if not result:
            continue
        url, value, seq = text(result[0]), float(result[1]), int(result[2])
        if best is None or value > best[0] or (value == best[0] and seq < best[1]):
            best = (value, seq, url)
    return None if best is None else (best[2], best[0])


class RedisColumns:
    """The columns of a Redis frontier (see the module docstring)."""

    def __init__(self, core: Namespace) -> None:
        self._core = core

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge scores into known URLs of any state; unknown URLs are ignored."""
        return self.update_values(SCORE, updates, merge)

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge values of ``column`` into known URLs (repeats combined first, as the reference)."""
        column = self._core.column(column)
        groups: dict[int, list[Any]] = {}
        for url, value in aggregated(updates, merge).items():
            groups.setdefault(self._core.part(url), []).extend((url, float_arg(value)))
        if not groups:
            return 0
        calls = [(p, ("values", column, merge.value, *args)) for p, args in groups.items()]
        return sum(int(r) for r in self._core.calls(calls))

    def ensure_columns(self, names: Iterable[str]) -> None:
        """Create the extra columns ``names`` (``"score"`` always exists)."""
        self._core.add_columns({checked_column(n) for n in names if n != SCORE})

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        """For every known URL: ``dst = (dst if add else 0) + Σ factor · src`` (one scan per partition)."""
        core = self._core
        dst = core.column(dst)
        flat: list[Any] = []
        for src, factor in terms:
            flat += [core.column(src), float_arg(checked_score(src, factor))]
        core.calls([(p, ("combine", dst, int(add), *flat)) for p in range(core.partitions)])

    def update_host(
        self,
        host: str,
        score: float,
        merge: Merge,
        *,
        states: Collection[URLState] = (URLState.QUEUED,),
    ) -> int:
        """Merge ``score`` into every URL of ``host`` in ``states`` (a scan of its partition)."""
        value = checked_score(host, score)
        wanted = sorted({int(URLState(s)) for s in states})
        args = ("host", host, float_arg(value), merge.value, *wanted)
        return int(self._core.call(self._core.part_host(host), *args))

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        """Set the tiers of known URLs (the last of repeats wins); returns how many known URLs."""
        tiers = {url: checked_int(f"tier of {url!r}", tier) for url, tier in updates}
        groups: dict[int, list[Any]] = {}
        for url, tier in tiers.items():
            groups.setdefault(self._core.part(url), []).extend((url, tier))
        if not groups:
            return 0
        calls = [(p, ("tier", *a)) for p, a in groups.items()]
        return sum(int(r) for r in self._core.calls(calls))

    def value(self, url: str, column: str) -> float | None:
        """``column`` of ``url``: None if the URL is unknown, 0.0 if never set."""
        column = self._core.column(column)
        key = self._core.keys.partition(self._core.part(url))
        pipe = self._core.db.pipeline(transaction=False)
        pipe.hget(key + "u", url)
        pipe.hget(key + "c:" + column, url)
        raw, value = pipe.execute()
        if raw is None:
            return None
        if column == SCORE:
            return row_of(raw, key + "u")[2]
        return 0.0 if value is None else decoded_float(key + "c:" + column, value)

    def column_names(self) -> list[str]:
        return sorted(self._core.read_columns())

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column``; ties: discovery order.

        The score of FETCHED URLs (OTIE's re-crawl) is indexed: each partition's best,
        one pipelined read; anything else is a scan of every partition."""
        column = self._core.column(column)
        if column == SCORE and state == URLState.FETCHED:
            pipe = self._core.db.pipeline(transaction=False)
            for p in range(self._core.partitions):
                pipe.zrange(self._core.keys.partition(p) + "fs", 0, 0)
            firsts = [bytes(m[0]) for m in pipe.execute() if m]
            if not firsts:
                return None
            url = text(min(firsts)[20:])
            row = self._core.row(url)
            return None if row is None else (url, row[2])
        calls = [(p, ("top", column, int(URLState(state)))) for p in range(self._core.partitions)]
        return best_of_tops(self._core.calls(calls))
