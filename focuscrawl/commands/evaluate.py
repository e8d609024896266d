"""``focuscrawl eval RUN_DIR ...`` and ``focuscrawl experiment EXP.toml``: a run's metrics
against an independent judge, and strategies x topics x repetitions; their arguments
and output (the work is :mod:`focuscrawl.evaluation`'s)."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from focuscrawl.commands import Command
from focuscrawl.evaluation.run import LabelJudge, compare_runs, evaluate_run, model_judge, read_run
from focuscrawl.exceptions import ConfigError
from focuscrawl.replay.archive import load_labels
from focuscrawl.urls import read_url_lines


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path)
    p.add_argument("--labels", type=Path, help="labels JSONL (the independent judge)")
    p.add_argument("--relevant", action="append", default=[], metavar="SELECTOR",
                   help="label selector of relevant pages, e.g. type=course or categories~=Mammals "
                        "(repeat: all must hold)")  # fmt: skip
    p.add_argument("--judge-model", type=Path, help="a saved model judging the crawled pages instead")
    p.add_argument("--targets", type=Path, help="file of target URLs (target recall)")
    p.add_argument("--answer", action="store_true",
                   help="P3 scores: the crawler's relevant pages against every labelled relevant page")
    p.add_argument("--thresholds", default="", help="comma-separated thresholds for F1 vs. threshold")
    p.add_argument("--skip-unlabelled", action="store_true", help="leave unlabelled pages out of rates")
    p.add_argument("--lang-field", help="label field holding the page language (default: the crawler's)")
    p.add_argument("--compare", type=Path, help="another run: page and domain overlap")
    p.add_argument("--json", action="store_true", help="all metrics as JSON")


def run_eval(args: argparse.Namespace) -> int:
    run = read_run(args.run_dir)
    labels: LabelJudge | None = None
    if args.labels is not None:
        labels = LabelJudge.from_file(args.labels, args.relevant)
    if args.judge_model is not None:
        judge = model_judge(args.judge_model, args.run_dir)
    elif labels is not None:
        judge = labels
    else:
        raise ConfigError("give --labels FILE --relevant SELECTOR, or --judge-model DIR")
    targets = read_url_lines(args.targets) if args.targets else None
    thresholds = parse_thresholds(args.thresholds)
    lang_of = None
    if args.lang_field and labels is not None:
        field, lab = args.lang_field, labels

        def lang_of(row: Mapping[str, Any]) -> str | None:
            value = lab.field_of(str(row.get("final_url") or row["url"]), field)
            return str(value) if value else None

    result = evaluate_run(
        run, judge, targets=targets,
        answer=labels.answer_set() if (args.answer and labels is not None) else None,
        web_pages=len(labels.labels) if labels is not None else 0,
        skip_unlabelled=args.skip_unlabelled, lang_of=lang_of, thresholds=thresholds,
    )  # fmt: skip
    if args.compare is not None:
        result["overlap"] = compare_runs(run, read_run(args.compare))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(summary_text(result))
    return 0


def parse_thresholds(text: str) -> list[float]:
    """``"0.3,0.47"`` -> ``[0.3, 0.47]``; anything but numbers from 0 to 1 is a ConfigError.

    >>> parse_thresholds("0.3, 0.47,"), parse_thresholds("")
    ([0.3, 0.47], [])
    """
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        try:
            value = float(item)
        except ValueError:
            value = math.nan
        if not 0.0 <= value <= 1.0:
            raise ConfigError(f"--thresholds: {item!r} is not a number from 0 to 1 (e.g. 0.3,0.47,0.6)")
        out.append(value)
    return out


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or math.isinf(x) else f"{x:.3f}"


def summary_text(r: dict[str, Any]) -> str:
    """A few readable lines of an :func:`evaluate_run` result."""
    lines = [
        f"{r['run']}: {r['strategy']}, {r['fetched']} URLs fetched, {r['pages']} pages, "
        f"{r['relevant']} relevant ({r['unlabelled']} unlabelled, {r['recrawls']} re-crawls)",
        f"harvest rate {_fmt(r['harvest_rate'])}; visited per relevant {_fmt(r['visited_per_relevant'])}; "
        f"{r['domains']} domains; external share {_fmt(r['external']['share'])}, "
        f"harvest on external {_fmt(r['external']['harvest_rate'])}",
        "harvest by layer: " + ", ".join(f"{k}: {_fmt(v)} ({r['pages_by_layer'][k]})"
                                         for k, v in r["harvest_by_layer"].items()),
    ]  # fmt: skip
    if r.get("recrawls_changed") is not None:
        lines.append(f"re-visits: {_fmt(r['recrawls_changed'])} of them found a change, "
                     f"{_fmt(r['recrawls_not_modified'])} were answered 304")  # fmt: skip
    if "target_recall" in r:
        lines.append(f"target recall {_fmt(r['target_recall'])} of {r['targets']} targets")
    if "answer" in r:
        a = r["answer"]
        lines.append(f"answer set ({a['size']}): precision {_fmt(a['precision'])}, "
                     f"recall {_fmt(a['recall'])}, F1 {_fmt(a['f1'])}")  # fmt: skip
    u = r.get("unique", {})
    if u.get("duplicates"):
        line = (f"duplicates counted once: {u['pages']} pages ({u['duplicates']} duplicates left out), "
                f"{u['relevant']} relevant, harvest rate {_fmt(u['harvest_rate'])}")  # fmt: skip
        if "answer" in u:
            line += f"; answer set precision {_fmt(u['answer']['precision'])}, F1 {_fmt(u['answer']['f1'])}"
        lines.append(line)
    for row in r.get("f1_by_threshold", []):
        lines.append(f"  threshold {row['threshold']:.2f}: P {_fmt(row['precision'])} "
                     f"R {_fmt(row['recall'])} F1 {_fmt(row['f1'])}")  # fmt: skip
    top = list(r["languages"].items())[:6]
    lines.append("languages: " + ", ".join(f"{k} {v:.1%}" for k, v in top))
    if "overlap" in r:
        o = r["overlap"]
        lines.append(f"overlap: pages {o['pages']['both']} (jaccard {_fmt(o['pages']['jaccard'])}), "
                     f"domains {o['domains']['both']} (jaccard {_fmt(o['domains']['jaccard'])})")  # fmt: skip
    return "\n".join(lines)



def add_experiment_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("experiment", type=Path, help="experiment TOML (see experiments/)")
    p.add_argument("--out", type=Path, help="output directory (default: experiments-out/NAME)")
    p.add_argument("--report-only", action="store_true", help="evaluate and report the crawls done")


def check_hand_topics(exp: Any) -> None:
    """The ``[[topic]]`` selectors against the label file, before any crawl: a typo
    (``lang_detectd=ko``) would judge every page irrelevant and report zeros with a t-test."""
    web_labels = exp.web.get("labels")
    path = exp.labels or (exp.resolve(str(web_labels)) if web_labels else None)
    if path is None or not exp.hand_topics:
        return
    labels = load_labels(path)
    for topic in exp.hand_topics:
        try:
            LabelJudge(labels, topic.relevant, Path(path).name)
        except ConfigError as exc:
            raise ConfigError(f"{exp.path.name} [[topic]] {topic.name!r}: {exc}") from None


def run_experiment(args: argparse.Namespace) -> int:
    from focuscrawl.evaluation import experiment, experiment_file  # scikit-learn: only when run

    try:
        exp = experiment_file.load_experiment(args.experiment, out=args.out)
    except UnicodeDecodeError:
        raise ConfigError(f"{args.experiment}: not an experiment file (not UTF-8 text)") from None
    check_hand_topics(exp)
    print(experiment.run_experiment_file(exp, progress=args.verbose >= 0, report_only=args.report_only))
    return 0


EVAL = Command(
    "eval", "metrics of a run against an independent judge (labels)", add_eval_arguments, run_eval
)
EXPERIMENT = Command(
    "experiment", "strategies x topics x repetitions -> results + report", add_experiment_arguments, run_experiment
)
