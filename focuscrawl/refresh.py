"""``focuscrawl refresh RUN``: a finished crawl's pages visited again, the likeliest to
have changed first, each asked conditionally.

The pages of a run (its first fetches that gave a 2xx answer) are ordered by their
estimated change rate times their relevance, and the first ``max_pages`` of them are
fetched again, with the ETag / Last-Modified of their last archived answer
(:mod:`focuscrawl.fetch.freshness`). The rate is Cho and Garcia-Molina's estimator
over the page's re-visits so far (changed or not), with a prior of half a change in
one visit so that a page never re-visited is neither certain to change nor never to;
a sitemap ``<lastmod>`` later than the page's last visit counts as one more visit that
found a change (the page is known to have changed without being asked).

What a re-visit finds is appended to the run: a ``304`` is a WARC ``revisit`` record
(server-not-modified) and costs no body; a 2xx with the same payload a ``revisit``
record (identical-payload-digest); anything else a response record. Each gets a
``pages.jsonl`` line with ``recrawl: true``, ``refresh`` (the round's number) and
``unchanged``. The round's plan and progress are committed in the crawl DB with the
outputs' lengths, batch by batch, as the crawl commits its own: a refresh stopped
at any moment and started again goes on where it was, nothing written twice, and a
later ``crawl --resume`` keeps what it wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from focuscrawl.crawler.recorder import NOT_FETCHED
from focuscrawl.crawler.run import DB_NAME, PAGES_NAME, RUN_NAME, WARC_NAME, ResumeState
from focuscrawl.discovery import LASTMOD
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.factory import build_fetcher
from focuscrawl.fetch.freshness import Validators, change_rate, observed
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.output.lock import RunLock
from focuscrawl.output.warc_records import sha1_b32
from focuscrawl.output.warc_scan import Answered, answers
from focuscrawl.output.writers import PagesOutput, WarcOutput
from focuscrawl.settings import read_run_json
from focuscrawl.types import FetchResult, PageRecord

__all__ = ["Refreshed", "Visited", "estimated_rate", "plan_order", "refresh"]

log = logging.getLogger(__name__)

META = "refresh"  # the crawl DB's meta key of the refresh rounds
_PRIOR_VISITS, _PRIOR_CHANGES = 1, 0.5  # half a change in one visit, before any is seen


@dataclass(slots=True)
class Visited:
    """A page of the run, as its pages.jsonl lines tell it."""

    url: str  # the URL it was archived under (its final URL)
    relevance: float | None
    depth: int
    parent: str | None
    last_visit: float  # the time of its last fetch
    visits: int = 0  # re-visits (a re-crawl's or a refresh's) whose answer told (``freshness.observed``)
    changes: int = 0  # of them, those that found it changed
    status: int = 200  # the status of its last answer that told (a 304 tells the one before)
    final: str = ""  # where that answer came from, after redirects ("": ``url``)


@dataclass(slots=True)
class Refreshed:
    """What a refresh did: the round, the pages asked for again, what they answered."""

    round: int
    planned: int
    counters: Counter[str] = field(default_factory=Counter)

    @property
    def revisits(self) -> int:
        """Re-visits that got an answer."""
        return self.counters["unchanged"] + self.counters["changed"]

    @property
    def not_modified_share(self) -> float:
        """The share of the answered re-visits that were a 304."""
        return self.counters["not_modified"] / self.revisits if self.revisits else 0.0


def estimated_rate(visits: int, changes: int, *, lastmod: float = 0.0, last_visit: float = 0.0) -> float:
    """A page's changes per visit interval: Cho and Garcia-Molina's estimator (2003,
    eq. 6) over its re-visits, with a prior of half a change in one visit; a sitemap
    ``lastmod`` after its last visit is one more visit that found it changed.

    >>> round(estimated_rate(0, 0), 4), round(estimated_rate(3, 0), 4), round(estimated_rate(3, 3), 4)
    (0.4055, 0.1178, 1.5041)
    >>> estimated_rate(0, 0, lastmod=20.0, last_visit=10.0) == estimated_rate(1, 1)
    True
    """
    if lastmod > last_visit > 0:
        visits, changes = visits + 1, changes + 1
    return change_rate(visits + _PRIOR_VISITS, changes + _PRIOR_CHANGES)


def plan_order(pages: list[Visited], lastmods: dict[str, float], budget: int | None) -> list[str]:
    """The URLs to visit again: by estimated rate times relevance (none: 1), highest
    first (ties: the order of the crawl), at most ``budget`` of them.

    >>> a = Visited("http://a/", 0.9, 0, None, 1.0)
    >>> b = Visited("http://b/", 0.9, 0, None, 1.0, visits=2, changes=2)
    >>> c = Visited("http://c/", 0.1, 0, None, 1.0, visits=2, changes=2)
    >>> plan_order([a, b, c], {}, None), plan_order([a, b, c], {"http://a/": 5.0}, 1)
    (['http://b/', 'http://a/', 'http://c/'], ['http://b/'])
    """
    scored = []
    for i, page in enumerate(pages):
        rate = estimated_rate(page.visits, page.changes, lastmod=lastmods.get(page.url, 0.0),
                              last_visit=page.last_visit)  # fmt: skip
        weight = 1.0 if page.relevance is None else max(page.relevance, 0.0)
        scored.append((-rate * weight, i, page.url))
    scored.sort()
    chosen = [url for _, _, url in scored]
    return chosen if budget is None else chosen[: max(budget, 0)]


def read_pages(path: Path, end: int | None = None) -> list[Visited]:
    """The run's pages (first fetches with a 2xx answer), with their re-visits: the
    lines up to ``end``, the committed length (those past it were never committed: a
    stopped crawl or refresh writes them again, or never, when it goes on)."""
    pages: dict[str, Visited] = {}
    with open(path, "rb") as fh:
        for line in fh:
            if end is not None and fh.tell() > end:
                break
            try:
                row: dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            url = row.get("final_url") or row.get("url")
            if not isinstance(url, str):
                continue
            status = int(row.get("status") or 0)
            answered = row.get("error") is None and status > 0
            if row.get("recrawl"):  # of the URL asked (a refresh asks a page's own URL: it may redirect now)
                page = pages.get(str(row.get("url"))) or pages.get(url)
                if page is not None and observed(status, row.get("error"), bool(row.get("unchanged"))):
                    page.visits += 1
                    page.changes += not row.get("unchanged")
                    page.last_visit = float(row.get("fetched_at") or page.last_visit)
                    if status != 304:
                        page.status, page.final = status, url
            elif answered and 200 <= int(row["status"]) < 300 and url not in pages:
                pages[url] = Visited(url, row.get("relevance"), int(row.get("depth") or 0),
                                     row.get("parent"), float(row.get("fetched_at") or 0.0))  # fmt: skip
    return list(pages.values())


def _lastmods(store: FrontierStore, pages: list[Visited], now: float) -> dict[str, float]:
    """The sitemaps' ``lastmod`` of the pages, those of the past: one after ``now`` says
    nothing of a change (a typo, a date a CMS puts in the future), and would pass every
    later visit, so that the page counted changed at every round."""
    store.ensure_columns([LASTMOD])  # (a crawl that read no sitemap has none: zeros)
    out = {}
    for page in pages:
        moment = store.value(page.url, LASTMOD)
        if moment and moment <= now:
            out[page.url] = moment
    return out


class _Round:
    """One refresh round: its plan, its outputs, its commits."""

    def __init__(self, run_dir: Path, store: FrontierStore, state: ResumeState, meta: dict[str, Any]) -> None:
        self.store = store
        self.state = state
        self.meta = meta
        self.warc = WarcOutput(run_dir / WARC_NAME, state.warc_offset, committed=True)
        self.pages = PagesOutput(run_dir / PAGES_NAME, state.pages_offset, committed=True)
        self.digests: dict[str, str] = {}  # the payload of each page's last 2xx answer
        self.validators = Validators()
        self.validators.read(self._digested(answers(run_dir / WARC_NAME, state.warc_offset)))
        # a round gone on with: what its earlier runs counted, committed with their lines
        self.refreshed = Refreshed(int(meta["round"]), len(meta["plan"]), Counter(meta.get("counters") or {}))

    def _digested(self, archived: Iterator[Answered]) -> Iterator[Answered]:
        """The archived answers, as they go by: each page's last 2xx payload kept."""
        for answer in archived:
            if answer.digest is not None and 200 <= answer.status < 300:
                self.digests[answer.uri] = answer.digest
            yield answer

    def record(self, url: str, page: Visited, result: FetchResult) -> None:
        """One re-visit: its WARC record and its pages.jsonl line."""
        counters = self.refreshed.counters
        if result.error in NOT_FETCHED:  # never reached the server (robots.txt now says no...)
            counters[f"skipped_{result.error}"] += 1
            return
        final = result.final_url or url
        record = PageRecord(
            url=url, status=result.status, depth=page.depth, parent=page.parent, score=None,
            relevance=None, fetched_at=result.fetched_at or time.time(),
            content_type=result.content_type, size=len(result.body), out_links=0, error=result.error,
            final_url=final if final != url else None, truncated=result.truncated, recrawl=True,
        )  # fmt: skip
        record.extra["refresh"] = self.refreshed.round
        if result.error is not None and result.status == 0:  # no answer
            counters["errors"] += 1
        elif result.refers_to is not None:  # 304 to the conditional request: no body
            self.warc.write_not_modified(result, *result.refers_to)
            counters["not_modified"] += 1
            counters["unchanged"] += 1
            record.extra["unchanged"] = True
        elif not observed(result.status, result.error, False):  # the server failed (5xx, 429): not looked at
            self.warc.write(result)
            counters["server_failed"] += 1
        else:
            digest = sha1_b32(result.body)
            if result.ok:  # its last answer a 2xx too, from where this one came, with this payload
                same = 200 <= page.status < 300 and final == (page.final or url) and self.digests.get(final) == digest
            else:  # still gone: the same 404 or 410 as at its last visit is no change since then
                same = (result.status, final) == (page.status, page.final or url)
            page.status, page.final = result.status, final
            if same and result.ok:  # answered in full, but the same payload
                self.warc.write_revisit(result)
            else:  # (a 404's body is archived whole: the same status, not the same payload)
                self.warc.write(result)
                if result.ok:  # (a 404's body is no version of the page)
                    self.digests[final] = digest
            counters["unchanged" if same else "changed"] += 1
            record.extra["unchanged"] = same
        self.pages.write(record)

    def commit(self, done: int, *, finished: bool = False) -> None:
        """The outputs durable, then their lengths and the round's progress in one transaction."""
        warc, pages = self.warc.sync(), self.pages.sync()
        self.state = replace(self.state, warc_offset=warc, pages_offset=pages)
        self.meta = {**self.meta, "done": done, "finished": finished, "counters": dict(self.refreshed.counters)}
        self.store.set_meta("engine", self.state.to_json())
        self.store.set_meta(META, json.dumps(self.meta))
        self.store.commit()

    def close(self) -> None:
        self.warc.close()
        self.pages.close()


