"""``focuscrawl model train NAME ...``: each model's command-line options and how they build it.

The models know nothing of argparse: a trainer here reads the options and builds
the model through its Python API (its ``Params``, ``train``, or, for the comment
detector, :func:`~focuscrawl.relevance.comment_learning.learn_model`). A model
without a trainer here (a third party's) is built from ``--param KEY=VALUE``
options, as its ``[model]`` table would be.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.commands import Subcommand
from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.relevance.base import MODEL_INFO, MODELS, RelevanceModel, build_model, save_model
from focuscrawl.relevance.classifier import ClassifierModel, ClassifierParams
from focuscrawl.relevance.comment_learning import LearnOptions, learn_model
from focuscrawl.relevance.keyword import KeywordModel
from focuscrawl.relevance.language import DECISIONS, LanguageModel
from focuscrawl.relevance.language_id import BACKENDS, DEFAULT_BACKEND
from focuscrawl.relevance.lm_text import read_texts
from focuscrawl.relevance.ngram_lm import HELD_OUT_EVERY, PerplexityModel
from focuscrawl.relevance.perplexity_bounds import CUTOFF_QUANTILE
from focuscrawl.relevance.training import ALGORITHMS, DEFAULT_MAX_NEG, DEFAULT_MAX_POS


@dataclass(frozen=True)
class Trainer:
    """The options of ``focuscrawl model train NAME`` and the model they build."""

    add_arguments: Callable[[argparse.ArgumentParser], None]
    train: Callable[[argparse.Namespace], RelevanceModel]


# -- keyword ---------------------------------------------------------------------------


def add_keyword_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keywords", required=True, help="comma-separated keywords")
    parser.add_argument("--threshold", type=float, default=1e-9)


def train_keyword(args: argparse.Namespace) -> KeywordModel:
    return KeywordModel(str(args.keywords).split(","), float(args.threshold))


# -- classifier ------------------------------------------------------------------------


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the labelled pages come from (``focuscrawl model train classifier ...``)."""
    parser.add_argument("--archive", required=True, help="WARC archive holding the pages")
    parser.add_argument("--labels", help="labels JSONL of the archive (with --positive)")
    parser.add_argument(
        "--positive", action="append", default=[], metavar="KEY=VALUE",
        help="label filter of positive pages (repeat: all must hold), e.g. type=course",
    )  # fmt: skip
    parser.add_argument(
        "--negative", action="append", default=[], metavar="KEY!=VALUE",
        help="label filter of negative pages (default: every non-positive page)",
    )  # fmt: skip
    parser.add_argument("--pos-urls", help="file of positive URLs, one a line")
    parser.add_argument("--neg-urls", help="file of negative URLs, one a line")
    parser.add_argument("--max-pos", type=int, default=DEFAULT_MAX_POS, help="0 = all (P1: 75)")
    parser.add_argument("--max-neg", type=int, default=DEFAULT_MAX_NEG, help="0 = all (P1: 150)")
    parser.add_argument("--seed", type=int, default=0, help="random draw of the training pages")


def add_classifier_arguments(parser: argparse.ArgumentParser) -> None:
    """``focuscrawl model train classifier``: the data arguments and the model's own."""
    _add_data_arguments(parser)
    parser.add_argument("--algorithm", choices=ALGORITHMS, default="svm-linear")
    parser.add_argument("--k-best", type=int, default=2000, help="chi² vocabulary size (P1: 2000)")
    parser.add_argument(
        "--threshold", type=float, default=None,
        help="fixed decision threshold (default: chosen by --calibration at --prior)",
    )  # fmt: skip
    parser.add_argument(
        "--prior", type=float, default=None,
        help="expected share of relevant pages where the model judges (default: the share "
        "among all pages the --labels filters select; with URL lists, the training share)",
    )  # fmt: skip
    parser.add_argument(
        "--calibration", default="f1", metavar="OBJECTIVE",
        help="threshold chosen by cross-validation on the training pages for: f1 (default), "
        "accuracy, precision:X (best recall at precision >= X) or none (0.5)",
    )  # fmt: skip
    parser.add_argument("--cv-folds", type=int, default=5, help="calibration folds")
    parser.add_argument("--beta", type=float, default=0.25, help="eq. 9 page weight (P1: 0.25)")
    parser.add_argument("--lang", default="en", help="stop words and stemmer language")


