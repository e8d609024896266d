"""Building a crawl from settings: the one place that wires the parts together."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from focuscrawl.crawler.engine import Crawler
from focuscrawl.crawler.parts import build_parts, model_table, saved_settings
from focuscrawl.crawler.run import (
    DB_NAME,
    RUN_NAME,
    WARC_NAME,
    ResumeState,
    normalize_seeds,
    write_run_json,
)
from focuscrawl.crawler.scheduler import retry_unreached
from focuscrawl.exceptions import ConfigError, FocuscrawlError
from focuscrawl.fetch.factory import build_fetcher
from focuscrawl.fetch.freshness import Validators
from focuscrawl.frontier.base import RunJournal
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.output.lock import RunLock
from focuscrawl.output.warc_scan import Answered, answers
from focuscrawl.output.writers import prepare_run_dir
from focuscrawl.segments import resume_segments
from focuscrawl.settings import config_seeds, load_settings, read_run_json
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.oracle import with_archive_graph

# what to do about a run directory that holds a crawl, in the CLI's words and the API's
_ALREADY = "resume it (--resume; resume=True in Python) or choose another directory (--out; out)"


def committed_answers(journal: RunJournal, out_dir: Path) -> Iterator[Answered]:
    """The answers a crawl's WARC holds up to its committed length (what a resume keeps)."""
    meta = journal.get_meta("engine")
    path = out_dir / WARC_NAME
    if meta is None or not path.exists():
        return iter(())
    return answers(path, ResumeState.from_json(meta).warc_offset)


def open_crawl(
    out_dir: Path,
    seeds: Sequence[str] = (),
    *,
    config: Path | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    model: str | Path | Mapping[str, Any] | None = None,
    resume: bool = False,
    archives: Sequence[Path | str] = (),
    force: bool = False,
) -> Crawler:
    """Everything a crawl needs, built from a config file, CLI overrides and defaults.

    On ``resume`` the settings and seeds saved in ``run.json`` are used, with the
    new ``overrides`` on top (e.g. a larger ``max_pages``); a change of strategy, model,
    schedule or live/simulated is refused unless ``force`` (see :mod:`focuscrawl.segments`).
    With ``archives`` the crawl is a simulation: pages come from those WARC files, no
    network, no sleeping.
    """
    out_dir = Path(out_dir)
    if resume and not (out_dir / RUN_NAME).exists():
        if (out_dir / DB_NAME).exists():
            raise ConfigError(f"{out_dir}: {RUN_NAME} is missing, though {DB_NAME} holds a crawl; restore "
                              f"{RUN_NAME} (the crawl's settings and seeds) to resume it")  # fmt: skip
        raise ConfigError(f"{out_dir}: nothing to resume (no {RUN_NAME})")
    overrides = dict(overrides or {})
    raw_seeds = list(seeds)
    if resume:
        run_path = out_dir / RUN_NAME
        # run.json is written before crawl.db: without it nothing was started; without
        # crawl.db nothing was committed, and the crawl starts afresh from run.json
        if not run_path.exists():
            raise ConfigError(f"{out_dir}: nothing to resume (no {RUN_NAME})")
        run = read_run_json(run_path)
        saved = run["settings"]
        raw_seeds = raw_seeds or list(run["seeds"])
        settings = saved_settings(saved, overrides, config)
    else:
        if (out_dir / DB_NAME).exists():
            raise ConfigError(f"{out_dir} holds a crawl already: {_ALREADY}")
        if config is not None and not raw_seeds:
            raw_seeds = config_seeds(config)
        settings = load_settings(config, overrides)
    # the model's table, remembered in run.json: --resume and readers know what judged the pages
    settings = replace(settings, model=model_table(model, settings.model))
    strategy_params = with_archive_graph(settings.crawl.strategy, settings.crawl.strategy_params, archives)
    settings = replace(settings, crawl=replace(settings.crawl, strategy_params=strategy_params))
    segments = resume_segments(run, settings, simulated=bool(archives), force=force,
                               where=str(out_dir)) if resume else []  # fmt: skip
    parts = build_parts(settings)
    strategy, counters = parts.strategy, parts.counters
    # re-fetches ask conditionally (fetch.freshness): the validators of what was fetched
    revisits = settings.fetch.conditional_refetch and (strategy.recrawls or resume)
    validators = Validators() if revisits else None
    fetcher = build_fetcher(settings, counters, archives=archives, validators=validators)  # bad archives: before any file
    made_dir = prepare_run_dir(out_dir)  # a file, or no permission: one line before anything is written
    # before anything in the run directory is written: two processes never write one
    # run directory (a second one gets a one-line error naming the first, exit 2)
    lock = RunLock(out_dir, made_dir=made_dir).acquire()
    try:
        if not resume:
            if (out_dir / DB_NAME).exists():  # (a crawl that started in the meantime)
                raise ConfigError(f"{out_dir} holds a crawl already: {_ALREADY}")
            # run.json before crawl.db: a run directory killed at any moment can be resumed
            write_run_json(out_dir, {
                "seeds": normalize_seeds(raw_seeds), "strategy": strategy.name,
                "simulated_from": [str(Path(a).resolve()) for a in archives] or None,
                "settings": settings.to_dict(), "finished": False, "summary": {},
            })  # fmt: skip
        frontier = open_frontier(settings, out_dir / DB_NAME, parents=strategy.needs_parents)
        try:
            if resume:
                # a proxy given anew (a wrong one fixed) is a reason to try again
                proxy_changed = (saved.get("fetch") or {}).get("proxy") != settings.fetch.proxy
                if retry_unreached(frontier, run.get("summary") or {}, out_dir, proxy_changed=proxy_changed):
                    frontier.commit()
                if validators is not None:
                    validators.read(committed_answers(frontier, out_dir))
            crawler = Crawler(
                settings, raw_seeds, out_dir, strategy=strategy, fetcher=fetcher,
                frontier=frontier, model=parts.model, filters=parts.filters, resume=resume,
                archives=[str(Path(a).resolve()) for a in archives], lock=lock,
            )  # fmt: skip
            crawler.segments = segments
        except Exception:
            frontier.close()
            raise
    except BaseException as exc:
        if not resume and isinstance(exc, FocuscrawlError):
            lock.take_back()  # nothing recorded: the next attempt is a new crawl again
        lock.release()
        raise
    crawler.stats.counters = counters
    return crawler


