"""CPU per page of the language strategy's measured kinds (issue 38): A/B on WebKB, alternating.

    python benchmarks/bench_language_kinds.py [--rounds 4] [--pages 2000]

A is the ``language`` strategy with the prior alone (target en, ``prior_pages=0``: the defaults before issue 38's third web); B adds the measured kinds
(``prior_pages=2 hub_weight=1 probe=0.3``: a ``language_shares`` call per page, the
kinds' counts and the rescoring of a kind's queued URLs). Each is a ``focuscrawl
simulate`` of WebKB from its four department seeds; the two take turns, their order
reversed every other round. The package is compiled first, so no child pays the
compile time. Printed per setting: the median over the rounds of the child's CPU
(user + system) per URL, its start-up (the same crawl with ``--max-pages 1``)
subtracted, and B / A. The two crawls differ once the kinds reorder the queue, so
the same strategies are then also timed in-process on the same pages: WebKB's first
``--pages`` HTML pages, parsed once, each strategy's ``on_page`` over all of them,
alternating; the extra CPU per page is set against A's crawl CPU per URL.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ARCHIVE = ROOT.parent / "shared" / "testweb" / "webkb.warc.gz"
SETTINGS = {
    "A defaults": ["--strategy-param", "target=en", "--strategy-param", "prior_pages=0"],  # the defaults before
    "B measured kinds": ["--strategy-param", "target=en", "--strategy-param", "prior_pages=2",
                         "--strategy-param", "hub_weight=1", "--strategy-param", "probe=0.3",
                         "--strategy-param", "explore=fixed"],
}  # fmt: skip


def cpu_of(options: list[str], pages: int, seeds: list[str]) -> float:
    """CPU seconds (user + system) of one ``focuscrawl simulate``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "focuscrawl", "simulate", "--archive", str(ARCHIVE), "--seeds", *seeds,
             "--out", str(Path(tmp) / "run"), "--max-pages", str(pages), "--delay", "0", "-q",
             "--strategy", "language", *options],
            check=True, env=env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def on_page_seconds(options: list[str], pages: list[Any]) -> float:
    """CPU seconds of one ``language`` strategy's ``on_page`` over ``pages``."""
    from focuscrawl.frontier.memory import MemoryFrontier
    from focuscrawl.strategies.language import LanguageStrategy
    from focuscrawl.strategies.view import FrontierView
    from focuscrawl.types import QueuedURL
    from focuscrawl.urls import host_of

    params = dict(option.split("=", 1) for option in options if "=" in option)
    strategy = LanguageStrategy(None, **params)
    store = MemoryFrontier()
    store.ensure_columns(("relevance", *strategy.columns))
    strategy.attach(FrontierView(store), random.Random(0))
    started = time.process_time()
    for page in pages:
        strategy.on_page(page, None, QueuedURL(page.url, 1.0, 0, host_of(page.url)))
    return time.process_time() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--pages", type=int, default=2000)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from focuscrawl.demo import WEBKB_SEEDS

    seeds = list(WEBKB_SEEDS)
    compileall.compile_dir(ROOT / "focuscrawl", quiet=1)
    per_page: dict[str, list[float]] = {label: [] for label in SETTINGS}
    labels = list(SETTINGS)
    for round_ in range(args.rounds):
        for label in labels if round_ % 2 == 0 else labels[::-1]:
            start = cpu_of(SETTINGS[label], 1, seeds)
            whole = cpu_of(SETTINGS[label], args.pages, seeds)
            per_page[label].append((whole - start) / args.pages)
            print(f"round {round_ + 1} {label}: {1000 * per_page[label][-1]:.3f} ms/URL", flush=True)
    a, b = (statistics.median(per_page[label]) for label in labels)
    ratios = [y / x for x, y in zip(*per_page.values(), strict=True)]
    print(f"\nWebKB, {args.pages} URLs, medians of {args.rounds} rounds: A {1000 * a:.3f} ms/URL, "
          f"B {1000 * b:.3f} ms/URL, B / A {b / a:.3f} (by round {min(ratios):.3f}-{max(ratios):.3f})")  # fmt: skip
    from focuscrawl.parse.html import page_from_bytes
    from focuscrawl.replay.archive import iter_responses

    pages = []
    for response in iter_responses(ARCHIVE):
        if response.status == 200 and "html" in response.content_type:
            pages.append(page_from_bytes(response.url, response.body, response.content_type))
            if len(pages) == args.pages:
                break
    extra: list[float] = []
    for round_ in range(args.rounds):
        seconds = {label: on_page_seconds(SETTINGS[label], pages) for label in (labels if round_ % 2 == 0 else labels[::-1])}
        extra.append((seconds[labels[1]] - seconds[labels[0]]) / len(pages))
    added = statistics.median(extra)
    print(f"same {len(pages)} pages in-process: on_page B - A {1000 * added:.3f} ms/page (median of {args.rounds}), "
          f"{added / a:.1%} of A's crawl CPU per URL")  # fmt: skip


if __name__ == "__main__":
    main()