def train_classifier(args: argparse.Namespace) -> ClassifierModel:
    return ClassifierModel.from_params(ClassifierParams(
        algorithm=args.algorithm, threshold=args.threshold, beta=args.beta, k_best=args.k_best,
        lang=args.lang, seed=args.seed, prior=args.prior, calibration=args.calibration,
        cv_folds=args.cv_folds, archive=Path(args.archive),
        labels=Path(args.labels) if args.labels else None, positive=tuple(args.positive),
        negative=tuple(args.negative), pos_urls=Path(args.pos_urls) if args.pos_urls else None,
        neg_urls=Path(args.neg_urls) if args.neg_urls else None, max_pos=args.max_pos,
        max_neg=args.max_neg,
    ))  # fmt: skip


# -- comments --------------------------------------------------------------------------


def add_comments_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--archive", help="WARC archive of labelled pages (omit: default keywords)"
    )
    parser.add_argument("--labels", help="labels JSONL with a boolean field")
    parser.add_argument("--field", default="has_comments", help="boolean label field")
    parser.add_argument("--top-k", type=int, default=25, help="keywords to learn (P0: 25)")
    parser.add_argument("--min-support", type=int, default=3, help="comment pages per keyword")
    parser.add_argument(
        "--min-gain", type=int, default=None,
        help="net pages a keyword must add (default: chosen by site-grouped CV)",
    )  # fmt: skip
    parser.add_argument(
        "--min-sites", type=int, default=None,
        help="sites whose comment pages carry a keyword (default: chosen by site-grouped CV)",
    )  # fmt: skip
    parser.add_argument("--use-ids", action="store_true", help="match element ids too")
    parser.add_argument("--no-fold", action="store_true", help="keep - and _ when matching")
    parser.add_argument(
        "--all", action="store_true", help="learn on every page (no held-out half of the sites)"
    )


def learn_options(args: argparse.Namespace) -> LearnOptions:
    return LearnOptions(
        archive=Path(args.archive) if args.archive else None,
        labels=Path(args.labels) if args.labels else None, field=args.field,
        top_k=int(args.top_k), min_support=int(args.min_support), min_gain=args.min_gain,
        min_sites=args.min_sites, use_ids=bool(args.use_ids), fold_separators=not args.no_fold,
        learn_on_all=bool(args.all),
    )  # fmt: skip


def train_comments(args: argparse.Namespace) -> RelevanceModel:
    return learn_model(learn_options(args))


def _add_learn_arguments(parser: argparse.ArgumentParser) -> None:
    add_comments_arguments(parser)
    parser.add_argument("--out", help="directory to save the learned CommentModel in")


def _run_learn(args: argparse.Namespace) -> int:
    if not args.archive or not args.labels:
        raise ModelError("learn-comment-keywords: give --archive and --labels")
    lines: list[str] = []
    model = learn_model(learn_options(args), report=lines)
    for line in lines:
        print(line)
    if args.out:
        save_model(model, Path(args.out))
        print(f"saved to {args.out}")
    return 0


# -- language --------------------------------------------------------------------------


def add_language_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target", required=True, help="comma-separated language codes, e.g. ja"
    )
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND)
    parser.add_argument("--min-confidence", type=float, default=0.0)
    parser.add_argument("--probability", action="store_true", help="score = P(target)")
    parser.add_argument(
        "--han-context", help="language of Han-only anchors (default: ja for a ja target)"
    )
    parser.add_argument(
        "--threshold", type=float, default=None,
        help="share of the text in the targets (default 0.25); with --decide top: 0.5",
    )  # fmt: skip
    parser.add_argument(
        "--decide", choices=DECISIONS, default="share",
        help="share: target share of the text (default); top: the best language only",
    )  # fmt: skip
    parser.add_argument(
        "--anchor-candidates",
        help="languages anchors are told apart among (default: targets,en)",
    )



def train_language(args: argparse.Namespace) -> LanguageModel:
    return LanguageModel(
        str(args.target).split(","), backend=str(args.backend),
        min_confidence=float(args.min_confidence), probability=bool(args.probability),
        han_context=args.han_context, threshold=args.threshold, decide=str(args.decide),
        anchor_candidates=args.anchor_candidates.split(",") if args.anchor_candidates else None,
    )  # fmt: skip


# -- perplexity ------------------------------------------------------------------------


