"""The FrontierStore protocol: the crawl DB every strategy's scores go into, by role
(as frontera's backend splits it): :class:`UrlQueue` (the URLs, their states and
queue), :class:`UrlColumns` (per-URL values written in place: the score and tier that
order the queue, and the strategy's extra columns), :class:`LinkGraph` (parent edges,
and the sibling raise that reads them) and :class:`RunJournal` (run state and the
commit); a store is all four."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Protocol

from focuscrawl.exceptions import FrontierError
from focuscrawl.types import Merge, QueuedURL, URLState


def no_edges_error(store: str) -> FrontierError:
    """The one-line error of every store asked for parent edges it does not keep."""
    return FrontierError(
        f"{store} keeps no parent edges: a strategy that reads parents"
        " or children, or raises siblings, sets needs_parents = True"
    )


class UrlQueue(Protocol):
    """The URLs and their queue: add and merge, pop in priority order, states, counts.

    A higher tier is always sooner, and within a tier a higher score (see
    :class:`FrontierStore`); :class:`UrlColumns` changes both in place."""

    def add(
        self,
        url: str,
        score: float,
        *,
        depth: int,
        parent: str | None,
        host: str,
        merge: Merge = Merge.MAX,
        layer: int = 0,
        count: int = 1,
        tier: int = 0,
    ) -> bool:
        """Add a URL, or merge ``(tier, score)`` into a known one of *any* state.

        Cash added to an in-flight or fetched URL is kept. Score and tier merge as
        a pair: ``KEEP`` keeps both, ``SET`` sets both, ``MAX`` takes the larger
        ``(tier, score)``, ``ADD`` adds the scores and keeps the larger tier.
        Records ``parent`` as one more parent of the URL with ``count`` = t(parent,
        url), the number of links parent -> url (the same edge again: the new count
        replaces the old one). Returns True if the URL was new.
        """
        ...

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str, int, int]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """Batch form of :meth:`add`: ``(url, score, depth, parent, host, count, tier)``.

        Returns the number of new URLs.
        """
        ...

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """Take up to ``n`` best queued URLs (tier desc, score desc, then discovery order).

        Skips hosts in ``exclude_hosts`` and takes at most ``max_per_host`` URLs of
        one host (0 = no limit). ``max_layer`` restricts to URLs discovered in
        layers ``<= max_layer``. Tier-strict: only URLs of the highest tier among
        the queued URLs (of layers ``<= max_layer``) are taken, even if politeness
        leaves some or all of them out. Taken URLs move to IN_FLIGHT.
        """
        ...

    def pop_in_room(
        self, n: int, in_flight: Mapping[str, int], per_host: int
    ) -> list[QueuedURL]:
        """Up to ``n`` best queued URLs, greedy by priority, each host within its own
        room: at most ``per_host`` in flight, ``in_flight`` counting those already
        out. The one place a host's room is decided (politeness decides only when);
        every store gives it by :func:`popped_in_room` over its own :meth:`pop`."""
        ...

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (FETCHED, FAILED, DROPPED, or back to QUEUED)."""
        ...

    def requeue_in_flight(self) -> int:
        """After a crash: put every IN_FLIGHT URL back to QUEUED. Returns how many."""
        ...

    def get(self, url: str) -> QueuedURL | None:
        """The stored row of a URL, whatever its state, with its current score and tier."""
        ...

    def state(self, url: str) -> URLState | None: ...

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        """The state of each URL of ``urls`` the store knows (unknown ones left out):
        a page's links looked up at once (one round trip for a shared store)."""
        ...

    def count(self, state: URLState | None = None) -> int: ...

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        """URLs of a host (in the given states, or all)."""
        ...

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        """:meth:`host_count` of each host (all states), at once."""
        ...

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]: ...


