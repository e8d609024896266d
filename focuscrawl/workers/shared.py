"""The shared crawl as a whole: published in Redis (settings, seeds, page budget),
its run directory prepared and locked, its local workers started and waited for,
and the run directory read as one run (see :mod:`focuscrawl.workers`)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from focuscrawl.crawler.parts import build_parts, model_table, saved_settings
from focuscrawl.crawler.run import DB_NAME, RUN_NAME, check_model, normalize_seeds, write_run_json
from focuscrawl.exceptions import ConfigError, FocuscrawlError
from focuscrawl.frontier.redis.connection import Connection
from focuscrawl.frontier.redis.decode import decoded_json
from focuscrawl.frontier.redis.keys import PUBLISHED, Keys, crawl_of
from focuscrawl.output.layout import WORKERS_DIR
from focuscrawl.segments import check_shared_resume
from focuscrawl.settings import Settings, config_seeds, load_settings, read_run_json
from focuscrawl.workers.resumed import (
    RUN_FIELD,
    change_budget,
    check_still_published,
    state_gone_error,
)
from focuscrawl.workers.trust import model_digest

MAX_WORKERS = 256  # local worker processes of one `crawl --workers` (more join by `worker`)
MAX_BUDGET = (1 << 53) - 1  # a page budget the claims' Lua numbers (doubles) hold exactly

# The shared crawl's protocol: what workers write in Redis and how (keys, scripts, the
# journal). A worker of another protocol is refused (one line): bumped with any change a
# worker of the previous commit would misread. The run is published under "crawl", not
# the "run" of protocol 1, so that workers from before the check find no crawl to join.
PROTOCOL = 2
_RUN_FIELD = RUN_FIELD


def _meta_key(prefix: str) -> str:
    return Keys(prefix).meta + "meta"


def connect_checked(url: str) -> Any:
    """A connection to the Redis at ``url`` that answered (one line if it did not)."""
    db = Connection(url)
    db.ping()
    return db


def shared_crawls(url: str) -> list[str]:
    """The prefixes of the shared crawls published in the Redis at ``url``."""
    db = connect_checked(url)
    found = []
    for key in db.scan_iter(match=PUBLISHED, count=1000):
        if db.hexists(key, "protocol") or db.hexists(key, "run"):  # ("run": protocol 1)
            found.append(crawl_of(key))
    return sorted(found)


class NoCrawlToJoin(ConfigError):
    """No shared crawl for a worker to join (none published, or none being crawled)."""


def running_crawls(url: str, crawls: Sequence[str]) -> dict[str, int]:
    """Those of ``crawls`` being crawled now, with their workers alive (a heartbeat not
    expired on the server's clock). One that ended, or whose workers all stopped (to be
    resumed by its coordinator), is not."""
    db = connect_checked(url)
    seconds, micros = db.time()
    now = int(seconds) * 1000 + int(micros) // 1000
    pipe = db.pipeline(transaction=False)
    for prefix in crawls:
        pipe.zcount(Keys(prefix).meta + "alive", now + 1, "+inf")
    return {prefix: int(n) for prefix, n in zip(crawls, pipe.execute(), strict=True) if int(n)}


def chosen_crawl(
    url: str, crawl: str | None, *, running: bool = False, skip: Collection[str] = ()
) -> str:
    """The shared crawl a worker joins: ``crawl`` if named; else the only one published
    in the Redis at ``url``, or of several the only one being crawled. ``running``: a
    worker waiting for crawls to join (as compose's): one being crawled, whatever else
    is published, that of fewest workers if several, none of ``skip`` (those it joined
    already). :class:`NoCrawlToJoin` if there is none, one line if there are several."""
    if crawl is not None:
        return crawl
    published = shared_crawls(url)
    crawls = [c for c in published if c not in skip]
    if not running and len(crawls) == 1:
        return crawls[0]
    live = running_crawls(url, crawls)
    if len(live) == 1 or (running and live):
        return min(live, key=lambda c: (live[c], c))
    if not live and (running or not crawls):  # ('0 shared crawls (): name one with --crawl')
        what = (f"no shared crawl is being crawled there ({len(published)} published: ended, "
                "or stopped)" if published else "no shared crawl is published there")  # fmt: skip
        raise NoCrawlToJoin(
            f"{url}: {what} (one starts with focuscrawl crawl --frontier URL --workers N ...)"
        )
    among = f", {len(live)} of them being crawled" if live else ", none being crawled"
    raise ConfigError(f"{url}: {len(crawls)} shared crawls ({', '.join(crawls)}){among}: "
                      "name one with --crawl")  # fmt: skip


def publish_crawl(
    url: str, prefix: str, run: Mapping[str, Any], *, out_dir: Path | None = None
) -> None:
    """The crawl's settings and seeds (``run``, as in run.json) and its page budget,
    where workers find them. ``out_dir``: the coordinator's run directory, whose
    workers' directories say whether a crawl not found in Redis ran already (then
    one line: its state is gone, see :func:`~focuscrawl.workers.resumed.check_still_published`)."""
    db = connect_checked(url)
    meta = _meta_key(prefix)
    published = (check_still_published(db, url, prefix, out_dir, meta) if out_dir is not None
                 else db.hexists(meta, _RUN_FIELD))  # fmt: skip
    if published:
        return  # (a resume: published already, the budget handed out as it was)
    if db.hexists(meta, "run"):
        return
    # the budget first: a crawl is published (and found by workers) once its run is there
    db.set(Keys(prefix).meta + "budget", int(run["settings"]["crawl"].get("max_pages", 0)))
    db.hset(meta, mapping={"protocol": PROTOCOL, _RUN_FIELD: json.dumps(run, default=str)})


def read_published(url: str, prefix: str, *, ran: Path | None = None) -> dict[str, Any]:
    """The run of the shared crawl ``prefix``, if it speaks this worker's protocol.
    ``ran``: the run directory of a worker of it, resumed (the crawl not found: its
    state is gone, one line that says so rather than that no such crawl exists)."""
    protocol, raw, old = connect_checked(url).hmget(_meta_key(prefix), "protocol", _RUN_FIELD, "run")
    if protocol is None and raw is None and old is None and ran is not None:
        raise state_gone_error(url, prefix, ran)
    if protocol is None and raw is None and old is None:
        raise ConfigError(f"{url}: no shared crawl {prefix!r} (published crawls: "
                          f"{', '.join(shared_crawls(url)) or 'none'})")  # fmt: skip
    theirs = (protocol or b"1").decode("utf-8", "replace")
    if theirs != str(PROTOCOL) or raw is None:
        raise ConfigError(f"shared crawl {prefix} speaks protocol {theirs[:20]!r}, this worker "
                          f"{PROTOCOL}: join it with the focuscrawl version that published it")  # fmt: skip
    return decoded_json(f"{_meta_key(prefix)} (field {_RUN_FIELD})", raw)


def checked_budget(pages: int) -> int:
    """A shared crawl's page budget, else one line (Redis's claims hold it exactly)."""
    if not 0 <= pages <= MAX_BUDGET:
        raise ConfigError(f"--max-pages {pages}: a shared crawl's budget is from 0 (no limit) "
                          f"to {MAX_BUDGET}")  # fmt: skip
    return pages


def check_shareable(settings: Settings, strategy: Any) -> None:
    """One line for what workers cannot run."""
    checked_budget(settings.crawl.max_pages)
    if settings.crawl.schedule == "ordered":
        raise ConfigError("--schedule ordered is a single process's promise; workers record "
                          "results as they come (as-completed)")  # fmt: skip


def joining_dir(runs: Path, url: str, crawl: str | None, name: str) -> Path:
    """``focuscrawl worker --runs RUNS``'s run directory: ``RUNS/NAME/workers/name`` of the
    crawl ``crawl`` (the only one published if None), where the coordinator's own workers
    and ``focuscrawl serve RUNS`` (counts, search, export) find it."""
    crawl = chosen_crawl(url, crawl)
    run_name = read_published(url, crawl).get("run_name")
    if not isinstance(run_name, str) or not run_name or "/" in run_name:
        raise ConfigError(f"shared crawl {crawl} names no run directory (published by an "
                          "older focuscrawl): give this worker its own --out")  # fmt: skip
    return Path(runs) / run_name / WORKERS_DIR / name


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
    publish_crawl(frontier_url, prefix, run, out_dir=out_dir)
    digest = model_digest(json.loads(json.dumps(run["settings"], default=str)))
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
        *(["--model-digest", digest] if digest else []),  # (its model: the crawl's own files)
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
    newest = -1
    for d in dirs:
        with contextlib.suppress(ConfigError, OSError, ValueError):
            summary = read_run_json(d / RUN_NAME).get("summary") or {}
            if "queued" in summary and (d / RUN_NAME).stat().st_mtime_ns > newest:
                # the shared queue as the last worker to write saw it
                newest, out["queued"] = (d / RUN_NAME).stat().st_mtime_ns, int(summary["queued"] or 0)
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

    @property
    def join_args(self) -> str:
        """What a worker joining from elsewhere adds to its command line: the digest of
        the crawl's model (:mod:`focuscrawl.workers.trust`), if it has one."""
        digest = model_digest(json.loads(json.dumps(self.run["settings"], default=str)))
        return f" --model-digest {digest}" if digest else ""


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
    from focuscrawl.frontier.factory import redis_prefix
    from focuscrawl.output.lock import RunLock
    from focuscrawl.output.writers import prepare_run_dir

    out_dir = Path(out_dir)
    asked: int | None = None  # a new page budget for a resumed crawl
    if resume:
        run = read_run_json(out_dir / RUN_NAME)
        if "workers" not in run:
            raise ConfigError(f"{out_dir} is a one-process crawl: resume it without --workers")
        settings = saved_settings(run["settings"], overrides, config)
        check_shared_resume(run, replace(settings, model=model_table(model, settings.model)),
                            where=str(out_dir))  # fmt: skip
        url = str(run["frontier"])
        n = int(run["workers"] if workers is None else workers)
        asked = ((overrides or {}).get("crawl") or {}).get("max_pages")
        if asked is not None:
            asked = checked_budget(int(asked))
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
        if not seeds and config is not None:
            seeds = config_seeds(config)
        settings = replace(settings, model=model_table(model, settings.model))
        parts = build_parts(settings)
        strategy = parts.strategy
        check_model(strategy, parts.model)
        check_shareable(settings, strategy)
        connect_checked(url)  # the server answers, before anything is written
        run = {"seeds": normalize_seeds(seeds), "strategy": strategy.name,
               "settings": settings.to_dict(), "workers": n, "frontier": url,
               "finished": False, "summary": {}}  # fmt: skip
    if not 1 <= n <= MAX_WORKERS:
        raise ConfigError(f"--workers {n}: from 1 to {MAX_WORKERS} local workers (more join "
                          "from other shells or machines with `focuscrawl worker`)")  # fmt: skip
    made_dir = prepare_run_dir(out_dir)
    lock = RunLock(out_dir, made_dir=made_dir).acquire()
    try:
        if not resume and (out_dir / DB_NAME).exists():  # (a crawl that started in the meantime)
            raise ConfigError(
                f"{out_dir} holds a crawl already: resume it (--resume) or choose another --out"
            )
        prefix = redis_prefix(out_dir / DB_NAME)
        run["crawl"] = prefix
        run["workers"] = n
        run["run_name"] = out_dir.name  # where `focuscrawl worker --runs` puts its directory
        if resume:
            change_budget(connect_checked(url), prefix, run, asked)
        write_run_json(out_dir, run)
    except BaseException as exc:
        if not resume and isinstance(exc, FocuscrawlError):
            lock.take_back()  # nothing recorded: the next attempt is a new crawl again
        lock.release()
        raise
    return SharedRun(url, prefix, n, run, lock)
