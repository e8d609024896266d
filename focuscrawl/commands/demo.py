"""``focuscrawl demo``: replay the demo's web (:mod:`focuscrawl.demo`) on loopback, crawl
it focused and breadth-first with the same budget, and print both harvest rates."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from focuscrawl import demo
from focuscrawl.commands import Command
from focuscrawl.exceptions import ConfigError

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
    """The two crawls of the demo's web into ``out`` (replaced) and their harvest rates."""
    from focuscrawl.api import crawl
    from focuscrawl.replay.process import ReplayProcess

    out = Path(out)
    _clear_demo_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARK).write_text("a focuscrawl demo run: `focuscrawl demo` replaces it\n", encoding="utf-8")
    web = demo.demo_web(out)
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
            hits, n = demo.label_harvest(out / strategy, web)
            results[strategy] = (stats.harvest_rate, hits, n, stats.elapsed)
    for strategy, (model_hr, hits, n, elapsed) in results.items():
        label_hr = hits / n if n else 0.0
        model_txt = "n/a" if model_hr is None else f"{model_hr:.3f}"
        print(
            f"{strategy:>10}: harvest rate {label_hr:.3f} by labels ({hits}/{n} pages), "
            f"{model_txt} by the model, {elapsed:.1f} s -> {out / strategy}"
        )
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("demo-run"),
                   help="directory of the demo's runs, replaced by each demo (default: %(default)s)")
    p.add_argument("--max-pages", type=int, default=300,
                   help="budget of each of the two crawls (default: %(default)s)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    return run_demo(args.out, max_pages=args.max_pages)


COMMAND = Command("demo", "replay a test web, crawl it focused and breadth-first, compare", add_arguments, run)
