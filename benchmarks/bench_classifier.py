"""Quality and speed of the P1/P3 text classifiers on WebKB (course vs. every other page).

Trains each algorithm on 75 positive / 150 negative pages drawn with a fixed seed
(P1's training-set size) and tests on held-out pages; prints a Markdown table.

    python benchmarks/bench_classifier.py [--test-pos 300 --test-neg 600] [--seed 0]

(with the package installed, or ``PYTHONPATH=.`` from the repository). "pages/s"
is batch scoring with the word-stem cache warm.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from focuscrawl.relevance.classifier import ALGORITHMS, ClassifierModel
from focuscrawl.relevance.training import evaluate, load_texts, split_labels
from focuscrawl.replay.archive import load_labels

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=str(TESTWEB / "webkb.warc.gz"))
    parser.add_argument("--labels", default=str(TESTWEB / "webkb.labels.jsonl"))
    parser.add_argument("--positive", default="type=course")
    parser.add_argument("--test-pos", type=int, default=300, help="held-out positives (0 = all)")
    parser.add_argument("--test-neg", type=int, default=600, help="held-out negatives (0 = all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    split = split_labels(load_labels(args.labels), [args.positive], seed=args.seed)
    rng = random.Random(args.seed)
    test_pos = split.test_pos if args.test_pos <= 0 else rng.sample(split.test_pos, args.test_pos)
    test_neg = split.test_neg if args.test_neg <= 0 else rng.sample(split.test_neg, args.test_neg)
    texts = load_texts(args.archive, [*split.train_pos, *split.train_neg, *test_pos, *test_neg])
    train_pos = [texts[u] for u in split.train_pos if u in texts]
    train_neg = [texts[u] for u in split.train_neg if u in texts]
    pos = [texts[u] for u in test_pos if u in texts]
    neg = [texts[u] for u in test_neg if u in texts]
    print(
        f"WebKB {args.positive}: train {len(train_pos)} pos / {len(train_neg)} neg, "
        f"held-out {len(pos)} pos / {len(neg)} neg, seed {args.seed}\n"
    )
    print("| algorithm | accuracy | precision | recall | train s | pages/s scored |")
    print("|---|---|---|---|---|---|")
    for algorithm in ALGORITHMS:
        model = ClassifierModel(algorithm=algorithm, seed=args.seed)
        start = time.perf_counter()
        model.train(train_pos, train_neg)
        train_s = time.perf_counter() - start
        quality = evaluate(model.predict_texts, pos, neg)  # also fills the stem cache
        start = time.perf_counter()
        model.score_texts([*pos, *neg])
        rate = (len(pos) + len(neg)) / (time.perf_counter() - start)
        print(
            f"| {algorithm} | {quality.accuracy:.3f} | {quality.precision:.3f} | "
            f"{quality.recall:.3f} | {train_s:.2f} | {rate:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
