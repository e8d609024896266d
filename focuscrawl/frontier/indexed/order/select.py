"""Choosing the best queued rows of the indexed crawl DB exactly, over any set of rows.

The pop order is a key per row: tier descending, score descending, then row (seq)
ascending. These functions select and order by it without sorting more than they
must: :func:`select_rows` keeps the best ``m`` of some rows (``np.partition``,
ties at the cut broken by row, so the selection is exact), :func:`top_rows` and
:func:`head_rows` sort only those, :func:`best_queued` finds the best queued rows of
the whole table chunk by chunk (the temporaries stay small whatever its size), and
:func:`walk_rows` takes the first ``n`` of sorted rows skipping excluded hosts and
hosts at their cap (the best few selected first, all of them only if need be).

They serve the buffer of the best rows (:mod:`~focuscrawl.frontier.indexed.order`):
its rebuild (:func:`best_capped`), the pops its ordered walk
(:mod:`~focuscrawl.frontier.indexed.order.ranking`) cannot settle, and the scan of every
eligible row when even a fresh buffer is not enough (:func:`scan`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed.table import CHUNK_ROWS, Rows, UrlTable, drop_repeats
from focuscrawl.types import URLState

_QUEUED = int(URLState.QUEUED)


def key_order(table: UrlTable, rows: Rows) -> Rows:
    """The permutation that sorts ``rows`` by key (tier desc, score desc, row asc)."""
    if table.tiered:
        return np.lexsort((rows, -table.score[rows], -table.tier[rows]))
    return np.lexsort((rows, -table.score[rows]))


def _largest(values: npt.NDArray[Any], rows: Rows, m: int) -> npt.NDArray[np.bool_]:
    """Flags of the ``m`` largest ``values`` (``0 < m <= len``); ties: the lowest ``rows``."""
    kth = np.partition(values, len(values) - m)[len(values) - m]  # the m-th largest
    above: npt.NDArray[np.bool_] = values > kth
    tied = np.flatnonzero(values == kth)
    need = m - int(np.count_nonzero(above))
    if len(tied) > need:
        tied = tied[np.argsort(rows[tied], kind="stable")[:need]]
    above[tied] = True
    return above


def top_rows(table: UrlTable, rows: Rows, m: int) -> tuple[Rows, bool]:
    """The best ``m`` of ``rows`` (any order), sorted by key; True if all of them.

    Ties at the cut are broken by seq like everywhere else: the selection is exact.
    """
    rows, complete = select_rows(table, rows, m)
    return rows[key_order(table, rows)], complete


def select_rows(table: UrlTable, rows: Rows, m: int) -> tuple[Rows, bool]:
    """The best ``m`` of ``rows`` in their order (not sorted); True if all of them."""
    complete = len(rows) <= m
    if not complete:
        scores = table.score[rows]
        if table.tiered:  # every row of a higher tier than the cut's, the best of the cut's
            tiers = table.tier[rows]
            cut = np.partition(tiers, len(rows) - m)[len(rows) - m]
            keep = tiers > cut
            at = np.flatnonzero(tiers == cut)
            keep[at[_largest(scores[at], rows[at], m - int(np.count_nonzero(keep)))]] = True
        else:
            keep = _largest(scores, rows, m)
        rows = rows[keep]
    return rows, complete


def head_rows(table: UrlTable, rows: Rows, m: int) -> Rows:
    """The best ``m`` entries of ``rows`` (any order, repeats allowed), sorted by key,
    each row once: exactly the first rows of the queue order over ``rows``."""
    return drop_repeats(top_rows(table, rows, m)[0])


def take_capped(
    rows: Rows,
    hosts: npt.NDArray[Any],
    counts: dict[int, int],
    per_host: int,
    taken: list[int],
    n: int,
) -> bool:
    """Greedy over ``rows`` (in order, with their ``hosts``): append to ``taken`` each row
    whose host has fewer than ``per_host`` in ``counts`` (0: no cap); True at ``n``."""
    for row, h in zip(rows.tolist(), hosts.tolist(), strict=True):
        if per_host:
            if counts.get(h, 0) >= per_host:
                continue
            counts[h] = counts.get(h, 0) + 1
        taken.append(row)
        if len(taken) >= n:
            return True
    return False


def top_tier(table: UrlTable, layer_limit: int | None) -> int | None:
    """The highest tier of the queued rows (of layers ``<= layer_limit``); None if none."""
    best: int | None = None
    for lo in range(0, table.n, CHUNK_ROWS):
        hi = min(lo + CHUNK_ROWS, table.n)
        ok = table.state[lo:hi] == _QUEUED
        if layer_limit is not None:
            ok &= table.layer[lo:hi] <= layer_limit
        if ok.any():
            tier = int(table.tier[lo:hi][ok].max())
            best = tier if best is None else max(best, tier)
    return best


def best_queued(
    table: UrlTable,
    m: int,
    layer_limit: int | None = None,
    excluded: npt.NDArray[np.bool_] | None = None,
    tier: int | None = None,
) -> tuple[Rows, bool]:
    """The best ``m`` eligible queued rows, sorted by key; True if those are all of them.

    Chunk by chunk, so that the temporaries stay small whatever the table size.
    """
    picks: list[Rows] = []
    held = total = 0
    for lo in range(0, table.n, CHUNK_ROWS):
        hi = min(lo + CHUNK_ROWS, table.n)
        ok = table.state[lo:hi] == _QUEUED
        if layer_limit is not None:
            ok &= table.layer[lo:hi] <= layer_limit
        if excluded is not None:
            ok &= ~excluded[table.host[lo:hi]]
        if tier is not None:
            ok &= table.tier[lo:hi] == tier
        rows = np.flatnonzero(ok).astype(np.int64) + lo
        total += len(rows)
        best, _ = select_rows(table, rows, m)  # sorted once, at the end
        picks.append(best)
        held += len(best)
        if held > 4 * m:  # the best of the best so far: top-m of a union is top-m of tops
            picks = [select_rows(table, np.concatenate(picks), m)[0]]
            held = len(picks[0])
    rows = np.sort(np.concatenate(picks)) if picks else np.empty(0, np.int64)
    return top_rows(table, rows, m)[0], total <= m


def host_ranks(hosts: npt.NDArray[Any]) -> Rows:
    """The rank of each entry among the entries of its host, in the given order.

    >>> host_ranks(np.array([7, 3, 7, 7, 3])).tolist()
    [0, 0, 1, 2, 1]
    """
    order = np.argsort(hosts, kind="stable")
    grouped = hosts[order]
    index = np.arange(len(hosts))
    starts = np.maximum.accumulate(np.where(np.r_[True, grouped[1:] != grouped[:-1]], index, 0))
    rank = np.empty(len(hosts), np.int64)
    rank[order] = index - starts
    return rank


def best_capped(table: UrlTable, size: int, cap: int) -> tuple[Rows, bool, Rows]:
    """The best ``size`` queued rows with at most ``cap`` of a host, sorted by key.

    Returns them, whether they hold every queued row of a host they do not truncate
    (no threshold below them), and the rows at which hosts were truncated: the
    ``cap``-th best row of each host that has more queued rows above the last row
    taken. The best rows are selected without a cap, ``m`` of them, ``m`` growing
    until the capped selection is full or holds every queued row.
    """
    m = size
    while True:
        rows, complete = best_queued(table, m)
        hosts = table.host[rows]
        rank = host_ranks(hosts)
        kept = np.flatnonzero(rank < cap)
        if len(kept) >= size or complete:
            break
        m *= 4
    full = len(kept) > size or (len(kept) == size and not complete)
    end = int(kept[size - 1]) + 1 if full else len(rows)  # the rows at or above the last taken
    over = hosts[:end][rank[:end] >= cap]
    marks = rows[:end][(rank[:end] == cap - 1) & np.isin(hosts[:end], over)]
    return rows[kept[:size]], not full, marks


def top_tier_rows(table: UrlTable, rows: Rows, layer_limit: int | None) -> tuple[Rows, bool]:
    """The allowed ``rows`` (of layers ``<= layer_limit``) of the top tier among them;
    True if an allowed row of a lower tier is there too (then, ``rows`` being the
    buffer, every queued row of the top tier is in it)."""
    if layer_limit is not None:
        rows = rows[table.layer[rows] <= layer_limit]
    if not table.tiered or not rows.size:
        return rows, False
    tiers = table.tier[rows]
    top = tiers == tiers.max()
    if top.all():
        return rows, False
    return rows[top], True


def conclusive(
    table: UrlTable,
    rows: Rows,
    taken: list[int],
    queued_per_host: npt.NDArray[np.int64],
    excluded: npt.NDArray[np.bool_] | None,
    per_host: int,
) -> bool:
    """True if no queued row outside ``rows`` (the buffer) could have been taken.

    Such a row needs a host that is not excluded, not capped, and has queued
    rows beyond those in the buffer: a host-sized test instead of a scan, which
    settles the common short pop (every host with URLs capped or cooling down).
    """
    hosts = len(queued_per_host)
    outside = queued_per_host - np.bincount(table.host[rows], minlength=hosts)
    open_hosts = outside > 0
    if excluded is not None:
        open_hosts &= ~excluded
    if per_host:
        took = np.bincount(table.host[np.array(taken, np.int64)], minlength=hosts)
        open_hosts &= took < per_host
    return not bool(open_hosts.any())


def scan(
    table: UrlTable,
    n: int,
    excluded: npt.NDArray[np.bool_] | None,
    per_host: int,
    layer_limit: int | None,
) -> list[int]:
    """Pop over every eligible queued row: the best ``m``, ``m`` growing until enough."""
    tier = top_tier(table, layer_limit) if table.tiered else None
    m = max(4 * n, 1024)
    while True:
        best, complete = best_queued(table, m, layer_limit, excluded, tier)
        taken = walk_rows(table, best, n, None, per_host)
        if len(taken) >= n or complete:
            return taken
        m *= 4


def walk_rows(
    table: UrlTable, rows: Rows, n: int, excluded: npt.NDArray[np.bool_] | None, per_host: int
) -> list[int]:
    """Greedy over ``rows`` (sorted by key): skip excluded and capped hosts."""
    if excluded is not None:
        rows = rows[~excluded[table.host[rows]]]
    # most pops are settled by the best few rows: select them, sort only those
    k = 4 * n + 8 if per_host else n
    prefix = head_rows(table, rows, k)
    complete = len(prefix) >= len(rows)
    if not per_host and (len(prefix) >= n or complete):
        best: list[int] = prefix[:n].tolist()
        return best
    if per_host:
        head: list[int] = []
        counts: dict[int, int] = {}
        done = 0  # a longer prefix starts with the shorter one: go on from there
        while True:
            more = prefix[done:]
            if take_capped(more, table.host[more], counts, per_host, head, n):
                return head
            if complete:
                return head
            k *= 4  # the best k entries (a row may repeat), not k rows
            if 4 * k > len(rows):  # most of the rows: sort them all instead
                break
            done = len(prefix)
            prefix = head_rows(table, rows, k)
            complete = len(prefix) >= len(rows)
        # the rest needs every row, in order
    rows = drop_repeats(rows[key_order(table, rows)])
    if per_host:
        hosts = table.host[rows]
        distinct = np.unique(hosts).tolist()
        if len(distinct) <= 8:  # few hosts (a site crawl): the first rows of each
            firsts = [np.flatnonzero(hosts == h)[:per_host] for h in distinct]
            head = rows[np.sort(np.concatenate(firsts))][:n].tolist()
            return head
        rows = rows[host_ranks(hosts) < per_host]
    taken: list[int] = rows[:n].tolist()
    return taken
