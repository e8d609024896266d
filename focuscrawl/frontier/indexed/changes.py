"""The rows changed since the commit: the one small log the indexed store's roles share.

Every role that changes a row's state, score or tier notes it here
(:meth:`ChangeLog.touched`); a role that changes an extra column notes that column's
rows (:meth:`ChangeLog.noted`). The journal writes what was noted at each commit
(:meth:`ChangeLog.pending`, then :meth:`ChangeLog.clear`); a role that keeps a cache
derived from the rows (the columns' ``top`` caches) watches the log: it is handed
the notes before they are emptied. A touched row is also offered to the buffer of
the best queued rows (:class:`~focuscrawl.frontier.indexed.order.BestQueue`), so
that ``pop`` sees a score that rose at once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from focuscrawl.frontier.indexed.order import BestQueue
from focuscrawl.frontier.indexed.table import Rows

__all__ = ["ChangeLog"]


class ChangeLog:
    """The rows noted since the commit (see the module docstring).

    ``arrays`` and ``ones``: the rows whose state, score or tier changed, as arrays
    and as single rows (a page's few rows take a fast branch without arrays);
    ``extra``: the rows changed of each extra column. Read-only for everyone but
    this class: the watchers read them in their ``feed``.
    """

    def __init__(self, best: BestQueue) -> None:
        self._best = best
        self.arrays: list[Rows] = []
        self.ones: list[int] = []
        self.extra: dict[str, list[Rows]] = {}
        self._watchers: list[tuple[Callable[[], None], Callable[[], None]]] = []

    def touched(self, rows: Rows | list[int] | int, *, rising: bool = False) -> None:
        """Rows whose state, score or tier changed (``rising``: only scores that rose):
        noted for the journal, offered to the buffer. One row or a few as a list take
        a fast branch without arrays."""
        if isinstance(rows, np.ndarray):
            self.arrays.append(rows)
            self._best.offer(rows, rising=rising)
            return
        few = rows if isinstance(rows, list) else [rows]
        self.ones += few
        self._best.offer_list(few, rising=rising)

    def noted(self, column: str, rows: Rows) -> None:
        """Rows whose value of the extra ``column`` changed."""
        self.extra.setdefault(column, []).append(rows)

    def watch(self, feed: Callable[[], None], emptied: Callable[[], None]) -> None:
        """``feed()`` is called before the notes are emptied, ``emptied()`` after."""
        self._watchers.append((feed, emptied))

    def pending(self) -> tuple[list[Rows], dict[str, list[Rows]]]:
        """The rows noted (the single rows as one more array) and the extra columns'."""
        arrays = self.arrays
        if self.ones:
            arrays = [*arrays, np.array(self.ones, np.int64)]
        return arrays, self.extra

    def clear(self) -> None:
        """The notes were written (a commit): the watchers fed, the notes emptied."""
        for feed, _ in self._watchers:
            feed()
        self.arrays, self.ones, self.extra = [], [], {}
        for _, emptied in self._watchers:
            emptied()
