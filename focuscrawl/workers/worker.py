"""One worker process of a shared crawl: built from the crawl published in Redis
(:func:`open_worker`), run with its lease upkeep (:class:`Worker`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import secrets
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from focuscrawl.crawler.engine import Crawler
from focuscrawl.crawler.parts import build_parts, saved_settings
from focuscrawl.crawler.run import DB_NAME, normalize_seeds, write_run_json
from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.fetch.factory import build_fetcher
from focuscrawl.frontier.factory import MARKER_STORE, write_marker
from focuscrawl.output.lock import RunLock
from focuscrawl.output.writers import prepare_run_dir
from focuscrawl.workers.claims import LeaseLost
from focuscrawl.workers.coordination import Coordination
from focuscrawl.workers.frontier import WorkerFrontier
from focuscrawl.workers.handover import (
    HandoverFetcher,
    LeasedTransport,
    cut_back_files,
    describe,
    retire_dead,
)
from focuscrawl.workers.resumed import RUN_FIELD, state_gone_error
from focuscrawl.workers.shared import check_shareable, chosen_crawl, read_published
from focuscrawl.workers.trust import check_model_source

_UPKEEP_EVERY = 5.0  # seconds between two lease renewals at most (1/6 of the lease time)
LEASE_SECONDS = 30.0
_BALANCE_EVERY = 1.0  # seconds between two looks at the partitions' even share at most
_CLAIMS_POLL = 0.2  # seconds between two looks for claims coming back
_RETIRE_EVERY = 10  # looks between two looks for dead workers to retire


@dataclass
class Worker:
    """A worker built and ready: ``await worker.run()``, then :meth:`close`."""

    crawler: Crawler
    frontier: Any
    coordination: Coordination
    name: str
    more: bool = False  # its run ended waiting for claims that came back: open it again
    # what stopped the lease upkeep (a lease lost, Redis or the crawl in it gone): said once,
    # by run(), whatever the crawl's own calls meet next
    failure: FrontierError | None = None

    async def run(self) -> Any:
        """The crawl of this worker to its end (that of the shared crawl, or of its budget).

        When its claim is used and the budget all handed out while another worker holds
        a claim it has not settled, it waits, leases held, for that claim to come back if
        its holder dies (:func:`~focuscrawl.workers.handover.retire_dead`): :attr:`more`
        then says to open this worker again (as its own resume, its partitions given
        back to itself) and go on."""
        coordination, f = self.coordination, self.frontier
        claims = f.budget
        limited = coordination.limited
        upkeep = asyncio.create_task(self._upkeep())
        try:
            if limited and not claims.claimed and not claims.claim(coordination.target):
                # the budget is all handed out (to workers still crawling)
                self.more = await self._claims_to_come()
                if self.failure is not None:
                    raise self.failure
                return self.crawler.stats
            try:
                async with self.crawler.fetcher:
                    stats = await self.crawler.run()
            except FrontierError as exc:
                if isinstance(exc, LeaseLost):
                    self._cut_back()
                # what went wrong underneath: the upkeep's failure, or the crawl's state gone
                # (a script meeting an emptied partition says only that a key is missing)
                why = self.failure or self._crawl_gone()
                if why is None or why is exc:
                    raise
                raise why from exc
            if self.failure is not None:
                raise self.failure
            if limited and not self.crawler.stopped and claims.claimed <= stats.fetched:
                self.more = await self._claims_to_come()
            return stats
        finally:
            upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await upkeep
            self._leave()

    async def _claims_to_come(self) -> bool:
        """Whether budget came back for this worker (a dead worker's claim, retired),
        waiting while another worker holds a claim it has not settled."""
        f, claims = self.frontier, self.frontier.budget
        claims.settle(self.crawler.stats.fetched)  # (all committed: others wait for none here)
        looks = 0
        while not self.crawler.stopped:
            if looks % _RETIRE_EVERY == 0:
                await asyncio.to_thread(retire_dead, f)
                if await asyncio.to_thread(f.progress.finished):
                    return False  # nothing left to fetch anywhere
            if claims.claim(self.coordination.target):
                return True
            if not claims.holding():
                return False
            looks += 1
            await asyncio.sleep(_CLAIMS_POLL)
        return False

    async def _upkeep(self) -> None:
        """Leases renewed on their own clock (a thread of their own: the loop's default
        pool may be busy with name lookups), partitions taken or given back toward an
        even share on another; a worker that lost a lease stops at once, uncommitted
        (see WorkerFrontier)."""
        f = self.frontier
        every = min(_UPKEEP_EVERY, f.lease_ms / 1000 / 6)
        renewals = asyncio.create_task(self._every(every, f.renew))
        try:  # (the workers alive read at each balance: one that joins gets work soon)
            await self._every(
                min(every, _BALANCE_EVERY),
                lambda: f.balance(f.budget.alive(f.lease_ms), delay=self.coordination.handover),
            )
        finally:
            renewals.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewals

    async def _every(self, seconds: float, work: Callable[[], Any]) -> None:
        loop = asyncio.get_running_loop()
        pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="focuscrawl-leases")
        try:
            while True:
                await asyncio.sleep(seconds)
                try:
                    await loop.run_in_executor(pool, work)
                except Exception as exc:  # a lease lost, Redis gone: this worker stops
                    self.failure = (exc if isinstance(exc, FrontierError)
                                    else FrontierError(f"worker {self.name}: {exc}"))  # fmt: skip
                    self.crawler.request_stop(now=True)
                    return
        finally:
            pool.shutdown(wait=False)

    def _cut_back(self) -> None:
        """Fenced (a stall past its leases, or retired): what it recorded since its last
        commit is cut from its files now, as its restart would (another worker fetches
        those URLs again); the outputs are closed first."""
        rec = self.crawler.recorder
        for output in rec.outputs:
            with contextlib.suppress(OSError, ValueError):
                output.close()
        state = json.loads(self.frontier.outbox.engine or "{}")
        try:
            cut_back_files(self.crawler.out_dir, state)
        except (ConfigError, OSError) as exc:
            print(f"focuscrawl: worker {self.name}: files not cut back: {exc}", file=sys.stderr)
        else:
            self.crawler.stats.counters["cut_back_on_lease_lost"] += 1

    def _crawl_gone(self) -> FrontierError | None:
        """The one line for a crawl no longer published in Redis (restarted without its
        data, or flushed), if it is not (None: it is, or Redis does not answer)."""
        f = self.frontier
        with contextlib.suppress(FrontierError):
            if not f.progress.published(RUN_FIELD):
                return state_gone_error(f.url, f.prefix, self.crawler.out_dir)
        return None

    def _leave(self) -> None:
        f = self.frontier
        with contextlib.suppress(FrontierError, OSError):
            if self.coordination.limited and not f.pending() and not self.more:
                f.budget.settle(max(self.crawler.stats.fetched, 0))
            # (opened again: still alive, its hosts' next times handed over to itself)
            f.leave(delay=self.coordination.handover, again=self.more)
        for key, value in f.counters.items():
            self.crawler.stats.counters[f"worker_{key}"] = value

    def close(self) -> None:
        self.crawler.close()


def _worker_marker(out_dir: Path) -> dict[str, Any]:
    """The worker's marker in ``out_dir`` (its crawl DB's place), {} if there is none."""
    marker_path = out_dir / DB_NAME
    if not marker_path.exists():
        return {}
    try:
        marker = json.loads(marker_path.read_bytes())
        if marker.get("store") != MARKER_STORE or "worker" not in marker:
            raise ValueError("not a worker's run directory")
    except (ValueError, AttributeError) as exc:
        raise ConfigError(f"{out_dir}: {DB_NAME} is not a worker's ({exc}); another --out") from None
    return dict(marker)


def open_worker(
    frontier_url: str,
    out_dir: Path,
    *,
    crawl: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
    model_digest: str | None = None,
) -> Worker:
    """A worker of the shared crawl ``crawl`` (a key prefix; the only one published
    in that Redis if not given) writing into ``out_dir`` (resumed if it holds one);
    its model only if it reads no file or matches ``model_digest``
    (:mod:`focuscrawl.workers.trust`)."""
    out_dir = Path(out_dir)
    marker_path = out_dir / DB_NAME
    marker = _worker_marker(out_dir)
    if marker:
        if crawl is not None and crawl != marker["prefix"]:
            raise ConfigError(f"{out_dir} is a worker of crawl {marker['prefix']}, not {crawl}")
        crawl = str(marker["prefix"])
    crawl = chosen_crawl(frontier_url, crawl)
    run = read_published(frontier_url, crawl, ran=out_dir if marker else None)
    saved = run["settings"]
    check_model_source(saved, model_digest)  # (Redis's word chooses no file to load)
    # the published settings, not this machine's environment; paths (filters, a model's
    # files) as the crawl's own machine gave them
    shared = {"frontier": "redis", "frontier_url": frontier_url, "schedule": "as-completed"}
    settings = saved_settings(saved, {"crawl": shared}, environ={})
    settings = replace(settings, base_dir=Path(saved.get("base_dir", ".")))
    parts = build_parts(settings)
    strategy, counters = parts.strategy, parts.counters
    check_shareable(settings, strategy)
    prepare_run_dir(out_dir)
    lock = RunLock(out_dir).acquire()
    try:
        if _worker_marker(out_dir) != marker:
            # another worker took the directory between the look above and the lock (and
            # may have ended since): its files are not this worker's to start afresh over
            raise ConfigError(
                f"{out_dir}: another worker started in it meanwhile; run again to go on as that worker"
            )
        name = str(
            marker.get("worker") or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        )
        if not marker:
            write_marker(marker_path, crawl, worker=name)
        frontier = WorkerFrontier(frontier_url, prefix=crawl, worker=name,
                                  parents=strategy.needs_parents, lease_seconds=lease_seconds,
                                  expected=int(run.get("workers") or 1),
                                  layered=strategy.layered)  # fmt: skip
        try:
            describe(frontier, out_dir)
            leases = frontier.leases
            fetcher: Any = build_fetcher(
                settings, counters, guard=lambda t: LeasedTransport(t, leases)
            )
            fetcher = HandoverFetcher(fetcher, frontier.handover)
            resume = frontier.get_meta("engine") is not None
            # the seeder restarted before its first commit adds them again
            first = frontier.progress.seeder() == name
            # and so does a worker resumed that is named seeder only now: the one before died
            # before its first commit (retired: the key deleted), so no journal holds them (a
            # seeder's own journal does: its name stays); the crawl ended at 0 URLs, exit 0
            adds = first and (not resume or frontier.progress.named_now)
            # a layered crawl's budget is kept by the worker that generates each layer
            limited = settings.crawl.max_pages > 0 and not strategy.layered
            coordination = Coordination(
                frontier, settings, limited=limited, workers=int(run.get("workers") or 1),
                seeder=adds,
            )  # fmt: skip
            frontier.upkeep(delay=coordination.handover)  # its partitions, before anything is taken
            seeds = normalize_seeds(run["seeds"])
            write_run_json(out_dir, {
                "seeds": seeds, "strategy": strategy.name, "settings": settings.to_dict(),
                "worker": name, "crawl": crawl, "finished": False, "summary": {},
            })  # fmt: skip
            crawler = Crawler(
                settings, seeds, out_dir, strategy=strategy, fetcher=fetcher, frontier=frontier,
                model=parts.model, filters=parts.filters, resume=resume, lock=lock,
                shared=coordination, add_seeds=adds,
            )  # fmt: skip
            coordination.crawler = crawler
            frontier.progress.seeding = first  # (resumed: its journal's seeds delivered)
        except BaseException:
            frontier.close()
            raise
    except BaseException:
        lock.release()
        raise
    crawler.stats.counters = counters
    return Worker(crawler, frontier, coordination, name)
