"""Where a run directory keeps its records: in itself, or, for a crawl shared by
workers (``focuscrawl crawl --workers N``), in one run directory per local worker
under ``workers/``. Readers (eval, why, the dashboard, experiment) take the files of
both places together as one run."""

from __future__ import annotations

from pathlib import Path

WORKERS_DIR = "workers"  # a shared crawl's run directory: one run directory per local worker


def run_files(run_dir: Path, name: str) -> list[Path]:
    """The files called ``name`` (``pages.jsonl``, ``decisions.jsonl``...) of a run: the
    run directory's own if it has one, then its workers', in their order."""
    own = run_dir / name
    return ([own] if own.is_file() else []) + sorted(run_dir.glob(f"{WORKERS_DIR}/*/{name}"))
