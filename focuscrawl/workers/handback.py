"""Partitions a worker gives back to a worker that joined (issue 40): chosen so that
the joiner gets work, not only empty partitions, and let go once they are settled.

A busy worker always has partitions with URLs in flight or results whose marks wait
for the next commit in its outbox: its next owner would queue those URLs again. So a
partition to give back first *leaves*: nothing more is taken from it, and it is freed
once nothing of it is in flight here and no mark of it is undelivered (at the next
commit, at most ``commit_seconds`` later). Without that step a busy worker gave back
only the partitions it happened to have settled at that instant: those without hosts.

The partitions chosen are a proportional part of those with work (queued or in
flight) and of the empty ones, so the worker that joins gets its share of the hosts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

__all__ = ["Handback"]


class Handback:
    """The partitions of one worker that are leaving (see the module)."""

    def __init__(self) -> None:
        self.leaving: set[int] = set()
        self.delay = 0.0  # seconds a partition given back stays free (the per-host delay)

    def choose(
        self,
        owned: Collection[int],
        share: int,
        busy: Iterable[int],
        calls: Sequence[tuple[int, Any]],
        delay: float,
    ) -> list[int]:
        """More of ``owned`` to give back, down to ``share`` with those leaving already:
        as many, in proportion, of the partitions with work (``busy``: queued or in
        flight, or with a mark in the outbox ``calls``) as of the others. They leave
        from now on; ``delay``: seconds each stays free once given back.

        >>> sorted(Handback().choose(range(8), 4, [0, 1], [(2, ["mark"]), (3, ["mark"]), (5, ["add"])], 0.1))
        [0, 1, 4, 5]
        """
        self.delay = delay
        n = len(owned) - share - len(self.leaving)
        pool = sorted(p for p in owned if p not in self.leaving)
        if n <= 0 or not pool:
            return []
        working = set(busy) | {p for p, args in list(calls) if args[0] == "mark"}
        with_work = [p for p in pool if p in working]
        empty = [p for p in pool if p not in working]
        from_working = min(len(with_work), round(n * len(with_work) / len(pool)))
        chosen = with_work[:from_working] + empty[: n - from_working]
        self.leaving.update(chosen)
        return chosen

    def settled(self, in_flight: Counter[int], calls: Sequence[tuple[int, Any]]) -> list[int]:
        """The leaving partitions that can be freed now: nothing of them in flight here,
        no mark of theirs in the outbox ``calls``. (In flight is read first: a result is
        kept in the outbox before its URL stops counting as in flight.)"""
        idle = [p for p in sorted(self.leaving) if not in_flight.get(p)]
        marked = {p for p, args in list(calls) if args[0] == "mark"}
        return [p for p in idle if p not in marked]

    def gone(self, partitions: Iterable[int]) -> None:
        self.leaving.difference_update(partitions)
