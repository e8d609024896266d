"""A crawl's run directory and what makes it resumable: the files' names, the state
committed with the store (:class:`ResumeState`), the thread that makes it durable, and
``run.json``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.base import RunJournal, UrlQueue
from focuscrawl.output.writers import JsonlOutput, PagesOutput, WarcOutput
from focuscrawl.provenance import DECISIONS_NAME
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.strategies.base import Strategy
from focuscrawl.urls import normalize_url

DB_NAME = "crawl.db"
WARC_NAME = "corpus.warc.gz"
PAGES_NAME = "pages.jsonl"
RUN_NAME = "run.json"


def normalize_seeds(seeds: Sequence[str]) -> list[str]:
    out: list[str] = []
    for seed in seeds:
        url = normalize_url(seed)
        if url is None:
            raise ConfigError(f"seed {seed!r} is not an http(s) URL")
        if url not in out:
            out.append(url)
    if not out:
        raise ConfigError("no seeds given")
    return out


def check_model(strategy: Strategy, model: RelevanceModel | None) -> None:
    """One line if ``strategy`` needs a relevance model and has none."""
    if strategy.needs_model and model is None:
        raise ConfigError(
            f"strategy {strategy.name!r} needs a relevance model ([model] in the config)"
        )


def sync_all(outputs: Sequence[WarcOutput | JsonlOutput]) -> list[int]:
    return [output.sync() for output in outputs]


@dataclass(frozen=True)
class ResumeState:
    """What a resume needs besides the store's rows: committed with them, in one transaction.

    ``window`` holds the URLs in flight (url, re-crawl) in the order taken; the
    offsets are the outputs' lengths that the committed rows account for.
    """

    warc_offset: int = 0
    pages_offset: int = 0
    decisions_offset: int | None = 0
    stats: Mapping[str, Any] = field(default_factory=dict)
    strategy: Mapping[str, Any] = field(default_factory=dict)
    rng: Any = None  # random.Random.getstate(), as JSON gives it back
    results: int = 0
    window: tuple[tuple[str, bool], ...] = ()
    layer_listed: bool = False
    recrawl_pending: tuple[str, ...] = ()
    control: tuple[Mapping[str, Any], ...] = ()
    control_id: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ResumeState:
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise TypeError(type(raw).__name__)
            return cls(
                warc_offset=int(raw.get("warc_offset") or 0),
                pages_offset=int(raw.get("pages_offset") or 0),
                decisions_offset=None
                if raw.get("decisions_offset") is None
                else int(raw["decisions_offset"]),
                stats=dict(raw.get("stats") or {}),
                strategy=dict(raw.get("strategy") or {}),
                rng=raw.get("rng"),
                results=int(raw.get("results") or 0),
                window=tuple((str(u), bool(r)) for u, r in raw.get("window") or ()),
                layer_listed=bool(raw.get("layer_listed", False)),
                recrawl_pending=tuple(str(u) for u in raw.get("recrawl_pending") or ()),
                control=tuple(dict(c) for c in raw.get("control") or ()),
                control_id=int(raw.get("control_id") or 0),
            )
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(
                f"the crawl DB's engine state is corrupt ({exc}); cannot resume"
            ) from None


def resume_state(
    journal: RunJournal, queue: UrlQueue, out_dir: Path, *, resume: bool
) -> ResumeState | None:
    """The state committed in the crawl DB's ``journal`` (None: a new crawl), once it is
    known to be what was asked: a crawl to resume, or a new one in an unused directory."""
    meta = journal.get_meta("engine")
    if meta is None and resume and queue.count() > 0:
        raise ConfigError(f"{out_dir}: crawl DB has no engine state; cannot resume")
    if meta is not None and not resume:
        raise ConfigError(
            f"{out_dir} holds a crawl already: resume it (--resume; resume=True in Python)"
            " or choose another directory (--out; out)"
        )
    state = ResumeState.from_json(meta) if meta else None
    out_dir.mkdir(parents=True, exist_ok=True)
    pages_path = out_dir / PAGES_NAME
    if state is None and pages_path.exists() and pages_path.stat().st_size > 0:
        # records the crawl DB does not account for (a lost or emptied crawl.db): keep them
        raise ConfigError(
            f"{out_dir}: {PAGES_NAME} holds records but {DB_NAME} has no crawl state;"
            " refusing to overwrite them (move them away or use another --out)"
        )
    return state


def open_outputs(
    out_dir: Path, start: ResumeState, *, committed: bool, provenance: bool
) -> tuple[WarcOutput, JsonlOutput, JsonlOutput | None]:
    """The WARC, pages.jsonl and (with provenance) decisions.jsonl, cut back to the
    lengths ``start`` says were committed (a state committed says the lengths, 0 too:
    killed before its first records)."""
    warc = WarcOutput(out_dir / WARC_NAME, start.warc_offset, committed=committed)
    pages = PagesOutput(out_dir / PAGES_NAME, start.pages_offset, committed=committed)
    decisions = None
    if provenance:
        decisions = JsonlOutput(out_dir / DECISIONS_NAME, start.decisions_offset, committed=committed)
    return warc, pages, decisions


class CommitThread:
    """The one thread that makes a crawl's outputs and store durable (fsyncs, SQLite's
    writes: both release the GIL), so that fetches in flight go on meanwhile."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    async def run(self, work: Callable[[], None]) -> None:
        """``work()`` in the thread. A thread cannot be stopped: if the waiting task is
        cancelled, the thread is waited for before the cancellation goes on, so that
        nothing (the final commit of a stopped crawl) touches the outputs or the store
        while it runs."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="focuscrawl-commit"
            )
        future = self._pool.submit(work)
        try:
            await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            concurrent.futures.wait([future])
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def write_run_json(out_dir: Path, run: dict[str, Any]) -> None:
    """``run.json``, replaced atomically (what ``--resume`` reads back)."""
    path = out_dir / RUN_NAME
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(run, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    tmp.replace(path)


def rng_state(saved: Any) -> tuple[Any, ...]:
    """random.Random.getstate() after a JSON round trip (lists back to tuples)."""
    version, internal, gauss = saved
    return (version, tuple(internal), gauss)
