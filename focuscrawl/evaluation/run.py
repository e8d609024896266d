"""Evaluating one run directory against an independent relevance source.

The crawler's own model judged the pages while crawling (``relevant`` in
pages.jsonl); a fair comparison of strategies needs a judge that none of them
used: a label file with a selector (``categories~=Mammals``, ``type=course``,
``has_comments=true``), or a separately trained model that re-reads the crawled
pages from the run's ``corpus.warc.gz``.

Counting rules: every line of pages.jsonl that is not a re-crawl is one URL of the
budget (the x axis of every curve, as ``crawl.max_pages`` counts them); a *page* is
one answered 2xx without error (as the crawl counts it); harvest rates are relevant pages / pages. A page
without a label is not relevant (it is not one of the topic's pages), unless
``skip_unlabelled`` leaves it out of the rates altogether.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.evaluation import crawl_metrics as cm
from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.fetch.freshness import observed
from focuscrawl.metrics import harvest_rate
from focuscrawl.output.layout import run_files
from focuscrawl.relevance.base import judge, load_model
from focuscrawl.relevance.examples import (
    all_match,
    check_selector,
    iter_archive_pages,
    parse_filter,
)
from focuscrawl.relevance.language import normalise_lang
from focuscrawl.replay.archive import load_labels
from focuscrawl.urls import normalize_url


@dataclass
class RunPages:
    """The fetched URLs of a run, in fetch order (re-crawls left out and counted)."""

    path: Path
    seeds: list[str]
    strategy: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    recrawls: int = 0
    recrawls_answered: int = 0  # re-visits (re-crawls, refreshes) that got an answer
    recrawls_unchanged: int = 0  # of them, those that found the payload unchanged
    recrawls_not_modified: int = 0  # of those, the ones answered 304 (no body)
    bad_lines: int = 0
    elapsed: float = 0.0

    @property
    def urls(self) -> list[str]:
        return [str(r["url"]) for r in self.rows]

    @staticmethod
    def is_page(row: Mapping[str, Any]) -> bool:
        """A page: a 2xx answer without error (HTML or PDF), not a sitemap or a feed
        (read for its links), as the crawl judges and counts pages: a 203 from a proxy
        is as much a page as a 200."""
        status = row.get("status")
        return (
            isinstance(status, int) and 200 <= status < 300 and not row.get("error")
            and not (row.get("sitemap") or row.get("feed"))
        )  # fmt: skip

    @staticmethod
    def content_url(row: Mapping[str, Any]) -> str:
        """Where the content was found (after redirects)."""
        return str(row.get("final_url") or row["url"])


def has_pages(run_dir: Path) -> bool:
    """Whether a run directory holds pages to read (its own, or its workers')."""
    return bool(run_files(run_dir, "pages.jsonl"))


def read_run(run_dir: Path | str) -> RunPages:
    """pages.jsonl and run.json of a run directory; unreadable lines are skipped and counted.

    A shared crawl's run directory (``focuscrawl crawl --workers N``) is read as one
    run: its workers' pages.jsonl files (``workers/*/``), merged in the order the
    pages were fetched."""
    run_dir = Path(run_dir)
    info: dict[str, Any] = {}
    if (run_dir / "run.json").is_file():
        try:
            info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        except ValueError:
            info = {}
    if not isinstance(info, dict):  # a run.json of another shape: its pages are still read
        info = {}
    paths = run_files(run_dir, "pages.jsonl")
    if not paths and "workers" not in info:
        raise ConfigError(f"{run_dir}: not a run directory (no pages.jsonl)")
    seeds, summary = info.get("seeds"), info.get("summary")
    elapsed = summary.get("elapsed") if isinstance(summary, dict) else None
    run = RunPages(
        run_dir, [str(s) for s in seeds] if isinstance(seeds, list) else [], str(info.get("strategy", "?")),
        elapsed=float(elapsed) if isinstance(elapsed, int | float) and not isinstance(elapsed, bool) else 0.0,
    )  # fmt: skip
    for path in paths:
        _read_pages(path, run)
    if len(paths) > 1:  # one crawl's order: when each page was fetched (stable per worker)
        run.rows.sort(key=lambda row: float(row.get("fetched_at") or 0.0))
    return run


def _read_pages(path: Path, run: RunPages) -> None:
    # lines as bytes: a line cut inside a UTF-8 character (a crawl killed, or still
    # writing it) is one bad line, not the whole file unreadable
    with path.open("rb") as fh:
        for line in fh:
            try:
                row = json.loads(line)
            except ValueError:  # (UnicodeDecodeError too)
                run.bad_lines += 1  # a line cut by a kill: counted, not fatal
                continue
            if not isinstance(row, dict) or "url" not in row:
                run.bad_lines += 1
            elif row.get("recrawl"):
                run.recrawls += 1
                if observed(int(row.get("status") or 0), row.get("error"), bool(row.get("unchanged"))):
                    run.recrawls_answered += 1
                    run.recrawls_unchanged += bool(row.get("unchanged"))
                    run.recrawls_not_modified += row.get("status") == 304
            else:
                run.rows.append(row)


Judge = Callable[[str], bool | None]  # URL -> relevant? (None: no judgement)


@dataclass
class LabelJudge:
    """Relevance from a label file and a selector (every filter must hold).

    A selector whose key no label line has, or that accepts no labelled page, is a
    ConfigError naming the keys (and values) that exist: it would judge every page
    irrelevant and report zeros."""

    labels: Mapping[str, Mapping[str, Any]]
    selector: Sequence[str]
    source: str = "the labels"

    def __post_init__(self) -> None:
        try:
            self._filters = [parse_filter(s) for s in self.selector]
            check_selector(self.labels, self._filters, self.source)
        except ModelError as exc:
            raise ConfigError(str(exc)) from None
        if not self._filters:
            raise ConfigError("give a relevance selector such as type=course")

    @classmethod
    def from_file(cls, path: Path | str, selector: Sequence[str] | str) -> LabelJudge:
        try:
            labels = load_labels(path)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read labels ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not a label file (not UTF-8 text)") from None
        return cls(labels, [selector] if isinstance(selector, str) else list(selector), Path(path).name)

    def __call__(self, url: str) -> bool | None:
        label = self.labels.get(url)
        return None if label is None else all_match(self._filters, label)

    def answer_set(self) -> list[str]:
        """Every labelled URL the selector accepts (P3's answer set)."""
        return [u for u, lab in self.labels.items() if all_match(self._filters, lab)]

    def field_of(self, url: str, key: str) -> Any:
        label = self.labels.get(url)
        return None if label is None else label.get(key)


def model_judge(model_dir: Path | str, run_dir: Path | str) -> Judge:
    """A separately trained model re-reading the run's corpus (pages it cannot see: None)."""
    model = load_model(Path(model_dir))
    verdicts = {
        page.url: judge(model, page)[1]
        for page in iter_archive_pages(Path(run_dir) / "corpus.warc.gz", only_ok=True)
    }
    return verdicts.get


def checkpoints_for(n: int, count: int = 20) -> list[int]:
    """``count`` evenly spaced budget points up to ``n`` (always ending at ``n``).

    >>> checkpoints_for(1000, 4), checkpoints_for(3, 10), checkpoints_for(0)
    ([250, 500, 750, 1000], [1, 2, 3], [])
    """
    if n <= 0:
        return []
    return sorted({max(1, round(n * k / count)) for k in range(1, count + 1)})


def evaluate_run(
    run: RunPages,
    judge: Judge,
    *,
    targets: Iterable[str] | None = None,
    answer: Iterable[str] | None = None,
    checkpoints: Sequence[int] | None = None,
    skip_unlabelled: bool = False,
    web_pages: int = 0,
    lang_of: Callable[[Mapping[str, Any]], str | None] | None = None,
    thresholds: Sequence[float] = (),
) -> dict[str, Any]:
    """Every metric of :mod:`crawl_metrics` for one run, as a JSON-ready dict.

    ``checkpoints`` are budget points (URLs fetched) for the curves; ``answer`` the
    answer set (default: none, no P3 scores); ``web_pages`` the size of the web for
    % visited; ``lang_of`` a row's language (default: the crawler's ``lang``).
    """
    rows = run.rows
    n = len(rows)
    is_page = [RunPages.is_page(r) for r in rows]
    verdicts = [judge(RunPages.content_url(r)) if ok else None for r, ok in zip(rows, is_page, strict=True)]
    # a noindex page, a sitemap or a feed (issue 36) is fetched, archived and marked: not one of the rates' pages
    counted = [ok and not (skip_unlabelled and v is None) and not (r.get("noindex") or r.get("sitemap") or r.get("feed"))
               for ok, v, r in zip(is_page, verdicts, rows, strict=True)]  # fmt: skip
    rel = [bool(v) for v in verdicts]
    # curves over the budget: harvest among the pages fetched so far
    pages_so_far = hits_so_far = 0
    harvest: list[float] = []
    for c, r in zip(counted, rel, strict=True):
        pages_so_far += c
        hits_so_far += c and r
        harvest.append(hits_so_far / pages_so_far if pages_so_far else 0.0)
    page_rows = [r for r, c in zip(rows, counted, strict=True) if c]
    page_rel = [r for r, c in zip(rel, counted, strict=True) if c]
    page_urls = [RunPages.content_url(r) for r in page_rows]
    points = list(checkpoints) if checkpoints is not None else checkpoints_for(n)
    # P0's layers are crawl rounds; a crawl without rounds (every page in round 0) is
    # split by link depth instead, which is what breadth-first's rounds would be
    layer_key = "layer" if any(r.get("layer") for r in rows) else "depth"
    out: dict[str, Any] = {
        "run": str(run.path), "strategy": run.strategy, "fetched": n,
        "pages": len(page_rows), "relevant": sum(page_rel), "recrawls": run.recrawls,
        # the share of the answered re-visits that found a change, and of those answered
        # 304 (issue 36; None without re-visits)
        "recrawls_changed": 1 - run.recrawls_unchanged / run.recrawls_answered if run.recrawls_answered else None,
        "recrawls_not_modified": run.recrawls_not_modified / run.recrawls_answered if run.recrawls_answered else None,
        "unlabelled": sum(1 for ok, v in zip(is_page, verdicts, strict=True) if ok and v is None),
        "bad_lines": run.bad_lines, "elapsed": run.elapsed,
        "harvest_rate": harvest_rate(page_rel),
        "layers_by": layer_key,
        "harvest_by_layer": {str(k): v for k, v in cm.harvest_by_layer(
            [int(r.get(layer_key) or 0) for r in page_rows], page_rel).items()},
        "pages_by_layer": {},
        "visited_per_relevant": _finite(cm.visited_per_relevant(page_rel)),
        "domains": cm.distinct_domains(page_urls),
        "checkpoints": points,
        "curves": {"harvest_rate": [cm.value_at(harvest, p) for p in points]},
    }  # fmt: skip
    for row in page_rows:
        key = str(int(row.get(layer_key) or 0))
        out["pages_by_layer"][key] = out["pages_by_layer"].get(key, 0) + 1
    seed_domains = set(cm.domains_of(run.seeds))
    ext = cm.external_share(page_urls, page_rel, seed_domains)
    out["external"] = {"pages": ext.external, "share": ext.share, "harvest_rate": ext.harvest}
    langs = [(lang_of or _crawler_lang)(r) for r in page_rows]
    out["languages"] = cm.language_shares(langs)
    if targets is not None:
        target_set = _as_crawled(targets)
        # a target counts when its URL was fetched as a page (by its own or its final URL)
        seen = [RunPages.content_url(r) if ok else "" for r, ok in zip(rows, is_page, strict=True)]
        curve = cm.target_recall_curve(seen, target_set)
        out["targets"] = len(target_set)
        out["target_recall"] = curve[-1] if curve else 0.0
        out["curves"]["target_recall"] = [cm.value_at(curve, p) for p in points]
    if answer is not None:
        truth = _as_crawled(answer)
        if any(r.get("relevant") is not None for r in page_rows):  # the crawl had a model
            marked = [RunPages.content_url(r) for r in page_rows if r.get("relevant")]
            out["answer"] = cm.answer_set_scores(marked, truth).as_dict()
            out["answer"]["size"] = len(truth)
        # % visited counts every fetched URL of the budget; % found the answer pages among them
        fvv = cm.found_vs_visited(
            [c and RunPages.content_url(r) in truth for r, c in zip(rows, counted, strict=True)],
            web_pages, len(truth),
        )  # fmt: skip
        out["curves"]["found_vs_visited"] = [list(fvv[min(p, n) - 1]) for p in points]
        if thresholds:
            scores = {
                RunPages.content_url(r): float(r["relevance"])
                for r in page_rows if isinstance(r.get("relevance"), int | float)
            }  # fmt: skip
            if scores:  # a crawl without a model recorded no similarity
                out["f1_by_threshold"] = cm.f1_by_threshold(scores, truth, thresholds)
    out["unique"] = _unique(page_rows, page_rel, None if answer is None else _as_crawled(answer))
    return out


def _as_crawled(urls: Iterable[str]) -> set[str]:
    """URLs in the form pages.jsonl records them (the crawler's normal form): a target
    written ``http://WWW.A.org:80`` is the crawled ``http://www.a.org/``."""
    return {normalize_url(u) or u for u in urls}


def _unique(rows: Sequence[Mapping[str, Any]], relevant: Sequence[bool], truth: set[str] | None) -> dict[str, Any]:
    """The page figures with duplicates counted once: a page the crawler found to
    duplicate an earlier one (pages.jsonl's ``duplicate_of``) is left out."""
    kept = [(r, rel) for r, rel in zip(rows, relevant, strict=True) if not r.get("duplicate_of")]
    out: dict[str, Any] = {
        "duplicates": len(rows) - len(kept), "pages": len(kept), "relevant": sum(rel for _, rel in kept),
        "harvest_rate": harvest_rate([rel for _, rel in kept]),
    }  # fmt: skip
    if truth is not None and any(r.get("relevant") is not None for r, _ in kept):
        marked = [RunPages.content_url(r) for r, _ in kept if r.get("relevant")]
        out["answer"] = cm.answer_set_scores(marked, truth).as_dict()
    return out


def _finite(x: float) -> float | None:
    """JSON has no infinity: None stands for "no relevant page found"."""
    return None if math.isinf(x) else x


def _crawler_lang(row: Mapping[str, Any]) -> str | None:
    """The page's ``<html lang>`` as recorded, folded to its primary subtag (de-DE -> de)."""
    lang = row.get("lang")
    return normalise_lang(str(lang)) or None if lang else None


def compare_runs(a: RunPages, b: RunPages) -> dict[str, Any]:
    """Page and domain overlap of two crawls (P0 [V])."""
    pa = [RunPages.content_url(r) for r in a.rows if RunPages.is_page(r)]
    pb = [RunPages.content_url(r) for r in b.rows if RunPages.is_page(r)]
    return {
        "pages": cm.overlap(pa, pb),
        "domains": cm.overlap(cm.domains_of(pa), cm.domains_of(pb)),
    }
