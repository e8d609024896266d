"""A crawl shared by worker processes on any number of machines, through one Redis.

``focuscrawl crawl --frontier redis://HOST:PORT/DB --workers N --out DIR`` publishes
the crawl (its settings, seeds and page budget) in Redis and starts N local workers,
each with its own run directory ``DIR/workers/NN``; ``focuscrawl worker --frontier
redis://HOST:PORT/DB --out DIR2`` joins it from any machine. Every worker is a whole
crawler (:class:`~focuscrawl.engine.Crawler`: fetcher, parser, model, strategy, its
own WARC / pages.jsonl / decisions.jsonl written exactly once) over one shared
frontier, :class:`~focuscrawl.frontier.redis_worker.WorkerFrontier`: one owner per
host by partition leases, an outbox of frontier changes delivered exactly once.

What is shared, and how exact:

* **The page budget** (``max_pages``) is handed out in claims (a worker tops its
  claim up to its concurrency when it runs low; :class:`Coordination`); pages
  recorded never exceed it. A worker with nothing to do gives its unused claim back;
  one killed and never restarted takes its unused claim (at most its concurrency)
  with it, so the crawl may end that many pages short.
* **The end**: a worker stops when nothing is queued or in flight in any partition
  and no worker's batch is undelivered, or when the budget is all handed out and its
  own claim is used. A worker whose partitions are empty waits (and takes the
  partitions of a worker that left or died) while others still crawl.
* **Strategies**: every continuous strategy runs unchanged; each worker keeps its
  own strategy state (OPIC's history total, OTIE's re-crawl choice among its own
  partitions). Workers record as results come (the as-completed schedule); the
  ordered schedule is a single process's promise.
* **Layered strategies** (P0's topN per layer) run in global rounds with a barrier
  (:meth:`Coordination._idle_layered`): one worker picks the layer's topN across
  every partition, each partition's owner fetches its part, and when nothing of the
  layer is left anywhere one worker ends it with the workers' strategy states
  merged (``Strategy.merge_states``). Ties in the pick are broken by a hash of the
  URL, not by discovery order, so a layer holds the same pages for any number of
  workers (sums of floating-point cash in another order may still differ in the
  last bit: URLs tied to within rounding may then change places).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from focuscrawl.engine import DB_NAME, RUN_NAME, Crawler, normalize_seeds, write_run_json
from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.settings import SECTIONS, Settings, load_settings, read_run_json

__all__ = [
    "WORKERS_DIR",
    "Coordination",
    "Worker",
    "open_worker",
    "publish_crawl",
    "run_shared",
    "worker_dirs",
]

WORKERS_DIR = "workers"  # a shared crawl's run directory: one run directory per local worker
_IDLE_POLL = 0.2  # seconds between two looks of an idle worker at its own partitions
_FINISHED_EVERY = 10  # looks between two reads of whether the whole crawl is over
_UPKEEP_EVERY = 5.0  # seconds between two lease renewals at most (1/6 of the lease time)
LEASE_SECONDS = 30.0


def _meta_key(prefix: str) -> str:
    return f"{prefix}:{{{prefix}:m}}:meta"


def _db(url: str) -> Any:
    import redis

    from focuscrawl.frontier.redis_rows import connect

    try:
        db = connect(url)
        db.ping()
    except (redis.RedisError, ValueError) as exc:
        raise FrontierError(f"frontier {url}: {exc}") from None
    return db


def shared_crawls(url: str) -> list[str]:
    """The prefixes of the shared crawls published in the Redis at ``url``."""
    db = _db(url)
    found = []
    for key in db.scan_iter(match="fc:*:{fc:*:m}:meta", count=1000):
        if db.hexists(key, "run"):
            found.append(key.decode("utf-8").split(":{", 1)[0])
    return sorted(found)


def publish_crawl(url: str, prefix: str, run: Mapping[str, Any]) -> None:
    """The crawl's settings and seeds (``run``, as in run.json) and its page budget,
    where workers find them."""
    db = _db(url)
    meta = _meta_key(prefix)
    if db.hexists(meta, "run"):
        return  # (a resume: published already, the budget handed out as it was)
    # the budget first: a crawl is published (and found by workers) once its run is there
    db.set(f"{prefix}:{{{prefix}:m}}:budget", int(run["settings"]["crawl"].get("max_pages", 0)))
    db.hset(meta, "run", json.dumps(run, default=str))


def _read_published(url: str, prefix: str) -> dict[str, Any]:
    raw = _db(url).hget(_meta_key(prefix), "run")
    if raw is None:
        raise ConfigError(f"{url}: no shared crawl {prefix!r} (published crawls: "
                          f"{', '.join(shared_crawls(url)) or 'none'})")  # fmt: skip
    published: dict[str, Any] = json.loads(raw)
    return published


def check_shareable(settings: Settings, strategy: Any) -> None:
    """One line for what workers cannot run."""
    if settings.crawl.schedule == "ordered":
        raise ConfigError("--schedule ordered is a single process's promise; workers record "
                          "results as they come (as-completed)")  # fmt: skip


class Coordination:
    """A worker's part in the shared crawl: its page budget, and whether it goes on
    when it has nothing to do (:class:`~focuscrawl.engine.SharedCrawl`)."""

    def __init__(
        self,
        frontier: Any,
        settings: Settings,
        *,
        limited: bool,
        workers: int = 1,
        seeder: bool = False,
    ) -> None:
        self.frontier = frontier
        self.settings = settings
        self.limited = limited
        self.seeder = seeder  # this worker added the seeds (and so generates layer 0)
        self.crawler: Crawler | None = None  # (set once the worker's crawler is built)
        # a claim keeps the fetcher busy: topped up to its concurrency when half is used,
        # and no more than a share of the budget (the workers started together all get some)
        share = settings.crawl.max_pages // (2 * max(1, workers))
        self.target = max(1, min(settings.fetch.concurrency, share or settings.fetch.concurrency))
        # a partition given back stays free this long: its hosts' last requests are at
        # least the crawl's delay before the next owner's (a robots.txt Crawl-delay above
        # it is learnt again by that owner, with the robots.txt it fetches first)
        self.handover = settings.fetch.delay
        self._dry_until = 0.0  # the shared budget was found all handed out: not asked again before

    def budget(self, fetched: int, in_flight: int) -> int:
        """This worker's claims so far (claiming more when less than half of a claim is left)."""
        if not self.limited:
            return 0
        f = self.frontier
        left = f.claimed - fetched - in_flight
        now = time.monotonic()
        low = left < self.target // 2 + 1 and now >= self._dry_until
        if low and not f.claim(self.target - max(0, left)):
            self._dry_until = now + 1.0
        # (0 would mean no limit; the first claim is made before the crawl starts)
        return max(1, int(f.claimed))

    def make_scheduler(self, settings: Settings, strategy: Any, **kwargs: Any) -> Any:
        """Layered strategies: the shared layers' scheduler; the others as in one process."""
        from focuscrawl.scheduler import make_scheduler

        if strategy.layered:
            kwargs.pop("layer_listed", None)
            return shared_layers(settings, strategy=strategy, **kwargs)
        return make_scheduler(settings, strategy, **kwargs)

    async def idle(self, fetched: int) -> bool:
        if self.frontier.layered:
            return await self._idle_layered()
        f = self.frontier
        if self.limited and f.claimed > max(fetched, 1):  # unused: for a worker with work
            f.give_back(f.claimed - max(fetched, 1))
        looks = 0
        while True:
            budget = not self.limited or f.claimed > fetched
            if f.queued_here() and (budget or f.claim(self.target)):
                return True
            # whether the whole crawl is over reads every partition's counts: not at every
            # look (hundreds of idle workers at a crawl's end would keep Redis busy)
            if looks % _FINISHED_EVERY == 0 and await asyncio.to_thread(f.finished):
                return False
            looks += 1
            if self.limited and f.claimed <= fetched and f.budget_left() == 0:
                return False  # the budget is all handed out and this worker's share used
            await asyncio.sleep(_IDLE_POLL)

    async def _idle_layered(self) -> bool:
        """A layered crawl's rounds, as P0's generate(topN) / fetch / update with a
        barrier: a layer is generated by one worker across every partition; each
        partition's owner fetches its part; when no URL of the layer is left picked or in
        flight anywhere and every batch is delivered, one worker ends the layer with the
        workers' strategy states merged (``Strategy.merge_states``, from their journals)
        and the others follow (their own ``on_layer_end``, its decision not applied)."""
        f, crawler = self.frontier, self.crawler
        assert crawler is not None
        crawl = self.settings.crawl
        looks = 0
        while not crawler.stopped:
            state = f.round()
            layer = crawler.stats.layer
            if state.get("layer", 0) > layer:  # ended by the worker that led it: follow
                self._end_layer(layer, apply=False)
                continue
            if f.picked_here():
                return True
            if state.get("over"):
                return False
            if not state.get("picked"):
                # generated by the first worker that asks (layer 0: the one that added the
                # seeds, which are delivered by then)
                if (layer or self.seeder) and f.lead(f"pick:{layer}"):
                    selected = state.get("selected", 0)
                    want = crawl.top_n
                    if crawl.max_pages > 0:
                        want = min(want, crawl.max_pages - selected)
                    got = f.pick(want) if want > 0 else 0
                    f.set_round(picked=1, selected=selected + got, over=int(got == 0))
                    continue
            elif (
                looks % _FINISHED_EVERY == 0
                and not await asyncio.to_thread(f.layer_open)
                and f.lead(f"end:{layer}")
            ):
                merged = crawler.strategy.merge_states(f.workers_states(layer))
                crawler.strategy.load_state(merged)
                self._end_layer(layer, apply=True)
                await asyncio.to_thread(crawler.commit)  # the layer's end delivered first
                over = layer + 1 >= crawl.depth
                f.set_round(layer=layer + 1, picked=0, over=int(over))
                continue
            looks += 1
            await asyncio.sleep(_IDLE_POLL)
        return False

    def _end_layer(self, layer: int, *, apply: bool) -> None:
        crawler = self.crawler
        assert crawler is not None
        decision = crawler.strategy.on_layer_end(layer)
        if apply:
            crawler.recorder.log_event("layer-end", decision)
        crawler.stats.layer = layer + 1
        crawler.recorder.round = layer + 1


