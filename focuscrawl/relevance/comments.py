"""Comment detector of P0 (end of section III): does a page hold Web comments?

P0's rule: "If a Web page contains at least one CSS classname, where one of the
keywords is a substring, the Web page is classified as comment"; the keyword
list (25 entries in P0) is collected from class names near comments in training
pages. Here:

* names are the page's class tokens (``Page.class_names``) and, optionally
  (``use_ids``), its element ids: sites use both for comment blocks;
* matching is case-insensitive, and with ``fold_separators`` (default) ``-`` and
  ``_`` are ignored on both sides, so ``comment-body`` also finds
  ``comment_body``, ``commentBody`` and ``CommentBody``;
* :func:`learn_keywords` learns the list from pages labelled comment /
  non-comment (the labels hold no comment snippets, so "near comment text" is
  replaced by "separates comment pages from the others"): candidates are spans
  of 1-3 word tokens of the names (split on ``-``, ``_``, camelCase and digits)
  found on at least ``min_support`` comment pages; a greedy forward selection
  then adds, K times, the candidate whose *new* matches bring the largest net
  gain (new true positives minus new false positives = the rise of training
  accuracy), and stops when no candidate gains ``min_gain`` pages. Because the
  rule is an OR of substring tests, matches only ever grow; requiring a net gain
  of several pages keeps one-site accidents (a hash-like class, a theme name)
  out of the list.

``score`` is 1.0 (comment) or 0.0. ``score_text`` treats the text as a list of
class/id names (e.g. an element's class attribute).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from selectolax.lexbor import LexborHTMLParser as HTMLParser

from focuscrawl.evaluation.metrics import BinaryScores, binary_scores
from focuscrawl.exceptions import ArchiveError, ModelError
from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.parse.html import class_names_and_ids
from focuscrawl.relevance.base import register_model, save_model
from focuscrawl.relevance.comment_keywords import (
    LabelledNames,
    LearnedKeyword,
    candidate_keywords,
    fold_name,
    greedy_cover,
)
from focuscrawl.relevance.comment_sites import NameIndex, site_of, split_sites, tune_learner
from focuscrawl.replay.archive import iter_responses, load_labels
from focuscrawl.types import Page

__all__ = [
    "DEFAULT_KEYWORDS",
    "CommentModel",
    "LabelledNames",
    "LearnedKeyword",
    "candidate_keywords",
    "evaluate_keywords",
    "fold_name",
    "learn_keywords",
    "load_labelled_names",
    "names_from_html",
    "split_half",
]

# Picked by knowledge of common comment markup: WordPress (commentlist /
# comment-list, comment-body, comment-author, comment-meta, comment-content,
# comment-reply-link, and thread-even / thread-odd / bypostauthor / byuser on each
# comment <li>), Blogger (comment-thread, comments-content, comment-block), Disqus
# (dsq-comment), generic names, and German / Spanish words for a comment or a
# reader's letter ("kommentar" also covers kommentare, kommentarliste). Left out on
# purpose: bare "comment", "reply", "respond", "comment-reply" and "post-comment",
# which also name the empty comment *form* and comment counters of pages without
# comments. Then checked on the learn half of comments-dev (never the report half):
# "comment-reply" (40 false positives of 81), "post-comment", "comment-text" and
# "commento" were dropped there.
DEFAULT_KEYWORDS: tuple[str, ...] = (
    "commentlist", "comment-list", "comment-body", "comment-author", "comment-meta",
    "comment-content", "comment-reply-link", "comment-thread", "comments-content",
    "comment-block", "comment-entry", "comment-item", "comment-date", "comment-time",
    "comment-avatar", "user-comment", "reader-comment", "thread-even", "thread-odd",
    "bypostauthor", "byuser", "dsq-comment", "kommentar", "leserbrief", "comentario",
)  # fmt: skip

@register_model("comments")
@dataclass
class CommentModel:
    """P0's comment detector: 1.0 if a class (or id) name contains a keyword."""

    name: ClassVar[str] = "comments"
    keywords: Sequence[str] = DEFAULT_KEYWORDS
    use_ids: bool = False
    fold_separators: bool = True
    threshold: float = 0.5

    def __post_init__(self) -> None:
        folded = [fold_name(k, self.fold_separators) for k in self.keywords]
        self._folded = tuple(dict.fromkeys(k for k in folded if k))
        if not self._folded:
            raise ModelError("comments model: give at least one keyword")
        self.keywords = [k.strip().lower() for k in self.keywords if k.strip()]

    def page_names(self, page: Page) -> list[str]:
        names = list(page.class_names)
        if self.use_ids:
            names.extend(page.ids)
        return names

    def matches(self, names: Iterable[str]) -> list[tuple[str, str]]:
        """(keyword, name) pairs where the folded keyword is a substring of the folded name."""
        out: list[tuple[str, str]] = []
        for name in names:
            folded = fold_name(name, self.fold_separators)
            out.extend((k, name) for k in self._folded if k in folded)
        return out

    def is_comment(self, names: Iterable[str]) -> bool:
        blob = "\n".join(fold_name(n, self.fold_separators) for n in names)
        return any(k in blob for k in self._folded)

    def score(self, page: Page) -> float:
        return 1.0 if self.is_comment(self.page_names(page)) else 0.0

    def score_text(self, text: str) -> float:
        return 1.0 if self.is_comment(text.split()) else 0.0

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], base_dir: Path) -> CommentModel:
        keywords = cfg.get("keywords", DEFAULT_KEYWORDS)
        if isinstance(keywords, str):
            keywords = keywords.split(",")
        if not isinstance(keywords, list | tuple):
            raise ModelError("comments model: 'keywords' must be a list of strings")
        return cls(
            [str(k) for k in keywords],
            use_ids=bool(cfg.get("use_ids", False)),
            fold_separators=bool(cfg.get("fold_separators", True)),
            threshold=float(cfg.get("threshold", 0.5)),
        )

    def save(self, directory: Path) -> None:
        data = {
            "keywords": list(self.keywords), "use_ids": self.use_ids,
            "fold_separators": self.fold_separators, "threshold": self.threshold,
        }  # fmt: skip
        (directory / "comments.json").write_text(
            json.dumps(data, ensure_ascii=False, indent=1), "utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> CommentModel:
        try:
            data = json.loads((directory / "comments.json").read_text("utf-8"))
            return cls(
                [str(k) for k in data["keywords"]], bool(data["use_ids"]),
                bool(data["fold_separators"]), float(data["threshold"]),
            )  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"{directory}: not a saved comments model ({exc})") from None

    @classmethod
    def add_train_arguments(cls, parser: argparse.ArgumentParser) -> None:
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

    @classmethod
    def train_from_args(cls, args: argparse.Namespace) -> CommentModel:
        return _learn_from_args(args, report=None)


