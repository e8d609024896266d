"""The demo's web: which archive, seeds, topic and judge ``focuscrawl demo``
(:mod:`focuscrawl.commands.demo`) crawls focused and breadth-first.

With ``../shared/testweb`` beside the checkout the web is WebKB (1997 university
sites) and the topic is course pages; otherwise a small sample web about cats
that the project generates itself. Harvest rates are measured twice: by the
crawl's own relevance model, and independently by the archive's labels.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focuscrawl.replay.archive import load_labels
from focuscrawl.replay.sample import SAMPLE_SEEDS, build_sample_archive, labels_path_for

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"  # beside an editable checkout


def testweb() -> Path:
    """``../shared/testweb`` from the working directory, as the README says, else beside
    the checkout the package runs from: an installed (not editable) package lives in
    site-packages, where the second never is, and the demo fell back to the sample web."""
    here = Path.cwd().parent / "shared" / "testweb"
    return here if (here / "webkb.warc.gz").exists() else TESTWEB

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


def demo_web(out: Path) -> DemoWeb:
    """WebKB and its course pages where ``../shared/testweb`` is, else the sample web
    (written into ``out``) and its cat pages."""
    where = testweb()
    webkb = where / "webkb.warc.gz"
    if webkb.exists():
        return DemoWeb(
            webkb,
            WEBKB_SEEDS,
            {"name": "keyword", "keywords": list(COURSE_KEYWORDS), "threshold": 0.15},
            lambda label: label.get("type") == "course",
            load_labels(where / "webkb.labels.jsonl"),
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


def label_harvest(run_dir: Path, web: DemoWeb) -> tuple[int, int]:
    """(relevant, labelled) among the run's pages fetched without error."""
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
