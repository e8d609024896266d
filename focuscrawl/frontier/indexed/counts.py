"""The per-host counters of the indexed store's queue: rows of each host by state.

The queue (:class:`~focuscrawl.frontier.indexed.queue.IndexedQueue`, with its adds)
owns them: every state transition and every new row goes through it. Counts, a
host's room and "is anything of these hosts queued" are read from here: no scan.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed.table import CHUNK_ROWS, UrlTable

__all__ = ["HostCounts"]

STATES = 5  # URLState values 0..4


class HostCounts:
    """``counts[host, state]``: the rows of each host id by state. ``cells`` is the
    same memory as one flat view, an item a Python int, at ``5 * host + state`` (the
    per-page paths change a few cells without numpy calls). Rows for at least every
    host id counted; :meth:`fit` makes room for a new host before its rows count."""

    def __init__(self, table: UrlTable, hosts: int) -> None:
        self._set(np.zeros((max(hosts, 64), STATES), np.int64))
        for lo in range(0, table.n, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, table.n)
            np.add.at(self.counts, (table.host[lo:hi], table.state[lo:hi]), 1)

    def _set(self, counts: npt.NDArray[np.int64]) -> None:
        self.counts = counts
        self.cells = counts.reshape(-1).data

    def fit(self, host_id: int) -> None:
        """Room for the counters of host ids up to ``host_id``."""
        size = len(self.counts)
        if host_id >= size:
            grown = np.zeros((max(2 * size, host_id + 1, 64), STATES), np.int64)
            grown[:size] = self.counts
            self._set(grown)