def split_half(url: str) -> str:
    """Deterministic 50/50 split by URL hash: ``"learn"`` or ``"report"``.

    >>> split_half("https://example.org/a"), split_half("https://example.org/b")
    ('report', 'learn')
    """
    digest = hashlib.sha256(url.encode("utf-8")).digest()
    return "learn" if digest[0] % 2 == 0 else "report"


def learn_keywords(
    pages: Sequence[LabelledNames],
    *,
    top_k: int = 25,
    use_ids: bool = False,
    fold_separators: bool = True,
    min_support: int = 3,
    min_gain: int = 3,
    min_sites: int = 1,
    candidates: set[str] | None = None,
) -> list[LearnedKeyword]:
    """Greedy forward selection of at most ``top_k`` keywords (see module docstring).

    A candidate needs ``min_support`` comment pages on ``min_sites`` different
    sites (:func:`focuscrawl.relevance.comment_sites.site_of`); ``candidates``
    restricts the choice to those keywords.
    """
    if top_k < 1:
        raise ModelError("comments model: --top-k must be at least 1")
    labels = [p.label for p in pages]
    blobs = ["\n".join(fold_name(n, fold_separators) for n in p.names(use_ids)) for p in pages]
    support: Counter[str] = Counter()
    sites: dict[str, set[str]] = {}
    for page in pages:
        if page.label:
            cands: set[str] = set()
            for name in page.names(use_ids):
                cands |= candidate_keywords(name, fold_separators)
            if candidates is not None:
                cands &= candidates
            support.update(cands)
            if min_sites > 1:
                site = site_of(page.url)
                for cand in cands:
                    sites.setdefault(cand, set()).add(site)
    # page sets as bit masks: bit i = page i (fast unions and counts)
    pos_mask = sum(1 << i for i, label in enumerate(labels) if label)
    cover: dict[str, int] = {}
    for cand, n_pos in support.items():
        if n_pos >= min_support and (min_sites <= 1 or len(sites[cand]) >= min_sites):
            cover[cand] = sum(1 << i for i, blob in enumerate(blobs) if cand in blob)
    return greedy_cover(cover, pos_mask, top_k=top_k, min_gain=min_gain)


def evaluate_keywords(model: CommentModel, pages: Sequence[LabelledNames]) -> BinaryScores:
    """Accuracy, precision, recall, F1 of ``model`` on labelled pages."""
    predicted = [model.is_comment(p.names(model.use_ids)) for p in pages]
    return binary_scores(predicted, [p.label for p in pages])


