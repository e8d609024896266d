"""What learning costs: CPU per page of the online link model (issue 28) on the generated web.

    python benchmarks/bench_learning.py                    # 1,000 and 50,000 pages
    python benchmarks/bench_learning.py --pages 1000 5000
    python benchmarks/bench_learning.py --rates 0.05 0.0125 0.2 0   # a prequential choice
    python benchmarks/bench_learning.py --prior-floor 0.5   # the correction bounded
    python benchmarks/bench_learning.py --hub-reward 0.25   # a page's value as a source
    python benchmarks/bench_learning.py --cross-words 2 --page-model DIR   # own words crossed
    python benchmarks/bench_learning.py --cross-words 2 --page-model DIR --uncached   # no cache

The pages of the project's generated web (200,000 pages on 2,000 hosts, seed 1)
are parsed once, in breadth-first order from the first host, outside the timing;
then the learner of ``focuscrawl.strategies.link_learner`` sees them one by one with a
relevance drawn from the page's section (a stand-in for a page model) and a
random prior for each link (a stand-in for eq. 9: the page model's own cost is not
the learner's), at its defaults (an update every 25 pages, a rescore of the 2,000
latest queued URLs), and the CPU time of each of its steps is summed:

* observe: the page's examples, its links' tokens, hashed columns and scores
  (prior + the online model's weighted correction);
* update: ``partial_fit`` at the update points;
* rescore: the new scores of the latest queued URLs after an update;
* state: the resume state as JSON at every commit (every 50 pages, the default);
* match: with ``--cross-words``, the page model's scores of the links' own words
  (one batch per page: a saved classifier given by ``--page-model``, such as the
  ``model-svm-linear`` directory an experiment trains for a topic, else a keyword
  model), the learning strategy's extra cost before ``observe``; each distinct
  own-words string scored once (``OwnWordScores``, as the strategy does), or with
  ``--uncached`` all of each page's strings every page (before that cache).

Printed: ms of CPU per page for each step and in all, over the first 1,000 pages
and over the last 1,000 of each run, so the cost at scale shows; and the size of
the resume state at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import zlib
from collections import deque
from pathlib import Path
from typing import Any

from focuscrawl.parse.html import parse_html
from focuscrawl.relevance.classifier import ClassifierModel
from focuscrawl.relevance.keyword import KeywordModel
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.strategies.link_learner import LearningParams, OnlineLinkLearner
from focuscrawl.strategies.link_words import OwnWordScores, match_marks
from focuscrawl.types import QueuedURL, URLState


class _AllQueued:
    """A frontier view where every URL the learner asks about is queued."""

    def state(self, url: str) -> URLState:
        return URLState.QUEUED


def pages_in_bfs(web: GeneratedWeb, count: int) -> list[tuple[str, str | None, int, str]]:
    """(url, parent, depth, html) of ``count`` pages in breadth-first order."""
    seen, out = {0}, []
    todo: deque[tuple[int, str | None, int]] = deque([(0, None, 0)])
    while todo and len(out) < count:
        page, parent, depth = todo.popleft()
        if web.status_of(page) != 200:
            continue
        url = web.url_of(page)
        out.append((url, parent, depth, web.html_of(page).decode("utf-8")))
        for child in web.links_of(page):
            if child not in seen:
                seen.add(child)
                todo.append((child, url, depth + 1))
    return out


def run(
    web: GeneratedWeb, count: int, rates: tuple[float, ...] = (), prior_floor: float = 0.0,
    hub_reward: float = 0.0, cross_words: int = 0, page_model: Any = None, uncached: bool = False,
) -> None:
    pages = pages_in_bfs(web, count)
    parsed = [(parse_html(url, html), parent, depth) for url, parent, depth, html in pages]
    params = LearningParams(rates=rates, prior_floor=prior_floor, hub_reward=hub_reward, cross_words=cross_words)
    learner = OnlineLinkLearner(params, seed=1)
    view = _AllQueued()
    own_words = OwnWordScores(page_model)
    rng = random.Random(1)
    steps = ("match", "observe", "update", "rescore", "state")
    state_size = 0
    per_page: list[dict[str, float]] = []
    clock = time.process_time
    for page, parent, depth in parsed:
        spent = dict.fromkeys(steps, 0.0)
        # a stand-in judge: pages of some sections are the topic (about 1 in 8)
        section = page.url.split("/")[3] if page.url.count("/") > 3 else ""
        relevance = 1.0 if zlib.crc32(section.encode()) % 8 == 0 else rng.random() * 0.3
        queued = QueuedURL(page.url, 1.0, depth, "", parent)
        priors = [0.25 * relevance + 0.75 * rng.random() * 0.5 for _ in page.links]
        marks = None
        if cross_words > 0:
            t = clock()
            if uncached:
                marks = match_marks(page_model, page, cross_words)
            else:
                marks = own_words.marks(page, cross_words)
            spent["match"] = clock() - t
        t = clock()
        learner.observe(page, relevance, queued, priors, marks)
        spent["observe"] = clock() - t
        t = clock()
        updated = learner.tick()
        spent["update"] = clock() - t
        if updated:
            t = clock()
            learner.rescore(view, 2000)  # type: ignore[arg-type]
            spent["rescore"] = clock() - t
        if len(per_page) % 50 == 49:  # a commit
            t = clock()
            state_size = len(json.dumps(learner.state().to_json()))
            spent["state"] = clock() - t
        per_page.append(spent)
    for label, part in (
        ("first 1,000", per_page[:1000]),
        (f"last 1,000 of {len(per_page):,}", per_page[-1000:]),
    ):
        n = len(part)
        cells = "  ".join(f"{s} {1000 * sum(p[s] for p in part) / n:6.3f}" for s in steps)
        total = 1000 * sum(sum(p.values()) for p in part) / n
        print(f"  {label:<24} ms CPU per page: {cells}  all {total:6.3f}")
    print(f"  model: {learner.model.version} updates, {learner.model.examples:,} examples "
          f"({learner.model.positives:,} positive); resume state {state_size / 1000:.1f} KB")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--pages", type=int, nargs="+", default=[1000, 50000])
    ap.add_argument("--rates", type=float, nargs="*", default=[],
                    help="the learning strategy's rates (default: none, one model)")
    ap.add_argument("--prior-floor", type=float, default=0.0,
                    help="the learning strategy's prior_floor (default: 0)")
    ap.add_argument("--hub-reward", type=float, default=0.0,
                    help="the learning strategy's hub_reward (default: 0)")
    ap.add_argument("--cross-words", type=int, default=0,
                    help="the learning strategy's cross_words (default: 0)")
    ap.add_argument("--page-model", type=Path,
                    help="a saved classifier scoring the links' own words (default: a keyword model)")
    ap.add_argument("--uncached", action="store_true",
                    help="score every link's own words on every page (no OwnWordScores)")
    args = ap.parse_args(argv)
    page_model: Any = None
    if args.cross_words > 0:
        page_model = ClassifierModel.load(args.page_model) if args.page_model else KeywordModel(["news"])
    web = GeneratedWeb(200_000, 2_000, 1)
    for count in args.pages:
        print(f"\n== {count:,} pages of the generated web (BFS from {web.url_of(0)})", flush=True)
        run(web, count, tuple(args.rates), args.prior_floor, args.hub_reward, args.cross_words, page_model, args.uncached)
    return 0


if __name__ == "__main__":
    sys.exit(main())
