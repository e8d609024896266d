"""P0's comment detector on comments-dev: default vs learned keyword lists, held-out half.

comments-dev is split by a fixed hash of the URL (``split_half``) into a learn
half and a report half; keywords are learned on the learn half only, and every
row is measured on the report half. Prints a Markdown table.

    python benchmarks/bench_comments.py [--top-k 25] [--min-gain 3]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.relevance.comments import (
    DEFAULT_KEYWORDS,
    CommentModel,
    evaluate_keywords,
    learn_keywords,
    load_labelled_names,
    split_half,
)

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=str(TESTWEB / "comments-dev.warc.gz"))
    parser.add_argument("--labels", default=str(TESTWEB / "comments-dev.labels.jsonl"))
    parser.add_argument("--top-k", type=int, default=25)
    parser.add_argument("--min-support", type=int, default=3)
    parser.add_argument("--min-gain", type=int, default=3)
    args = parser.parse_args()
    pages = load_labelled_names(args.archive, args.labels)
    learn = [p for p in pages if split_half(p.url) == "learn"]
    report = [p for p in pages if split_half(p.url) == "report"]
    n_pos = sum(p.label for p in report)
    print(
        f"comments-dev: {len(pages)} labelled pages; learn {len(learn)} "
        f"({sum(p.label for p in learn)} comment), report {len(report)} ({n_pos} comment)\n"
    )
    print("| keyword list | names | accuracy | precision | recall | F1 |")
    print("|---|---|---|---|---|---|")
    base = (len(report) - n_pos) / len(report)
    print(f"| majority (non-comment) | - | {base:.3f} | - | 0.000 | 0.000 |")
    learned_lists: dict[bool, list[str]] = {}
    for use_ids in (False, True):
        names = "class+id" if use_ids else "class"
        rows = [("default", list(DEFAULT_KEYWORDS))]
        learned = learn_keywords(
            learn, top_k=args.top_k, use_ids=use_ids,
            min_support=args.min_support, min_gain=args.min_gain,
        )  # fmt: skip
        learned_lists[use_ids] = [k.keyword for k in learned]
        rows.append((f"learned ({len(learned)})", learned_lists[use_ids]))
        for title, keywords in rows:
            s = evaluate_keywords(CommentModel(keywords, use_ids=use_ids), report)
            print(
                f"| {title} | {names} | {s.accuracy:.3f} | {s.precision:.3f} "
                f"| {s.recall:.3f} | {s.f1:.3f} |"
            )
    for use_ids, keywords in learned_lists.items():
        print(f"\nlearned ({'class+id' if use_ids else 'class'}): {', '.join(keywords)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