def shared_layers(settings: Settings, **kwargs: Any) -> Any:
    """The scheduler of a layered strategy's worker: it takes the URLs picked for the
    current layer in the partitions it holds (in flight since they were picked)."""
    from focuscrawl.scheduler import Scheduler

    class SharedLayers(Scheduler):
        _looked = -1.0

        def fill(self) -> None:
            if self._stop.is_set():
                return
            now = time.monotonic()
            if len(self) and now - self._looked < _IDLE_POLL:  # (a pipeline over its partitions)
                return
            self._looked = now
            frontier: Any = self.frontier
            if frontier.round().get("layer", 0) != self.stats.layer:
                return  # the layer was ended elsewhere: followed first (Coordination.idle)
            self.recorder.round = self.stats.layer
            self.take(frontier.picked())

    return SharedLayers(settings, **kwargs)


@dataclass
class Worker:
    """A worker built and ready: ``await worker.run()``, then :meth:`close`."""

    crawler: Crawler
    frontier: Any
    coordination: Coordination
    name: str

    async def run(self) -> Any:
        """The crawl of this worker to its end (that of the shared crawl, or of its budget)."""
        coordination, f = self.coordination, self.frontier
        if coordination.limited and not f.claimed and not f.claim(coordination.target):
            # the budget is all handed out (to workers still crawling): nothing to do here
            self._leave()
            return self.crawler.stats
        upkeep = asyncio.create_task(self._upkeep())
        try:
            async with self.crawler.fetcher:
                return await self.crawler.run()
        finally:
            upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await upkeep
            self._leave()

    async def _upkeep(self) -> None:
        """Leases renewed on their own clock (a thread of their own: the loop's default
        pool may be busy with name lookups), partitions taken or given back toward an
        even share on another; a worker that lost a lease stops at once, uncommitted
        (see WorkerFrontier)."""
        every = min(_UPKEEP_EVERY, self.frontier.lease_ms / 1000 / 6)
        renewals = asyncio.create_task(self._every(every, self.frontier.renew))
        try:
            await self._every(
                every, lambda: self.frontier.balance(delay=self.coordination.handover)
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
                    print(f"focuscrawl: worker {self.name}: {exc}", file=sys.stderr)
                    self.crawler.request_stop(now=True)
                    return
        finally:
            pool.shutdown(wait=False)

    def _leave(self) -> None:
        f = self.frontier
        with contextlib.suppress(FrontierError, OSError):
            if self.coordination.limited and not f.pending():
                f.give_back(f.claimed - max(self.crawler.stats.fetched, 0))
            f.leave(delay=self.coordination.handover)
        for key, value in f.counters.items():
            self.crawler.stats.counters[f"worker_{key}"] = value

    def close(self) -> None:
        self.crawler.close()


def open_worker(
    frontier_url: str,
    out_dir: Path,
    *,
    crawl: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
) -> Worker:
    """A worker of the shared crawl ``crawl`` (a key prefix; the only one published
    in that Redis if not given) writing into ``out_dir`` (resumed if it holds one)."""
    from focuscrawl.api import make_model, make_strategy
    from focuscrawl.fetch.factory import build_fetcher
    from focuscrawl.frontier.factory import MARKER_STORE
    from focuscrawl.frontier.redis_worker import WorkerFrontier
    from focuscrawl.output.lock import RunLock
    from focuscrawl.output.writers import prepare_run_dir
    from focuscrawl.strategies.filters import build_filters

    out_dir = Path(out_dir)
    marker_path = out_dir / DB_NAME
    marker: dict[str, Any] = {}
    if marker_path.exists():
        try:
            marker = json.loads(marker_path.read_bytes())
            if marker.get("store") != MARKER_STORE or "worker" not in marker:
                raise ValueError("not a worker's run directory")
        except (ValueError, AttributeError) as exc:
            raise ConfigError(
                f"{out_dir}: {DB_NAME} is not a worker's ({exc}); another --out"
            ) from None
        if crawl is not None and crawl != marker["prefix"]:
            raise ConfigError(f"{out_dir} is a worker of crawl {marker['prefix']}, not {crawl}")
        crawl = str(marker["prefix"])
    if crawl is None:
        crawls = shared_crawls(frontier_url)
        if len(crawls) != 1:
            raise ConfigError(f"{frontier_url}: {len(crawls)} shared crawls ({', '.join(crawls)}): "
                              "name one with --crawl")  # fmt: skip
        crawl = crawls[0]
    run = _read_published(frontier_url, crawl)
    saved = run["settings"]
    overrides: dict[str, Any] = {k: v for k, v in saved.items() if k in SECTIONS}
    overrides["crawl"] = {**overrides.get("crawl", {}), "frontier": "redis",
                          "frontier_url": frontier_url, "schedule": "as-completed"}  # fmt: skip
    if saved.get("filters"):
        overrides["filters"] = saved["filters"]
    settings = load_settings(None, overrides, environ={})
    settings = replace(
        settings, model=dict(saved.get("model") or {}), base_dir=Path(saved.get("base_dir", "."))
    )
    relevance = make_model(settings)
    strategy = make_strategy(settings, relevance)
    check_shareable(settings, strategy)
    filters = build_filters(settings.filters, settings.base_dir)
    counters: Counter[str] = Counter()
    fetcher = build_fetcher(settings, counters)
    prepare_run_dir(out_dir)
    lock = RunLock(out_dir).acquire()
    try:
        name = str(
            marker.get("worker") or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        )
        if not marker:
            tmp = marker_path.with_name(DB_NAME + ".tmp")
            tmp.write_text(json.dumps({"store": MARKER_STORE, "prefix": crawl, "worker": name}) + "\n",
                           encoding="utf-8")  # fmt: skip
            tmp.replace(marker_path)
        frontier = WorkerFrontier(frontier_url, prefix=crawl, worker=name,
                                  parents=strategy.needs_parents, lease_seconds=lease_seconds,
                                  expected=int(run.get("workers") or 1),
                                  layered=strategy.layered)  # fmt: skip
        try:
            resume = frontier.get_meta("engine") is not None
            first = bool(frontier._db.setnx(f"{crawl}:{{{crawl}:m}}:seeded", name))
            # a layered crawl's budget is kept by the worker that generates each layer
            limited = settings.crawl.max_pages > 0 and not strategy.layered
            coordination = Coordination(
                frontier, settings, limited=limited, workers=int(run.get("workers") or 1),
                seeder=first and not resume,
            )  # fmt: skip
            frontier.upkeep(delay=coordination.handover)  # its partitions, before anything is taken
            seeds = normalize_seeds(run["seeds"])
            write_run_json(out_dir, {
                "seeds": seeds, "strategy": strategy.name, "settings": settings.to_dict(),
                "worker": name, "crawl": crawl, "finished": False, "summary": {},
            })  # fmt: skip
            crawler = Crawler(
                settings, seeds, out_dir, strategy=strategy, fetcher=fetcher, frontier=frontier,
                model=relevance, filters=filters, resume=resume, lock=lock,
                shared=coordination, add_seeds=first and not resume,
            )  # fmt: skip
            coordination.crawler = crawler
        except BaseException:
            frontier.close()
            raise
    except BaseException:
        lock.release()
        raise
    crawler.stats.counters = counters
    return Worker(crawler, frontier, coordination, name)


def worker_dirs(run_dir: Path) -> list[Path]:
    """The run directories of a shared crawl's local workers (none: not a shared crawl)."""
    base = Path(run_dir) / WORKERS_DIR
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if (p / RUN_NAME).is_file())