def names_from_html(html: str) -> tuple[frozenset[str], frozenset[str]]:
    """Class tokens and ids of an HTML document, as the parser fills ``Page.class_names`` / ``ids``.

    Only the attribute scan of :func:`focuscrawl.parse.html.parse_html` (ten times
    faster than a full parse: no text, no links), for learning over whole archives.

    >>> classes, ids = names_from_html('<div class="a  b" id=" x "><p class="b">t</p></div>')
    >>> sorted(classes), sorted(ids)
    (['a', 'b'], ['x'])
    """
    return class_names_and_ids(HTMLParser(html))


def load_labelled_names(
    archive: str | Path, labels: str | Path, field: str = "has_comments"
) -> list[LabelledNames]:
    """Class/id names of every labelled page of ``archive`` (pages without a boolean label are skipped)."""
    try:
        table = load_labels(labels)
    except OSError as exc:
        raise ModelError(f"{labels}: cannot read labels ({exc.strerror or exc})") from None
    out: list[LabelledNames] = []
    for record in iter_responses(archive):
        value = table.get(record.url, {}).get(field)
        if not isinstance(value, bool):
            continue
        charset = detect_charset(record.content_type, record.body)
        classes, ids = names_from_html(decode_html(record.body, charset))
        out.append(LabelledNames(record.url, classes, ids, value))
    if not out:
        raise ModelError(f"{archive}: no page has a boolean '{field}' label in {labels}")
    return out


def format_scores(title: str, s: BinaryScores) -> str:
    return (
        f"{title}: n={s.n} accuracy={s.accuracy:.3f} precision={s.precision:.3f} "
        f"recall={s.recall:.3f} f1={s.f1:.3f} (tp={s.tp} fp={s.fp} tn={s.tn} fn={s.fn})"
    )


def _learn_from_args(args: argparse.Namespace, report: list[str] | None) -> CommentModel:
    use_ids, fold = bool(args.use_ids), not bool(args.no_fold)
    if not args.archive:
        return CommentModel(DEFAULT_KEYWORDS, use_ids=use_ids, fold_separators=fold)
    if not args.labels:
        raise ModelError("comments model: --archive needs --labels")
    try:
        pages = load_labelled_names(args.archive, args.labels, args.field)
    except ArchiveError as exc:
        raise ModelError(str(exc)) from None
    index = NameIndex(pages, use_ids=use_ids, fold_separators=fold)
    learn = index.all_mask if args.all else index.mask(lambda p: split_sites(p.url) == "learn")
    held = 0 if args.all else index.all_mask & ~learn
    params = {"min_gain": args.min_gain, "min_sites": args.min_sites}
    cv = None
    if args.min_gain is None or args.min_sites is None:
        tuned, cv = tune_learner(index, learn, top_k=int(args.top_k))
        params = {k: tuned[k] if v is None else int(v) for k, v in params.items()}
    learned = index.learn(learn, top_k=int(args.top_k), min_support=int(args.min_support), **params)
    if not learned:
        raise ModelError("comments model: no keyword separates the labelled pages")
    model = CommentModel([k.keyword for k in learned], use_ids=use_ids, fold_separators=fold)
    if report is not None:
        n_learn = learn.bit_count()
        n_pos = (learn & index.pos_mask).bit_count()
        report.append(f"learned on {n_learn} pages ({n_pos} comment), {params}:")
        if cv is not None:
            report.append(format_scores("site-grouped 5-fold CV on those pages", cv))
        report.extend(f"  {k.keyword}\tgain={k.gain} tp={k.tp} fp={k.fp}" for k in learned)
        if held:
            base = 1.0 - (held & index.pos_mask).bit_count() / held.bit_count()
            report.append(f"held-out sites: majority baseline accuracy={base:.3f}")
            default = index.evaluate([fold_name(k, fold) for k in DEFAULT_KEYWORDS], held)
            report.append(format_scores("held-out sites, default list", default))
            mine = index.evaluate(model._folded, held)
            report.append(format_scores("held-out sites, learned list", mine))
    return model


def _add_learn_arguments(parser: argparse.ArgumentParser) -> None:
    CommentModel.add_train_arguments(parser)
    parser.add_argument("--out", help="directory to save the learned CommentModel in")


def _run_learn(args: argparse.Namespace) -> int:
    if not args.archive or not args.labels:
        raise ModelError("learn-comment-keywords: give --archive and --labels")
    lines: list[str] = []
    model = _learn_from_args(args, report=lines)
    for line in lines:
        print(line)
    if args.out:
        save_model(model, Path(args.out))
        print(f"saved to {args.out}")
    return 0


CLI_COMMANDS: dict[
    str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
] = {
    "learn-comment-keywords": (_add_learn_arguments, _run_learn),
}