async def crawl_async(
    out_dir: Path,
    seeds: Sequence[str],
    *,
    progress: Callable[[CrawlStats], None] | None = None,
    **kwargs: Any,
) -> CrawlStats:
    """A crawl run to its end in the running event loop; ``progress`` as in :func:`crawl`."""
    crawler = open_crawl(Path(out_dir), seeds, **kwargs)
    if progress is not None:
        crawler.on_progress = progress
    failed = False
    try:
        async with crawler.fetcher:
            return await crawler.run()
    except FocuscrawlError:
        failed = True
        raise
    finally:
        crawler.close(failed=failed)


def fetch_overrides(
    proxy: str | None, allow_private: Sequence[str] = (), proxy_ca: str | Path | None = None
) -> dict[str, Any]:
    """The [fetch] overrides for a proxy, its CA and allowed private addresses (one helper
    for the API and the CLI). The proxy's own address needs no allow_private: the
    fetcher allows the proxy itself, and only it; the address policy still applies to
    every target URL."""
    out: dict[str, Any] = {"proxy": proxy, "tls_ca_file": str(proxy_ca) if proxy_ca else None}
    if allow_private:
        out["allow_private"] = tuple(allow_private)
    return out


def crawl(
    seeds: Sequence[str],
    out: str | Path,
    *,
    strategy: str | None = None,
    max_pages: int | None = None,
    model: str | Path | Mapping[str, Any] | None = None,
    proxy: str | None = None,
    proxy_ca: str | Path | None = None,
    delay: float | None = None,
    concurrency: int | None = None,
    config: Path | None = None,
    resume: bool = False,
    force: bool = False,
    scope: Mapping[str, Any] | None = None,
    fetch: Mapping[str, Any] | None = None,
    filters: Sequence[Mapping[str, Any]] | None = None,
    archives: Sequence[Path | str] = (),
    progress: Callable[[CrawlStats], None] | None = None,
    **crawl_settings: Any,
) -> CrawlStats:
    """Run a crawl to the end and return its statistics (the synchronous front door).

    Only what the caller passes overrides the config file (or, on ``resume``, the
    crawl's saved settings); the rest keeps its configured or default value.
    ``scope`` and ``fetch`` are tables of :class:`ScopeSettings` / :class:`FetchSettings`
    fields, ``filters`` a list of ``[[filters]]`` tables; other keyword arguments are
    :class:`CrawlSettings` fields. ``archives`` makes it a simulation over those WARC
    files (see :func:`open_crawl`). ``progress`` is called with the crawl's
    :class:`CrawlStats` after every result (keep it quick), e.g.
    ``progress=lambda s: print(s.fetched, s.harvest_rate)``. ``force`` lets a resume
    change the crawl's strategy, model, schedule or live/simulated (see :func:`open_crawl`).
    """
    overrides: dict[str, Any] = {
        "crawl": {"strategy": strategy, "max_pages": max_pages, **crawl_settings},
        "fetch": {
            **fetch_overrides(proxy, (), proxy_ca),
            "delay": delay,
            "concurrency": concurrency,
            **(fetch or {}),
        },
        "scope": dict(scope or {}),
    }
    if filters is not None:
        overrides["filters"] = [dict(f) for f in filters]
    run = crawl_async(
        Path(out), seeds, config=config, overrides=overrides, model=model, resume=resume,
        archives=archives, progress=progress, force=force,
    )  # fmt: skip
    return asyncio.run(run)
