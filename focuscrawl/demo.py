"""The demo: replay a test web on loopback, crawl it focused and breadth-first
with the same budget, and print both harvest rates.

With ``../shared/testweb`` beside the checkout the web is WebKB (1997 university
sites) and the topic is course pages; otherwise a small sample web about cats
that the project generates itself. Harvest rates are measured twice: by the
crawl's own relevance model, and independently by the archive's labels.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focuscrawl.api import crawl
from focuscrawl.exceptions import ConfigError
from focuscrawl.replay.archive import load_labels
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS, build_sample_archive, labels_path_for

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"

WEBKB_SEEDS = (
    "http://www.cs.cornell.edu/",
    "http://www.cs.utexas.edu/",
    "http://www.cs.washington.edu/",
    "http://www.cs.wisc.edu/",
)
COURSE_KEYWORDS = (
    "course", "courses", "syllabus", "homework", "lecture", "lectures", "assignment",
    "assignments", "exam", "midterm", "final exam", "instructor", "teaching assistant",
    "office hours", "grading", "prerequisites", "textbook", "problem set",
)  # fmt: skip
CAT_KEYWORDS = ("cat", "cats", "kitten", "kittens", "feline", "felines", "whiskers", "purr")


@dataclass
class DemoWeb:
    archive: Path
    seeds: tuple[str, ...]
    model: dict[str, Any]
    is_relevant: Callable[[dict[str, Any]], bool]
    labels: dict[str, dict[str, Any]]
    name: str


def _demo_web(out: Path) -> DemoWeb:
    webkb = TESTWEB / "webkb.warc.gz"
    if webkb.exists():
        return DemoWeb(
            webkb,
            WEBKB_SEEDS,
            {"name": "keyword", "keywords": list(COURSE_KEYWORDS), "threshold": 0.15},
            lambda label: label.get("type") == "course",
            load_labels(TESTWEB / "webkb.labels.jsonl"),
            "WebKB (../shared/testweb), topic: course pages",
        )
    archive = build_sample_archive(out / "sample.warc.gz")
    return DemoWeb(
        archive,
        SAMPLE_SEEDS,
        {"name": "keyword", "keywords": list(CAT_KEYWORDS), "threshold": 0.25},
        lambda label: bool(label.get("relevant")),
        load_labels(labels_path_for(archive)),
        "generated sample web, topic: cats",
    )


def _label_harvest(run_dir: Path, web: DemoWeb) -> tuple[int, int]:
    hits = n = 0
    with open(run_dir / "pages.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec.get("status") != 200 or rec.get("error"):
                continue
            label = web.labels.get(rec["url"])
            if label is None:
                continue
            n += 1
            hits += web.is_relevant(label)
    return hits, n


# What a demo leaves in its --out directory: only such a directory is replaced.
DEMO_MARK = ".focuscrawl-demo"
_DEMO_ENTRIES = frozenset(
    {DEMO_MARK, "best-first", "bfs", "replay.log", "sample.warc.gz", "sample.labels.jsonl"}
)


def _clear_demo_dir(out: Path) -> None:
    """Empty ``out`` for a new demo, or refuse (one line) if it holds anything else."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"demo --out {out}: is a file, not a directory")
    if not out.exists() or not any(out.iterdir()):
        return
    entries = {entry.name for entry in out.iterdir()}
    # the mark (or, from before it existed, nothing but the demo's own entries)
    if DEMO_MARK not in entries and not entries <= _DEMO_ENTRIES:
        raise ConfigError(
            f"demo --out {out}: not empty and not a demo run directory; "
            f"refusing to delete it (choose another --out)"
        )
    shutil.rmtree(out)


def run_demo(out: Path, *, max_pages: int = 300) -> int:
    out = Path(out)
    _clear_demo_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARK).write_text("a focuscrawl demo run: `focuscrawl demo` replaces it\n", encoding="utf-8")
    web = _demo_web(out)
    print(f"demo web: {web.name}; seeds: {' '.join(web.seeds)}; budget {max_pages} pages")
    results: dict[str, tuple[float | None, int, int, float]] = {}
    with ReplayProcess([web.archive], log_path=out / "replay.log") as replay:
        for strategy in ("best-first", "bfs"):
            stats = crawl(
                web.seeds,
                out / strategy,
                strategy=strategy,
                max_pages=max_pages,
                model=web.model,
                proxy=replay.proxy_url,
                delay=0.0,  # our own loopback replay server: no need to be slow
                concurrency=8,
                # a comparison of two strategies: the reproducible schedule, so the demo
                # prints the same figures on every run (as-completed, they vary with timing)
                schedule="ordered",
            )
            hits, n = _label_harvest(out / strategy, web)
            results[strategy] = (stats.harvest_rate, hits, n, stats.elapsed)
    for strategy, (model_hr, hits, n, elapsed) in results.items():
        label_hr = hits / n if n else 0.0
        model_txt = "n/a" if model_hr is None else f"{model_hr:.3f}"
        print(
            f"{strategy:>10}: harvest rate {label_hr:.3f} by labels ({hits}/{n} pages), "
            f"{model_txt} by the model, {elapsed:.1f} s -> {out / strategy}"
        )
    return 0
