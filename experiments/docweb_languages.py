"""Language crawls of docweb-dev from its English portal: the share of each language's pages.

Issue 38 item 5: Japanese, Korean and Chinese shares at 2,000 (and 10,000) URLs for
breadth-first, the language strategy (P4's rule with its soft fallback; Tamura's soft
focus), best-first with the language model, the learning crawler and the oracle as the
ceiling, judged by the labels (``target``: measured script share, so an untranslated
page in a ``ja`` directory is "other"), never by the crawler's model. The share is the
one of ``docweb-dev.md``: labelled target pages / HTML pages fetched (status 200).

    python experiments/docweb_languages.py [--budgets 2000 10000] [--langs ja ko zh] [--out DIR]

Every crawl is a ``focuscrawl simulate`` (the ordered schedule: same settings, same
crawl), run one after another; the table is printed as Markdown at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTWEB = Path(os.environ.get("FOCUSCRAWL_TESTWEB") or ROOT.parent / "shared" / "testweb")
ARCHIVE = TESTWEB / "docweb-dev.warc.gz"
LABELS = TESTWEB / "docweb-dev.labels.jsonl"
SEED = "http://docs-hub.example/"


def configs(lang: str) -> dict[str, list[str]]:
    """Each crawl's label and its ``simulate`` options."""
    model = ["--model", "language", "--model-param", f"target={lang}"]
    target = ["--strategy-param", f"target={lang}"]
    return {
        "bfs": ["--strategy", "bfs"],
        "language (P4 rule + soft fallback, defaults)": ["--strategy", "language", *target],
        "language (P4 rule + soft fallback), patience 0.5": ["--strategy", "language", *target, "--patience", "0.5"],
        "language (P4 rule as published)": ["--strategy", "language", *target, "--strategy-param", "fallback=off"],
        "language soft, rule off (Tamura)": ["--strategy", "language", *target,
                                             "--strategy-param", "policy=soft", "--strategy-param", "rule=off"],
        "best-first + language model": ["--strategy", "best-first", *model],
        "learning + language model, patience 0.5": ["--strategy", "learning", *model, "--patience", "0.5"],
        "oracle (ceiling)": ["--strategy", "oracle", "--strategy-param", f"labels={LABELS}",
                             "--strategy-param", f"relevant=target={lang}"],
    }  # fmt: skip


def share(run: Path, lang: str, targets: dict[str, str]) -> tuple[float, int, int]:
    """(share of status-200 pages labelled ``lang``, those pages, status-200 pages)."""
    pages = [json.loads(line) for line in (run / "pages.jsonl").open(encoding="utf-8")]
    ok = [p for p in pages if p["status"] == 200]
    hits = sum(targets.get(p.get("final_url") or p["url"]) == lang for p in ok)
    return (hits / len(ok) if ok else 0.0), hits, len(ok)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[2000])
    parser.add_argument("--langs", nargs="+", default=["ja", "ko", "zh"])
    parser.add_argument("--only", nargs="*", default=[], help="labels to run (substrings)")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "docweb-languages")
    args = parser.parse_args()
    targets = {}
    for line in LABELS.open(encoding="utf-8"):
        row = json.loads(line)
        targets[row["url"]] = row["target"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows: list[tuple[str, str, int, float, int, int, float]] = []
    for budget in args.budgets:
        for lang in args.langs:
            for label, options in configs(lang).items():
                if args.only and not any(o in label for o in args.only):
                    continue
                run = args.out / f"{lang}-{budget}-{re.sub(r'[^a-z0-9]+', '-', label.lower()).strip('-')}"
                if not (run / "pages.jsonl").exists() or not (run / "run.json").exists():
                    subprocess.run(["rm", "-rf", str(run)], check=True)
                    started = time.monotonic()
                    subprocess.run(
                        [sys.executable, "-m", "focuscrawl", "simulate", "--archive", str(ARCHIVE),
                         "--seeds", SEED, "--out", str(run), "--max-pages", str(budget), "--delay", "0",
                         "-q", *options],
                        check=True, env=env, stdout=subprocess.DEVNULL,
                    )  # fmt: skip
                    seconds = time.monotonic() - started
                else:
                    seconds = float("nan")
                value, hits, ok = share(run, lang, targets)
                rows.append((lang, label, budget, value, hits, ok, seconds))
                print(f"{lang} {budget} {label}: share {value:.3f} ({hits}/{ok}) {seconds:.0f} s", flush=True)
    print("\n| language | crawl | URLs | share of HTML pages in the language (pages) |")
    print("|---|---|---|---|")
    for lang, label, budget, value, hits, ok, _ in rows:
        print(f"| {lang} | {label} | {budget:,} | {value:.3f} ({hits:,}/{ok:,}) |")


if __name__ == "__main__":
    main()
