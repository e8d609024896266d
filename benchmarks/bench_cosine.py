"""Quality and speed of the P3 cosine model on WebKB: course pages vs. every other page.

Pages are split at random in two halves (fixed seed), both with the real
class ratio (course 11 %). The *train* half gives GenerateTerms (Algorithm 3)
its examples (its course pages serve as genre and relevant examples, WebKB
having no separate subject pages) and the threshold chosen there for F1
(:func:`focuscrawl.relevance.calibration.choose_threshold` on the train
half's scores: course pages vs. the rest); the *test* half is scored.
idf is counted over the whole archive without labels (the thesis's reference
collection, 4.1.1) or set to 1.

Rows: the thesis's settings (terms ranked by total frequency, threshold
0.47, GW = CW = 5), per-page counting, and pages x idf ranking. Columns: AUC,
F1 at 0.47, the threshold chosen on the train half and the test F1 there, and
the best test F1 over all thresholds (what the thesis's tables report: an
upper bound, not an honest figure). ``--curve`` prints F1 vs. threshold.

    python benchmarks/bench_cosine.py [--top-n 20 40] [--seed 0] [--curve]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from focuscrawl.metrics import auc, binary_scores
from focuscrawl.relevance.calibration import choose_threshold
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.examples import iter_archive_pages
from focuscrawl.relevance.terms import COUNTS, compute_idf, generate_terms, page_tokens
from focuscrawl.replay.archive import load_labels

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top-n", type=int, nargs="+", default=[20, 40])
    parser.add_argument("--counts", nargs="+", default=list(COUNTS), choices=COUNTS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--curve", action="store_true", help="F1 vs. threshold on the test half")
    args = parser.parse_args()
    labels = load_labels(TESTWEB / "webkb.labels.jsonl")
    t0 = time.perf_counter()
    pages = {p.url: p for p in iter_archive_pages(TESTWEB / "webkb.warc.gz")}
    tokens = {u: page_tokens(p) for u, p in pages.items()}
    print(f"{len(pages)} pages read and normalised in {time.perf_counter() - t0:.1f} s")
    idf = compute_idf(tokens.values(), max_n=3, min_df=2)
    urls = sorted(pages)
    random.Random(args.seed).shuffle(urls)
    train, test = urls[: len(urls) // 2], urls[len(urls) // 2 :]
    is_course = {u: labels[u]["type"] == "course" for u in urls}
    examples = [tokens[u] for u in train if is_course[u]]
    truth = [is_course[u] for u in test]
    prior = sum(is_course[u] for u in train) / len(train)
    print(
        f"train half {len(train)} pages ({len(examples)} course: the examples), test half "
        f"{len(test)} ({sum(truth)} course, always-no accuracy {1 - sum(truth) / len(truth):.3f})"
    )
    print(
        "\n| terms | ranking | idf | AUC | F1 at 0.47 | threshold (train) | P | R | F1 "
        "| best test F1 (threshold) | pages/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in args.top_n:
        for count in args.counts:
            genre, content = generate_terms(examples, examples, n, n, count=count, idf=idf)
            for idf_name, table in (("1", None), ("archive", idf)):
                model = CosineModel(genre, content, idf=table)
                on_train = [model.score(pages[u]) for u in train]
                pos = [s for s, u in zip(on_train, train, strict=True) if is_course[u]]
                neg = [s for s, u in zip(on_train, train, strict=True) if not is_course[u]]
                chosen = choose_threshold(pos, neg, prior).threshold
                start = time.perf_counter()
                scores = [model.score(pages[u]) for u in test]
                rate = len(scores) / (time.perf_counter() - start)
                fixed = binary_scores([x >= model.threshold for x in scores], truth)
                tuned = binary_scores([x >= chosen for x in scores], truth)
                curve = [
                    (binary_scores([x >= t / 100 for x in scores], truth).f1, t / 100)
                    for t in range(1, 100)
                ]
                best_f1, best_t = max(curve)
                print(
                    f"| {n}+{n} | {count} | {idf_name} | {auc(scores, truth):.3f} | "
                    f"{fixed.f1:.3f} | {chosen:.3f} | {tuned.precision:.3f} | "
                    f"{tuned.recall:.3f} | {tuned.f1:.3f} | {best_f1:.3f} ({best_t:.2f}) | "
                    f"{rate:.0f} |"
                )
                if args.curve:
                    print(
                        "  F1 vs threshold: "
                        + " ".join(f"{t:.2f}:{f:.2f}" for f, t in curve[9::10])
                    )
            print(f"  {count} genre terms: {', '.join(genre[:12])}")


if __name__ == "__main__":
    main()