def _shared_part(run_dir: Path, run: dict[str, Any]) -> str:
    """What of a shared crawl ``run_dir`` is ("" if none): the crawl's own directory (its
    run.json names its workers), or a worker's (its crawl DB, a marker, names it)."""
    if "workers" in run:
        return f"a shared crawl's directory ({run['workers']} workers)"
    with contextlib.suppress(OSError, ValueError, AttributeError):
        head = (run_dir / DB_NAME).read_bytes()[:4096]
        if head.startswith(b"{") and "worker" in json.loads(head):
            return "the directory of a shared crawl's worker"
    return ""


def refresh(
    run_dir: Path | str, *, max_pages: int | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> Refreshed:
    """Visit a finished crawl's pages again (see the module's text); the round's counts.

    A round stopped before its end is finished by the next call (its plan kept, its
    ``max_pages`` too), whose counts are the whole round's. ``overrides``: settings tables on top of the crawl's saved ones
    (a new proxy, a delay). A simulated crawl is refreshed from the same archives.
    """
    from focuscrawl.crawler.parts import saved_settings  # (a command's light import)

    run_dir = Path(run_dir)
    if not (run_dir / RUN_NAME).exists() or not (run_dir / DB_NAME).exists():
        raise ConfigError(f"refresh: {run_dir} holds no crawl (no {RUN_NAME} or {DB_NAME})")
    if max_pages is not None and max_pages < 0:
        raise ConfigError(f"refresh: --max-pages {max_pages}: must be 0 or more")
    run = read_run_json(run_dir / RUN_NAME)
    shared = _shared_part(run_dir, run)
    if shared:  # (it said "the crawl committed nothing", of a crawl of 2,000 pages)
        raise ConfigError(f"refresh: {run_dir} is {shared}: refresh re-visits the pages of a "
                          "crawl one process ran, not those of a shared crawl")  # fmt: skip
    settings = saved_settings(run["settings"], overrides or {})
    archives = [str(a) for a in run.get("simulated_from") or ()]
    lock = RunLock(run_dir).acquire()
    try:
        store = open_frontier(settings, run_dir / DB_NAME)
        try:
            engine = store.get_meta("engine")
            if engine is None:
                raise ConfigError(f"refresh: {run_dir}: the crawl committed nothing; nothing to refresh")
            state = ResumeState.from_json(engine)
            pages = read_pages(run_dir / PAGES_NAME, state.pages_offset)
            saved = store.get_meta(META)
            meta: dict[str, Any] = json.loads(saved) if saved else {"round": 0, "finished": True}
            if meta.get("finished", True):  # a new round
                plan = plan_order(pages, _lastmods(store, pages, time.time()), max_pages)
                meta = {"round": int(meta["round"]) + 1, "plan": plan, "done": 0, "finished": False}
            else:
                log.info("refresh: round %d goes on at page %d of %d", meta["round"], meta["done"],
                         len(meta["plan"]))  # fmt: skip
            one = _Round(run_dir, store, state, meta)
            try:
                one.commit(int(meta["done"]))  # the round's plan is kept before any fetch
                fetcher = build_fetcher(settings, Counter(), archives=archives,
                                        validators=one.validators)  # fmt: skip
                by_url = {p.url: p for p in pages}
                asyncio.run(_visit(fetcher, one, by_url, settings.fetch.concurrency))
            finally:
                one.close()
        finally:
            store.close()
    finally:
        lock.release()
    return one.refreshed


async def _visit(fetcher: Any, one: _Round, pages: dict[str, Visited], concurrency: int) -> None:
    """The round's plan from where it stands, a batch at a time, each batch committed
    (recorded in the plan's order, whatever order the answers come in)."""
    plan: list[str] = one.meta["plan"]
    done = int(one.meta["done"])
    batch = max(1, min(concurrency, 64))
    async with fetcher:
        while done < len(plan):
            urls = plan[done : done + batch]
            results = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
            for url, result in zip(urls, results, strict=True):
                page = pages.get(url) or Visited(url, None, 0, None, 0.0)
                one.record(url, page, result)
            done += len(urls)
            one.commit(done, finished=done >= len(plan))
    if not plan:
        one.commit(0, finished=True)
