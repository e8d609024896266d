"""What a worker does for the others: it keeps its hosts' politeness across a
partition's handover (:class:`HandoverFetcher`), and it retires a worker that died
and was not restarted (:func:`retire_dead`): the dead one's claim on the page budget
comes back, its journaled batch is delivered, and its files, on this machine, are cut
back to its last commit, as its own restart would."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from focuscrawl.crawler.run import DB_NAME, PAGES_NAME, WARC_NAME
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.base import Fetcher
from focuscrawl.fetch.transport import SEND_GATE, Answer, Transport, TransportError
from focuscrawl.frontier.factory import MARKER_STORE
from focuscrawl.output.committed import verify_committed
from focuscrawl.output.lock import RunLock
from focuscrawl.provenance import DECISIONS_NAME
from focuscrawl.types import FetchResult
from focuscrawl.urls import host_of
from focuscrawl.workers.politeness import HostHandover

_LEASE_POLL = 0.05  # seconds between two looks at a worker's leases before a request


class HandoverFetcher:
    """A worker's fetcher: a request to a host of a partition just taken waits first
    for what its last owner's requests left (:mod:`focuscrawl.workers.politeness`),
    and each fetch's host is recorded for the next owner."""

    def __init__(self, fetcher: Fetcher, handover: HostHandover) -> None:
        self.fetcher = fetcher
        self.handover = handover
        handover.ready_at = fetcher.host_ready_at

    async def __aenter__(self) -> HandoverFetcher:
        await self.fetcher.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.fetcher.__aexit__(*exc)

    async def fetch(self, url: str) -> FetchResult:
        try:
            host = host_of(url)
        except ValueError:
            return await self.fetcher.fetch(url)  # (a bad URL: the fetcher says why)
        wait = self.handover.wait(host)
        if wait > 0:  # (a deadline that never moves once set: one sleep)
            await asyncio.sleep(wait)
        try:
            return await self.fetcher.fetch(url)
        finally:  # (cancelled too: a request may have gone out)
            self.handover.fetched(host)

    def refusal(self, url: str) -> FetchResult | None:
        return self.fetcher.refusal(url)

    def host_ready_at(self, host: str) -> float:
        return self.fetcher.host_ready_at(host)

    def host_busy(self, host: str) -> bool:
        return self.fetcher.host_busy(host)

    def stragglers(self) -> int:
        return self.fetcher.stragglers()

    def sending(self, task: asyncio.Future[Any]) -> bool:
        return self.fetcher.sending(task)


class LeasedTransport:
    """A worker's transport: each request (robots.txt and redirects included) waits
    while its leases are not surely its own (a renewal late, a stall), and is never
    sent once they are lost: the host may be another worker's now."""

    def __init__(self, transport: Transport, leases: Any) -> None:
        self.transport = transport
        self.leases = leases

    async def __aenter__(self) -> LeasedTransport:
        await self.transport.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.transport.__aexit__(*exc)

    @contextlib.asynccontextmanager
    async def request(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        proxy: str | None = None,
        time_limit: float | None = None,
    ) -> AsyncIterator[Answer]:
        await self._leased()
        # and again once the transport holds the connection, just before it writes the
        # request: it may have waited for one meanwhile, and a worker stopped there
        # would send it when continued, on a host that is another's by then
        gate, gated = SEND_GATE.set(self._leased), True
        try:
            async with self.transport.request(
                url, headers, proxy=proxy, time_limit=time_limit
            ) as answer:
                SEND_GATE.reset(gate)
                gated = False
                yield answer
        finally:
            if gated:
                SEND_GATE.reset(gate)

    async def _leased(self) -> None:
        """Wait while the leases are not surely this worker's; TransportError once lost."""
        while not self.leases.usable():
            if self.leases.lost:
                raise TransportError("lease-lost", "this worker's partitions are another's")
            await asyncio.sleep(_LEASE_POLL)


def describe(frontier: Any, out_dir: Path) -> None:
    """Where this worker's run directory is, for a worker that may find it dead."""
    frontier.outbox.describe(host=socket.gethostname(), dir=str(Path(out_dir).resolve()))


