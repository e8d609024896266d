"""A crawl shared by worker processes on any number of machines, through one Redis.

``focuscrawl crawl --frontier redis://HOST:PORT/DB --workers N --out DIR`` publishes
the crawl (its settings, seeds and page budget) in Redis and starts N local workers,
each with its own run directory ``DIR/workers/NN``; ``focuscrawl worker --frontier
redis://HOST:PORT/DB --out DIR2`` joins it from any machine. Every worker is a whole
crawler (:class:`~focuscrawl.crawler.engine.Crawler`: fetcher, parser, model, strategy, its
own WARC / pages.jsonl / decisions.jsonl written exactly once) over one shared
frontier, :class:`~focuscrawl.workers.frontier.WorkerFrontier`: one owner per
host by partition leases, an outbox of frontier changes delivered exactly once.

What is shared, and how exact:

* **The page budget** (``max_pages``) is handed out in claims (a worker tops its
  claim up to its concurrency when it runs low; :class:`Coordination`); pages
  recorded never exceed it. A worker with nothing to do gives its unused claim back.
  One killed and never restarted is retired by another once its heartbeat has
  expired (:func:`~focuscrawl.workers.handover.retire_dead`): fenced, its journaled
  batch delivered, its files cut back to its last commit when they are on the
  retiring worker's machine, its claim beyond that commit's pages back in the budget.
* **The end**: a worker stops when nothing is queued or in flight in any partition
  and no worker's batch is undelivered, or when the budget is all handed out, its
  own claim is used and no other worker holds a claim it has not settled (a worker
  that dies with one is retired, and its claim comes back). A worker whose
  partitions are empty waits (and takes the partitions of a worker that left or
  died) while others still crawl.
* **Politeness across a handover**: each host's next allowed time (the crawl's
  delay, a Crawl-delay, a Retry-After) goes with its partition to the next owner,
  whose :class:`~focuscrawl.workers.handover.HandoverFetcher` waits for it.
* **Strategies**: every continuous strategy runs unchanged; each worker keeps its
  own strategy state (OPIC's history total, OTIE's re-crawl choice among its own
  partitions). Workers record as results come (the as-completed schedule); the
  ordered schedule is a single process's promise.
* **Layered strategies** (P0's topN per layer) run in global rounds with a barrier
  (:meth:`SharedRounds.between`): one worker picks the layer's topN across
  every partition, each partition's owner fetches its part, and when nothing of the
  layer is left anywhere one worker ends it with the workers' strategy states
  merged (``Strategy.merge_states``). Ties in the pick are broken by a hash of the
  URL, not by discovery order, so a layer holds the same pages for any number of
  workers (sums of floating-point cash in another order may still differ in the
  last bit: URLs tied to within rounding may then change places).
"""

from __future__ import annotations

from focuscrawl.output.layout import WORKERS_DIR
from focuscrawl.workers.coordination import Coordination
from focuscrawl.workers.shared import (
    SharedRun,
    is_shared,
    prepare_shared,
    publish_crawl,
    run_shared,
    worker_dirs,
)
from focuscrawl.workers.worker import Worker, open_worker

__all__ = [
    "WORKERS_DIR",
    "Coordination",
    "SharedRun",
    "Worker",
    "is_shared",
    "open_worker",
    "prepare_shared",
    "publish_crawl",
    "run_shared",
    "worker_dirs",
]
