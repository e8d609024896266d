"""Quality and speed of the P3 cosine model on WebKB: course pages vs. every other page.

GenerateTerms (Algorithm 3) takes its terms from half of the course pages; the
other half and all non-course pages are scored. idf is 1 for all terms or
counted over the whole archive (the thesis' reference collection).

    python benchmarks/bench_cosine.py [--top-n 20 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from focuscrawl.evaluation.metrics import auc, binary_scores
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.examples import iter_archive_pages
from focuscrawl.relevance.terms import compute_idf, generate_terms, page_tokens
from focuscrawl.replay.archive import load_labels

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top-n", type=int, nargs="+", default=[20, 40])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    labels = load_labels(TESTWEB / "webkb.labels.jsonl")
    t0 = time.perf_counter()
    pages = {p.url: p for p in iter_archive_pages(TESTWEB / "webkb.warc.gz")}
    tokens = {u: page_tokens(p) for u, p in pages.items()}
    print(f"{len(pages)} pages read and normalised in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    idf = compute_idf(tokens.values(), max_n=3, min_df=2)
    print(f"idf over the archive (n-grams <= 3, min df 2) in {time.perf_counter() - t0:.1f} s")
    course = sorted(u for u in pages if labels[u]["type"] == "course")
    other = sorted(u for u in pages if labels[u]["type"] != "course")
    random.Random(args.seed).shuffle(course)
    train, test_pos = course[: len(course) // 2], course[len(course) // 2 :]
    docs = [tokens[u] for u in train]
    print(f"terms from {len(train)} course pages; scored: {len(test_pos)} course vs {len(other)} other")
    print(f"{'terms':>6} {'count':>5} {'idf':>7} {'AUC':>6} {'P@100':>6} {'P':>5} {'R':>5} {'F1':>5} {'pages/s':>8}")
    for n in args.top_n:
        for count in ("freq", "pages"):
            genre, content = generate_terms(docs, docs, n, n, count=count)
            for idf_name, table in (("1", None), ("archive", idf)):
                model = CosineModel(genre, content, idf=table)
                start = time.perf_counter()
                scores = [model.score(pages[u]) for u in [*test_pos, *other]]
                rate = len(scores) / (time.perf_counter() - start)
                truth = [True] * len(test_pos) + [False] * len(other)
                ranked = sorted(zip(scores, truth, strict=True), key=lambda x: -x[0])
                p100 = sum(t for _, t in ranked[:100]) / 100
                s = binary_scores([x >= model.threshold for x in scores], truth)
                print(
                    f"{n:>3}+{n:<2} {count:>5} {idf_name:>7} {auc(scores, truth):6.3f} {p100:6.2f} "
                    f"{s.precision:5.2f} {s.recall:5.2f} {s.f1:5.2f} {rate:8.0f}"
                )


if __name__ == "__main__":
    main()
