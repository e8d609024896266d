"""P0's comment detector on comments-dev, judged on sites the keywords were not learned on.

Two site-disjoint measurements (sites: :func:`focuscrawl.relevance.comment_sites.site_of`):

* **split**: the sites are cut in two halves by a fixed hash (``split_sites``);
  keywords are learned on the learn half, every row is measured on the other;
* **cv**: site-grouped 5-fold cross-validation over all of comments-dev
  (pooled counts); a tuned learner tunes (min_gain, min_sites) by an inner
  site-grouped CV inside each training part only.

Rows: the always-no baseline, the 25 default keywords, the greedy learner as it
was (min_gain 3, no site minimum), the default learner (settings tuned by
site-grouped CV) and the learned detector (``detector=learned``: a logistic
regression over :mod:`focuscrawl.relevance.comment_features`, C and threshold by
site-grouped CV inside the learning part only). Every row is at the real class
ratio. Then the detectors' CPU per page (pages already parsed, as in a crawl).
Prints Markdown tables.

    python benchmarks/bench_comments.py [--top-k 25] [--use-ids] [--write-detector PATH]

``--write-detector`` saves the detector learned on the learn half (the shipped
one is ``focuscrawl/data/comment_detector.json``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from focuscrawl.metrics import BinaryScores
from focuscrawl.parse.html import parse_html
from focuscrawl.relevance.comment_keywords import fold_name
from focuscrawl.relevance.comment_learning import load_labelled_names
from focuscrawl.relevance.comment_sites import (
    NameIndex,
    cross_validate,
    learn_transferable,
    split_sites,
)
from focuscrawl.relevance.comment_training import (
    cross_validate as cross_validate_detector,
)
from focuscrawl.relevance.comment_training import evaluate, features_of, learn_detector, load_pages
from focuscrawl.relevance.comments import DEFAULT_KEYWORDS, CommentModel
from focuscrawl.types import Page

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def _row(title: str, s: BinaryScores) -> str:
    return f"| {title} | {s.accuracy:.3f} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=str(TESTWEB / "comments-dev.warc.gz"))
    parser.add_argument("--labels", default=str(TESTWEB / "comments-dev.labels.jsonl"))
    parser.add_argument("--top-k", type=int, default=25)
    parser.add_argument("--use-ids", action="store_true", help="class and id names")
    parser.add_argument("--write-detector", type=Path, help="save the learned detector here")
    args = parser.parse_args()
    pages = load_labelled_names(args.archive, args.labels)
    index = NameIndex(pages, use_ids=args.use_ids)
    default = [fold_name(k) for k in DEFAULT_KEYWORDS]
    chosen: list[str] = []

    def tuned(mask: int) -> Sequence[str]:
        words, params, _ = learn_transferable(index, mask, top_k=args.top_k)
        chosen.append(f"{params}: {', '.join(k.keyword for k in words)}")
        return [k.keyword for k in words]

    learners: dict[str, Callable[[int], Sequence[str]]] = {
        "default 25 keywords": lambda mask: default,
        "greedy, min_gain 3, any sites (old)": lambda mask: [
            k.keyword for k in index.learn(mask, top_k=args.top_k, min_sites=1, min_gain=3)
        ],
        "greedy, settings by site-grouped CV (default)": tuned,
    }
    learn = index.mask(lambda p: split_sites(p.url) == "learn")
    report = index.all_mask & ~learn
    n_sites = len(set(index.site))
    labelled = load_pages(args.archive, args.labels)
    data = features_of(labelled)
    is_learn = [split_sites(u) == "learn" for u in data.urls]
    detector, tuned_cv = learn_detector(
        data.subset(i for i, x in enumerate(is_learn) if x), "comments-dev, learn half of the sites"
    )
    if args.write_detector:
        detector.save(args.write_detector)
    learned_rows = {
        "split": evaluate(detector, data.subset(i for i, x in enumerate(is_learn) if not x)),
        "cv": cross_validate_detector(data),
    }
    for title, subset in (("split: learn half of the sites -> other half", report), ("cv", 0)):
        print(f"\n{title}" + (f" ({n_sites} sites)" if not subset else ""))
        print("| keyword list | accuracy | precision | recall | F1 |\n|---|---|---|---|---|")
        base = subset if subset else index.all_mask
        neg = (base & ~index.pos_mask).bit_count()
        print(_row("always no", BinaryScores(0, 0, neg, base.bit_count() - neg)))
        for name, learner in learners.items():
            if subset:
                s = index.evaluate(list(learner(learn)), report)
            else:
                s = cross_validate(index, learner)
            print(_row(name, s))
        learned = learned_rows["split" if subset else "cv"]
        print(_row("learned detector (features, logistic regression)", learned))
    print(f"\n{index.all_mask.bit_count()} pages; lists chosen by the default learner:")
    print("\n".join(f"  {c}" for c in chosen))
    print(f"learned detector: {detector.trained_on}; learn-half site-grouped CV accuracy {tuned_cv.accuracy:.3f}")
    pages = [page for page, _ in labelled]
    print("\n| detector | CPU per page (ms) |\n|---|---|")
    for name in ("keywords", "learned"):
        print(f"| {name} | {_cpu_ms(CommentModel(detector=name).score, pages):.2f} |")
    parse_ms = _cpu_ms(lambda page: parse_html(page.url, page.html), pages, rounds=1)
    print(f"| (for scale: parse_html of the decoded page) | {parse_ms:.2f} |")
    return 0


def _cpu_ms(work: Callable[[Page], object], pages: Sequence[Page], rounds: int = 3) -> float:
    """Best of ``rounds`` passes: process CPU per page of ``work`` (pages already parsed)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for page in pages:
            work(page)
        best = min(best, time.process_time() - start)
    return 1000 * best / len(pages)


if __name__ == "__main__":
    raise SystemExit(main())