def retire_dead(frontier: Any) -> int:
    """Retire the workers whose heartbeat expired and whose claims were not released
    (see :mod:`focuscrawl.workers.claims`): each is fenced, its journaled batch
    delivered, its files cut back to its last commit when they are on this machine, and
    its claims beyond the pages of that commit given back. Returns the pages given back."""
    budget, outbox = frontier.budget, frontier.outbox
    released = 0
    for name in budget.dead():
        run = outbox.journal_of(name).get("run", "")  # (read first: a restart changes it)
        if not budget.retire(name):
            continue  # alive again
        journal = outbox.fence(name, run)  # (a stalled worker's commit lands before, or never)
        if journal is None:
            continue  # started again meanwhile: it goes on from its last commit itself
        if outbox.deliver_journaled(name, settle=True):
            frontier.counters["outbox_delivered_for_others"] += 1
        frontier.progress.retired(name, journaled=bool(journal.get("seq")))
        state = json.loads(journal["engine"]) if journal.get("engine") else {}
        if state and _cut_back(journal, state, crawl=frontier.prefix, worker=name):
            frontier.counters["dead_workers_cut_back"] += 1
        used = int((state.get("stats") or {}).get("fetched", 0))
        released += budget.release(name, used)
        frontier.counters["workers_retired"] += 1
    frontier.counters["claims_taken_back"] += released
    return released


def _cut_back(journal: dict[str, str], state: dict[str, Any], *, crawl: str, worker: str) -> bool:
    """A dead worker's files cut back to its last commit (what its restart would do),
    if they are on this machine, nobody holds its run directory and its marker names
    this crawl and that worker: the journal's host and directory are Redis's word, and
    a directory of another crawl (or no crawl) is never cut."""
    if journal.get("host") != socket.gethostname() or not journal.get("dir"):
        return False
    run_dir = Path(journal["dir"])
    if not run_dir.is_dir() or not owned_by(run_dir, crawl=crawl, worker=worker):
        return False
    try:
        lock = RunLock(run_dir).acquire()
    except ConfigError:
        return False  # held: that worker is running after all (it is fenced: it stops)
    try:
        if not owned_by(run_dir, crawl=crawl, worker=worker):  # (read again, under the lock)
            return False
        cut_back_files(run_dir, state)
        return True
    except (ConfigError, OSError) as exc:  # (a file that does not hold its commit: left as it is)
        print(f"focuscrawl: worker files in {run_dir} not cut back: {exc}", file=sys.stderr)
        return False
    finally:
        with contextlib.suppress(OSError):
            lock.release()


def owned_by(run_dir: Path, *, crawl: str, worker: str) -> bool:
    """Whether ``run_dir``'s crawl.db marker names the shared crawl ``crawl`` and its
    worker ``worker`` (:func:`~focuscrawl.workers.worker.open_worker` writes it)."""
    try:
        marker = json.loads((run_dir / DB_NAME).read_bytes())
    except (OSError, ValueError):
        return False
    return (
        isinstance(marker, dict)
        and marker.get("store") == MARKER_STORE
        and marker.get("prefix") == crawl
        and marker.get("worker") == worker
    )


def cut_back_files(run_dir: Path, state: dict[str, Any]) -> None:
    """A worker's WARC, pages.jsonl and decisions.jsonl cut back to the lengths of the
    engine state ``state`` (its last commit), each checked to hold that commit first
    (ConfigError if one does not: left as it is)."""
    files = [(WARC_NAME, state.get("warc_offset"), True), (PAGES_NAME, state.get("pages_offset"), False),
             (DECISIONS_NAME, state.get("decisions_offset"), False)]  # fmt: skip
    for name, offset, warc in files:
        path = run_dir / name
        if offset is None or not path.is_file() or path.stat().st_size <= int(offset):
            continue
        verify_committed(path, int(offset), warc=warc)
        with open(path, "r+b") as fh:
            fh.truncate(int(offset))
            os.fsync(fh.fileno())