class UrlColumns(Protocol):
    """Per-URL values written in place: the score and tier (the queue's order), and the
    extra float columns a strategy keeps (P0's cash, P2's parent perplexity), journaled
    like the score."""

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Change the scores of known URLs of any state; unknown URLs are ignored.

        Fetched pages keep OTIE/OPIC cash this way (a re-crawl is
        ``mark(url, QUEUED)``). Repeated URLs in one batch are combined first.
        Returns the number of URLs whose score was written.
        """
        ...

    def update_host(
        self,
        host: str,
        score: float,
        merge: Merge,
        *,
        states: Collection[URLState] = (URLState.QUEUED,),
    ) -> int:
        """Merge ``score`` into every URL of ``host`` in ``states``; returns how many were written."""
        ...

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        """Set the tiers of known URLs (the last of repeats wins); returns how many known URLs."""
        ...

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """:meth:`update_scores` for an extra column (``"score"``: the score itself).

        Unknown URLs are ignored; a known URL's value defaults to 0.0.
        """
        ...

    def ensure_columns(self, names: Iterable[str]) -> None:
        """Create the extra per-URL float columns ``names`` (idempotent, durable)."""
        ...

    def value(self, url: str, column: str) -> float | None:
        """The value of ``column`` for ``url`` (None: URL unknown; 0.0 if never set)."""
        ...

    def column_names(self) -> list[str]:
        """The extra columns created so far, sorted."""
        ...

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        """For every known URL, any state: ``dst = (dst if add else 0) + Σ factor · src``
        over ``terms`` (``"score"`` may be ``dst`` or a source). Durable at the next commit."""
        ...

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column`` (ties: discovery order)."""
        ...


class LinkGraph(Protocol):
    """The parent edges with their link counts t(i, j) (kept when a strategy reads them)."""

    def parents(self, url: str) -> list[str]: ...

    def children(self, parent: str) -> list[str]: ...

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        """Children of ``parent`` with t(parent, child), in discovery order."""
        ...

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise every queued child of ``parent`` to at least ``score`` (sibling update)."""
        ...


class RunJournal(Protocol):
    """What makes a store durable with the outputs: small run state and the commit."""

    def get_meta(self, key: str) -> str | None:
        """Small key/value store for run state (layer number, strategy state...)."""
        ...

    def set_meta(self, key: str, value: str) -> None: ...

    def commit(self) -> None: ...

    def close(self) -> None: ...


class FrontierStore(UrlQueue, UrlColumns, LinkGraph, RunJournal, Protocol):
    """Every known URL with its state, score, tier, host, depth, parents (with link
    counts), order, layer and extra per-URL float columns.

    Scores and tiers are mutable in place; a higher tier is always sooner, and
    within a tier a higher score. Extra columns (:meth:`ensure_columns`) are kept
    and journaled like the score. All writes are durable after :meth:`commit` (the
    engine commits after each batch of results together with the output files,
    which is what makes resume exact). Semantics: :mod:`focuscrawl.frontier.memory`.
    """


def popped_in_room(
    queue: UrlQueue, n: int, in_flight: Mapping[str, int], per_host: int
) -> list[QueuedURL]:
    """:meth:`UrlQueue.pop_in_room` by ``queue``'s :meth:`~UrlQueue.pop` and
    :meth:`~UrlQueue.mark`: what a pop takes beyond a host's room goes back at once."""
    inflight = dict(in_flight)
    taken: list[QueuedURL] = []
    while len(taken) < n:
        blocked = {h for h, k in inflight.items() if k >= per_host}
        # Every host has room for per_host - inflight more URLs. One pop caps all hosts
        # alike, so it is capped at the least room of a host in flight (per_host if
        # none): it never takes a URL beyond a host's room, where a cap of per_host
        # made it take (with one host, 16 per host) 16 URLs to keep 1 and put 15 back.
        cap = per_host - max((k for k in inflight.values() if k < per_host), default=0)
        got = queue.pop(n - len(taken), exclude_hosts=blocked, max_per_host=cap)
        if not got:
            break
        # Greedy by priority with each host's own room is the schedule. A host that
        # reached the common cap with room to spare may have a better URL than the
        # rest of this pop: keep the pop up to the first such URL, put back the rest.
        count: dict[str, int] = {}
        for i, queued in enumerate(got):
            host = queued.host
            count[host] = mine = count.get(host, 0) + 1
            inflight[host] = busy = inflight.get(host, 0) + 1
            taken.append(queued)
            if mine == cap and busy < per_host:
                for back in got[i + 1 :]:
                    queue.mark(back.url, URLState.QUEUED)
                break
    return taken