def add_perplexity_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--texts", nargs="+", required=True, type=Path, help=".txt (a text per line) or .jsonl"
    )
    parser.add_argument("--field", default="text", help="text field of .jsonl records")
    parser.add_argument("--order", type=int, default=5, help="n-gram order (P2: 5)")
    parser.add_argument(
        "--min-words", type=int, default=5, help="shortest training sentence (P2: 5)"
    )
    parser.add_argument("--no-lowercase", dest="lowercase", action="store_false")
    parser.add_argument("--no-dedup", dest="dedup", action="store_false")
    parser.add_argument(
        "--held-out-every", type=int, default=HELD_OUT_EVERY,
        help="every n-th text is held out to set the bounds (0: none; then P2's 1e5)",
    )  # fmt: skip
    parser.add_argument(
        "--held-out", nargs="+", type=Path, default=[],
        help="more domain texts, never trained on, for the bounds",
    )  # fmt: skip
    parser.add_argument(
        "--cutoff-quantile", type=float, default=CUTOFF_QUANTILE,
        help="share of held-out domain texts the relevance cut-off accepts",
    )  # fmt: skip
    parser.add_argument(
        "--max-perplexity", type=float, default=None,
        help="relevance cut-off by hand (default: from the held-out texts)",
    )  # fmt: skip
    parser.add_argument(
        "--discard-perplexity", type=float, default=None,
        help="P2's bound for dropping a page's links (default: 2 x the largest held-out PP)",
    )  # fmt: skip



def train_perplexity(args: argparse.Namespace) -> PerplexityModel:
    texts = (t for p in args.texts for t in read_texts(p, field=args.field))
    model = PerplexityModel.train(
        texts,
        order=args.order,
        min_words=args.min_words,
        lowercase=args.lowercase,
        dedup=args.dedup,
        held_out_every=args.held_out_every,
        cutoff_quantile=args.cutoff_quantile,
        max_perplexity=args.max_perplexity,
        discard_perplexity=args.discard_perplexity,
    )
    if args.held_out:
        model.calibrate(t for p in args.held_out for t in read_texts(p, field=args.field))
    return model


# -- any other model: its Params as --param KEY=VALUE ------------------------------------


def params_trainer(name: str) -> Trainer:
    """A model built from ``--param KEY=VALUE`` options as from its ``[model]`` table."""
    known = ", ".join(f.name for f in dataclasses.fields(MODELS.get(name).Params)) or "none"

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--param", action="append", default=[], metavar="KEY=VALUE",
            help=f"a parameter of the model's [model] table (repeatable): {known}",
        )  # fmt: skip

    def train(args: argparse.Namespace) -> RelevanceModel:
        values: dict[str, str] = {}
        for text in args.param:
            key, sep, value = text.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"--param {text!r} is not KEY=VALUE")
            values[key.strip()] = value.strip()  # text, read as the field's type
        return build_model({"name": name, **values})

    return Trainer(add_arguments, train)


TRAINERS: dict[str, Trainer] = {
    "classifier": Trainer(add_classifier_arguments, train_classifier),
    "comments": Trainer(add_comments_arguments, train_comments),
    "keyword": Trainer(add_keyword_arguments, train_keyword),
    "language": Trainer(add_language_arguments, train_language),
    "perplexity": Trainer(add_perplexity_arguments, train_perplexity),
}


def trainer(name: str) -> Trainer:
    """How ``focuscrawl model train NAME`` builds the model ``name``."""
    MODELS.get(name)  # an unknown name: the registry's one-line error
    return TRAINERS.get(name) or params_trainer(name)


# -- focuscrawl model train NAME --out DIR --------------------------------------------


def check_out(out: Path, force: bool) -> None:
    """A model directory to (re)write: absent or empty, or, with ``force``, a saved model
    (then cleared: an old ``classifier.pkl`` or ``train-urls.txt`` left beside a new
    ``model.json`` would be read as the new model's)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfigError(f"--out {out}: is a file, not a model directory")
    if not any(out.iterdir()):
        return
    if not force:
        raise ConfigError(f"--out {out}: not empty; use --force to replace the model in it, or another --out")
    if not (out / MODEL_INFO).is_file():
        raise ConfigError(f"--out {out}: holds files that are not a saved model (no {MODEL_INFO}); "
                          "not cleared, even with --force")  # fmt: skip


def run_train(args: argparse.Namespace) -> int:
    check_out(args.out, args.force)  # before a training that may take minutes
    model = trainer(args.model_name).train(args)
    if args.out.exists() and any(args.out.iterdir()):
        shutil.rmtree(args.out)  # a saved model, replaced as a whole (--force)
    save_model(model, args.out)
    print(f"saved {args.model_name} model to {args.out}")
    return 0


CLI_COMMANDS: dict[str, Subcommand] = {"learn-comment-keywords": (_add_learn_arguments, _run_learn)}