def run_shared(
    out_dir: Path,
    workers: int,
    *,
    frontier_url: str,
    prefix: str,
    run: Mapping[str, Any],
    echo: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> dict[str, Any]:
    """Publish the crawl and run ``workers`` local worker processes to their end; returns
    the summary of all (also written to ``out_dir``'s run.json). SIGINT and SIGTERM are
    passed on to the workers (each stops cleanly, resumable)."""
    publish_crawl(frontier_url, prefix, run)
    dirs = [out_dir / WORKERS_DIR / f"{i:02d}" for i in range(workers)]
    command = [
        sys.executable,
        "-m",
        "focuscrawl",
        "worker",
        "--frontier",
        frontier_url,
        "--crawl",
        prefix,
    ]
    procs = [subprocess.Popen([*command, "--out", str(d), "--quiet"]) for d in dirs]

    def forward(signum: int, _frame: Any) -> None:
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.send_signal(signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        codes = [proc.wait() for proc in procs]
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    summary = merged_summary(worker_dirs(out_dir))
    failed = [str(d) for d, code in zip(dirs, codes, strict=True) if code not in (0,)]
    done = dict(run)
    done.update({"finished": not failed, "summary": summary, "worker_exit_codes": codes})
    write_run_json(out_dir, done)
    if failed:
        echo(f"focuscrawl: {len(failed)} of {workers} workers did not finish ({', '.join(failed)}); "
             f"continue with: focuscrawl crawl --out {out_dir} --resume")  # fmt: skip
    return summary


_SUMMED = ("fetched", "pages", "judged", "relevant", "errors")


def merged_summary(dirs: Sequence[Path]) -> dict[str, Any]:
    """The workers' run.json summaries as one: counts and counters summed, the
    harvest rate recomputed, the elapsed time the longest."""
    out: dict[str, Any] = {"workers": len(dirs)}
    counters: Counter[str] = Counter()
    elapsed = 0.0
    for d in dirs:
        with contextlib.suppress(ConfigError, OSError, ValueError):
            summary = read_run_json(d / RUN_NAME).get("summary") or {}
            for key in _SUMMED:
                out[key] = out.get(key, 0) + int(summary.get(key) or 0)
            counters.update({k: int(v) for k, v in (summary.get("counters") or {}).items()
                             if isinstance(v, int | float)})  # fmt: skip
            elapsed = max(elapsed, float(summary.get("elapsed") or 0.0))
    out["elapsed"] = elapsed
    judged = out.get("judged", 0)
    out["harvest_rate"] = out.get("relevant", 0) / judged if judged else 0.0
    out["pages_per_second"] = out.get("fetched", 0) / elapsed if elapsed else 0.0
    out["counters"] = dict(sorted(counters.items()))
    return out


@dataclass
class SharedRun:
    """A shared crawl's run directory, prepared (and locked) by :func:`prepare_shared`."""

    frontier_url: str
    prefix: str
    workers: int
    run: dict[str, Any]
    lock: Any


def is_shared(run_dir: Path) -> bool:
    """Whether ``run_dir`` is a shared crawl's (its run.json names its workers)."""
    with contextlib.suppress(ConfigError):
        return "workers" in read_run_json(Path(run_dir) / RUN_NAME)
    return False


def prepare_shared(
    out_dir: Path,
    seeds: Sequence[str],
    *,
    workers: int | None,
    config: Path | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    model: str | Path | Mapping[str, Any] | None = None,
    resume: bool = False,
) -> SharedRun:
    """A shared crawl's run directory: its settings checked (model, strategy, filters
    built once here, so that a mistake is one line before any worker starts), its
    run.json and crawl.db marker written, the directory locked for the coordinator."""
    from focuscrawl.api import make_model, make_strategy, model_table
    from focuscrawl.frontier.factory import redis_prefix
    from focuscrawl.output.lock import RunLock
    from focuscrawl.output.writers import prepare_run_dir
    from focuscrawl.strategies.filters import build_filters

    out_dir = Path(out_dir)
    if resume:
        run = read_run_json(out_dir / RUN_NAME)
        if "workers" not in run:
            raise ConfigError(f"{out_dir} is a one-process crawl: resume it without --workers")
        url, n = str(run["frontier"]), int(workers or run["workers"])
    else:
        if (out_dir / DB_NAME).exists():
            raise ConfigError(
                f"{out_dir} holds a crawl already: resume it (--resume) or choose another --out"
            )
        settings = load_settings(config, overrides)
        url = settings.crawl.frontier_url
        if settings.crawl.frontier != "redis" or not url:
            raise ConfigError("--workers needs a shared frontier: --frontier redis://HOST:PORT/DB")
        n = int(workers or 0)
        if n < 1:
            raise ConfigError(f"--workers {workers}: at least 1")
        if not seeds and config is not None:
            from focuscrawl.settings import read_toml

            seeds = [str(s) for s in read_toml(config).get("seeds", [])]
        settings = replace(settings, model=model_table(model, settings.model))
        relevance = make_model(settings)
        strategy = make_strategy(settings, relevance)
        if strategy.needs_model and relevance is None:
            raise ConfigError(
                f"strategy {strategy.name!r} needs a relevance model ([model] in the config)"
            )
        check_shareable(settings, strategy)
        build_filters(settings.filters, settings.base_dir)
        _db(url)  # the server answers, before anything is written
        run = {"seeds": normalize_seeds(seeds), "strategy": strategy.name,
               "settings": settings.to_dict(), "workers": n, "frontier": url,
               "finished": False, "summary": {}}  # fmt: skip
    prepare_run_dir(out_dir)
    lock = RunLock(out_dir).acquire()
    try:
        prefix = redis_prefix(out_dir / DB_NAME)
        run["crawl"] = prefix
        run["workers"] = n
        write_run_json(out_dir, run)
    except BaseException:
        lock.release()
        raise
    return SharedRun(url, prefix, n, run, lock)
