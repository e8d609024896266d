"""Quality and speed of the P1/P3 text classifiers at the real class ratio.

Trains each algorithm on 75 positive / 150 negative pages drawn with a fixed seed
(P1's training-set size) and judges EVERY other labelled page of the archive,
so that the test set has the collection's own class ratio (WebKB course: 853 of
7,988 held-out pages; a Wikispeedia category 1–11 %). Two decisions per
algorithm: the fixed threshold 0.5 (``calibration="none"``, the old default)
and the default one: probabilities shifted to the prior (eq. C1) and the
threshold chosen for F1 by 5-fold cross-validation on the 225 training pages
(:mod:`focuscrawl.relevance.calibration`). The prior is the share of positive
pages among all labelled pages (what ``model train`` uses by default), or
``--prior``. Prints a Markdown table.

    python benchmarks/bench_classifier.py                       # WebKB type=course
    python benchmarks/bench_classifier.py --archive ../shared/testweb/wikispeedia.warc.gz \\
        --labels ../shared/testweb/wikispeedia.labels.jsonl --positive categories^=subject.Music

(with ``PYTHONPATH=.`` from the repository). "pages/s" is batch scoring with the
word-stem cache warm.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from focuscrawl.metrics import auc, binary_scores
from focuscrawl.relevance.classifier import ALGORITHMS, ClassifierModel
from focuscrawl.relevance.training import load_texts, split_labels
from focuscrawl.replay.archive import load_labels

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=str(TESTWEB / "webkb.warc.gz"))
    parser.add_argument("--labels", default=str(TESTWEB / "webkb.labels.jsonl"))
    parser.add_argument("--positive", default="type=course")
    parser.add_argument("--prior", type=float, default=None, help="default: the labelled share")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    labels = load_labels(args.labels)
    split = split_labels(labels, [args.positive], seed=args.seed)
    texts = load_texts(
        args.archive, [*split.train_pos, *split.train_neg, *split.test_pos, *split.test_neg]
    )
    train_pos = [texts[u] for u in split.train_pos if u in texts]
    train_neg = [texts[u] for u in split.train_neg if u in texts]
    pos = [texts[u] for u in split.test_pos if u in texts]
    neg = [texts[u] for u in split.test_neg if u in texts]
    n_pos = len(split.train_pos) + len(split.test_pos)
    prior = args.prior or n_pos / (n_pos + len(split.train_neg) + len(split.test_neg))
    truth = [True] * len(pos) + [False] * len(neg)
    print(
        f"{Path(args.archive).name} {args.positive}: train {len(train_pos)} pos / "
        f"{len(train_neg)} neg, held out {len(pos)} pos / {len(neg)} neg "
        f"(share {len(pos) / len(truth):.4f}, always-no accuracy {len(neg) / len(truth):.4f}), "
        f"prior {prior:.4f}, seed {args.seed}\n"
    )
    print(
        "| algorithm | decision | threshold | accuracy | precision | recall | F1 | AUC | pages/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for algorithm in args.algorithms:
        for calibration in ("none", "f1"):
            model = ClassifierModel(
                algorithm=algorithm, seed=args.seed, calibration=calibration,
                prior=None if calibration == "none" else prior,
            )  # fmt: skip
            model.train(train_pos, train_neg)
            start = time.perf_counter()
            scores = model.score_texts([*pos, *neg])
            rate = len(truth) / (time.perf_counter() - start)
            q = binary_scores(model.predict_texts([*pos, *neg]), truth)
            what = "0.5" if calibration == "none" else f"CV-F1 at prior {prior:.3f}"
            print(
                f"| {algorithm} | {what} | {model.threshold:.3f} | {q.accuracy:.3f} | "
                f"{q.precision:.3f} | {q.recall:.3f} | {q.f1:.3f} | {auc(scores, truth):.3f} | "
                f"{rate:.0f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
