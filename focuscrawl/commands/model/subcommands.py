"""``focuscrawl model ...``: the parser of the model commands, and those of any saved model.

* ``train NAME [model options] --out DIR`` — the model's trainer
  (:mod:`focuscrawl.commands.model.train`; a third party's model: ``--param KEY=VALUE``);
* ``score MODEL_DIR --archive A.warc.gz [--url U ...]`` — a score per page;
* ``eval MODEL_DIR --archive A.warc.gz --labels L.jsonl --field F [--value V]``
  — accuracy, precision, recall, F1 and AUC against a label (``--where k=v``
  restricts), on every labelled page except those the model was trained on
  (``train-urls.txt`` of the model), i.e. at the collection's real class ratio;
  ``--limit N`` judges a seeded (``--seed``) random sample of them stratified by
  the truth, so the ratio stays the collection's;
* every ``CLI_COMMANDS`` entry of the model command modules beside this one
  (``cosine``: ``idf``, ``generate-terms``; ``perplexity``: ``perplexity``;
  ``train``: ``learn-comment-keywords``) and of a third party's model module.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from focuscrawl.cli_args import Parser, add_verbosity, first_sentence
from focuscrawl.commands import Subcommand
from focuscrawl.commands.model import cosine, perplexity, train
from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.metrics import auc, binary_scores
from focuscrawl.relevance.base import (
    MODELS,
    TRAIN_URLS,
    judge,
    load_model,
)
from focuscrawl.relevance.examples import iter_archive_pages, select_urls, stratified_sample
from focuscrawl.replay.archive import load_labels


def _module_commands() -> dict[str, Subcommand]:
    # a command module imports its model, never the reverse
    commands: dict[str, Subcommand] = {
        **cosine.CLI_COMMANDS, **perplexity.CLI_COMMANDS, **train.CLI_COMMANDS,
    }  # fmt: skip
    for name in MODELS.names():
        module = sys.modules[MODELS.get(name).__module__]
        commands.update(getattr(module, "CLI_COMMANDS", {}))
    return commands


def cmd_score(args: argparse.Namespace) -> int:
    model = load_model(args.model_dir)
    urls = set(args.url) if args.url else None
    for page in iter_archive_pages(args.archive, urls, limit=args.limit):
        print(f"{model.score(page):.6f}\t{page.url}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    model = load_model(args.model_dir)
    labels = load_labels(args.labels)
    wanted = set(select_urls(labels, args.where))
    if args.value is not None:
        # a value no label has (a typo) would judge every page irrelevant: figures of nothing
        values = {str(labels[u].get(args.field)).lower() for u in wanted if labels[u].get(args.field) is not None}
        if args.value.lower() not in values:
            shown = ", ".join(sorted(values)[:20]) or "none"
            raise ConfigError(f"no label has {args.field}={args.value} (values: {shown})")
    trained_on = _train_urls(args.model_dir) if not args.include_training else set()
    skipped = len(wanted & trained_on)
    wanted -= trained_on
    truths = {u: _truth(labels[u].get(args.field), args.value) for u in wanted}
    if args.limit > 0:  # a seeded sample keeping the class ratio, not the archive's first pages
        strata = {t: [u for u, truth in truths.items() if truth is t] for t in (True, False)}
        wanted = set(stratified_sample(strata, args.limit, args.seed))
    scores: list[float] = []
    predicted: list[bool] = []
    actual: list[bool] = []
    for page in iter_archive_pages(args.archive, wanted):
        truth = truths[page.url]
        if truth is None:
            continue
        score, relevant = judge(model, page)
        scores.append(score)
        predicted.append(relevant)
        actual.append(truth)
    if not actual:
        raise ConfigError("no labelled page of the archive matched")
    s = binary_scores(predicted, actual)
    base = sum(actual) / len(actual)
    # the ROC area needs pages of both classes: with one only it is undefined, not 0
    area = f"{auc(scores, actual):.4f}" if 0 < sum(actual) < len(actual) else "n/a (one class only)"
    print(
        f"n={s.n} relevant={sum(actual)} ({base:.4f}) accuracy={s.accuracy:.4f} "
        f"precision={s.precision:.4f} recall={s.recall:.4f} f1={s.f1:.4f} "
        f"auc={area} (tp={s.tp} fp={s.fp} tn={s.tn} fn={s.fn}; "
        f"threshold {model.threshold:.4g}; always-no accuracy {1 - base:.4f}; "
        f"{skipped} training pages left out)"
    )
    for t in args.thresholds:
        q = binary_scores([x >= t for x in scores], actual)
        print(
            f"  score >= {t:g}: accuracy={q.accuracy:.4f} precision={q.precision:.4f} "
            f"recall={q.recall:.4f} f1={q.f1:.4f}"
        )
    return 0


def _truth(value: Any, relevant: str | None) -> bool | None:
    """A label's field as the truth: equal to ``relevant`` (as text, any case), else
    truthy; None: the label has no such field (the page is not judged)."""
    if value is None:
        return None
    return str(value).lower() == relevant.lower() if relevant is not None else bool(value)


def _train_urls(model_dir: Path) -> set[str]:
    path = Path(model_dir) / TRAIN_URLS
    if not path.exists():
        return set()
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


_COMMAND_HELP = {  # the model modules' own commands (CLI_COMMANDS)
    "generate-terms": "GenerateTerms (P3 Alg. 3): genre and content terms of a cosine model from example pages",
    "idf": "an idf table of terms over WARC archives (the cosine model's weights)",
    "learn-comment-keywords": "comment class/id keywords learned from labelled pages (P0)",
    "perplexity": "perplexity of text, JSONL or HTML files under an n-gram model",
}


def _help(doc: str | None) -> str:
    """A help line from a docstring: its first sentence, without double backticks."""
    return first_sentence(doc)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="focuscrawl model", description="Train, score and evaluate relevance models.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    train_parser = sub.add_parser("train", help="train/configure a model and save it")
    train_sub = train_parser.add_subparsers(dest="model_name", required=True, parser_class=Parser)
    for name in MODELS.names():
        cls = MODELS.get(name)
        p = train_sub.add_parser(name, help=_help(cls.__doc__))
        train.trainer(name).add_arguments(p)
        p.add_argument("--out", type=Path, required=True,
                       help="directory to save the model in (absent or empty)")  # fmt: skip
        p.add_argument("--force", action="store_true",
                       help="replace the saved model in a non-empty --out (cleared first)")  # fmt: skip
        p.set_defaults(func=train.run_train)

    p = sub.add_parser("score", help="score archived pages with a saved model")
    p.add_argument("model_dir", type=Path)
    p.add_argument("--archive", type=Path, nargs="+", required=True)
    p.add_argument("--url", nargs="*", default=[])
    p.add_argument("--limit", type=int, default=0, metavar="N",
                   help="score the first N pages of the archives, in their order (0: all)")  # fmt: skip
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("eval", help="accuracy/precision/recall of a saved model against labels")
    p.add_argument("model_dir", type=Path)
    p.add_argument("--archive", type=Path, nargs="+", required=True)
    p.add_argument("--labels", type=Path, required=True)
    p.add_argument("--field", required=True, help="label field holding the truth")
    p.add_argument("--value", help="the field value meaning 'relevant' (default: truthy)")
    p.add_argument("--where", nargs="*", default=[], help="field=value filters on the labels")
    p.add_argument("--limit", type=int, default=0, metavar="N",
                   help="judge a random sample of N of the labelled pages (0: all), stratified by "
                        "the truth: each class its share of N, so the class ratio is the labels'; "
                        "a sampled page the archives do not hold is not judged")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="the sample's random seed (with --limit)")
    p.add_argument(
        "--include-training", action="store_true",
        help=f"also judge the pages the model was trained on (listed in {TRAIN_URLS})",
    )  # fmt: skip
    p.add_argument(
        "--thresholds", type=float, nargs="*", default=[], metavar="T",
        help="also print accuracy/precision/recall/F1 of score >= T for each T",
    )  # fmt: skip
    p.set_defaults(func=cmd_eval)

    for name, (add_arguments, run) in sorted(_module_commands().items()):
        p = sub.add_parser(name, help=_COMMAND_HELP.get(name) or _help(run.__doc__))
        add_arguments(p)
        p.set_defaults(func=run)
    for p in [*sub.choices.values(), *train_sub.choices.values()]:
        add_verbosity(p)
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    try:
        return int(args.func(args))
    except ModelError as exc:
        raise ConfigError(str(exc)) from None
