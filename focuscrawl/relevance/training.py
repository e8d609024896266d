"""Labelled training pages for the text classifiers: selection, loading, evaluation.

P1 trains each topic classifier on 75 positive pages and twice as many negative
ones, drawn at random; the pages left over are kept for testing. Here the
pages come from a WARC archive, chosen either by a label file with filters such
as ``type=course`` / ``type!=course`` or by plain URL lists, and each becomes the
text a model sees: ``title + visible text`` of the parsed :class:`Page`.

Filters (``key<op>value``; several on one side must all hold):

* ``key=value``   the label equals ``value`` (a list label: contains it);
* ``key!=value``  the opposite;
* ``key^=value``  the label starts with ``value`` (a list label: one element does).

>>> f = parse_filter("type!=course")
>>> f.matches({"type": "faculty"}), f.matches({"type": "course"})
(True, False)
>>> parse_filter("categories^=subject.Science").matches({"categories": ["subject.Science.Physics"]})
True
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ArchiveError, ModelError
from focuscrawl.parse.html import page_from_bytes
from focuscrawl.replay.archive import iter_responses, load_labels
from focuscrawl.types import Page

# P1, section "Experiments": 75 positive examples, twice as many negative ones.
DEFAULT_MAX_POS = 75
DEFAULT_MAX_NEG = 150

_OPERATORS = ("!=", "^=", "=")  # longest first: "a!=b" must not split at "="


@dataclass(frozen=True, slots=True)
class LabelFilter:
    key: str
    op: str
    value: str

    def matches(self, label: Mapping[str, Any]) -> bool:
        raw = label.get(self.key)
        values = [str(v) for v in raw] if isinstance(raw, list | tuple) else [str(raw)]
        if raw is None:
            values = []
        if self.op == "^=":
            return any(v.startswith(self.value) for v in values)
        hit = self.value in values
        return hit if self.op == "=" else not hit


def parse_filter(expr: str) -> LabelFilter:
    """``"type=course"`` -> LabelFilter; a malformed expression is a ModelError."""
    for op in _OPERATORS:
        key, sep, value = expr.partition(op)
        if sep and key.strip() and value.strip():
            return LabelFilter(key.strip(), op, value.strip())
    raise ModelError(f"bad label filter {expr!r} (use key=value, key!=value or key^=prefix)")


def _all_match(filters: Sequence[LabelFilter], label: Mapping[str, Any]) -> bool:
    return all(f.matches(label) for f in filters)


@dataclass(slots=True)
class LabelledSplit:
    """URLs drawn for training (at most ``max_pos`` / ``max_neg``) and the rest, held out."""

    train_pos: list[str] = field(default_factory=list)
    train_neg: list[str] = field(default_factory=list)
    test_pos: list[str] = field(default_factory=list)
    test_neg: list[str] = field(default_factory=list)


def _draw(urls: list[str], limit: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """A random sample of ``limit`` URLs (all when limit <= 0) and the remainder, both sorted."""
    urls = sorted(urls)  # the draw depends only on the seed, not on file order
    if limit <= 0 or limit >= len(urls):
        return urls, []
    chosen = set(rng.sample(urls, limit))
    return sorted(chosen), [u for u in urls if u not in chosen]


def split_labels(
    labels: Mapping[str, Mapping[str, Any]],
    positive: Sequence[str],
    negative: Sequence[str] = (),
    *,
    max_pos: int = DEFAULT_MAX_POS,
    max_neg: int = DEFAULT_MAX_NEG,
    seed: int = 0,
) -> LabelledSplit:
    """Positive pages match every ``positive`` filter; negative ones match every
    ``negative`` filter (default: all non-positive pages) and are never positive."""
    pos_filters = [parse_filter(e) for e in positive]
    neg_filters = [parse_filter(e) for e in negative]
    if not pos_filters:
        raise ModelError("give at least one positive filter such as type=course")
    pos = [u for u, lab in labels.items() if _all_match(pos_filters, lab)]
    neg = [
        u
        for u, lab in labels.items()
        if not _all_match(pos_filters, lab) and _all_match(neg_filters, lab)
    ]
    rng = random.Random(seed)
    split = LabelledSplit()
    split.train_pos, split.test_pos = _draw(pos, max_pos, rng)
    split.train_neg, split.test_neg = _draw(neg, max_neg, rng)
    return split


def read_url_file(path: Path | str) -> list[str]:
    """One URL per line; blank lines and ``#`` comments are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read URL list ({exc.strerror})") from None
    return [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]


def page_text(page: Page) -> str:
    """What the classifiers read of a page: its title, then its visible text."""
    return f"{page.title}\n{page.text}".strip()


def load_texts(archives: Path | str | Iterable[Path | str], urls: Iterable[str]) -> dict[str, str]:
    """``{url: page_text}`` for the wanted URLs found in the archives (one pass).

    URLs missing from the archives and pages without any text are left out:
    the caller sees it from the size of the result.
    """
    wanted = set(urls)
    texts: dict[str, str] = {}
    for response in iter_responses(archives):
        if response.url not in wanted or response.url in texts:
            continue
        page = page_from_bytes(response.url, response.body, response.content_type or "text/html")
        text = page_text(page)
        if text:
            texts[response.url] = text
    return texts


@dataclass(slots=True)
class TrainingTexts:
    pos: list[str]
    neg: list[str]
    missing: int  # URLs asked for but absent from the archive or empty


def texts_for(
    archive: Path | str, pos_urls: Sequence[str], neg_urls: Sequence[str]
) -> TrainingTexts:
    found = load_texts(archive, [*pos_urls, *neg_urls])
    pos = [found[u] for u in pos_urls if u in found]
    neg = [found[u] for u in neg_urls if u in found]
    return TrainingTexts(pos, neg, len(pos_urls) + len(neg_urls) - len(pos) - len(neg))


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
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


def training_texts_from_args(args: argparse.Namespace) -> TrainingTexts:
    """Select and load the training pages named by the data arguments."""
    if args.pos_urls or args.neg_urls:
        if not (args.pos_urls and args.neg_urls):
            raise ModelError("give both --pos-urls and --neg-urls")
        rng = random.Random(args.seed)
        pos_urls, _ = _draw(read_url_file(args.pos_urls), args.max_pos, rng)
        neg_urls, _ = _draw(read_url_file(args.neg_urls), args.max_neg, rng)
    elif args.labels:
        try:
            labels = load_labels(args.labels)
        except OSError as exc:
            raise ModelError(f"{args.labels}: cannot read labels ({exc.strerror})") from None
        split = split_labels(
            labels, args.positive, args.negative,
            max_pos=args.max_pos, max_neg=args.max_neg, seed=args.seed,
        )  # fmt: skip
        pos_urls, neg_urls = split.train_pos, split.train_neg
    else:
        raise ModelError("give --labels with --positive, or --pos-urls and --neg-urls")
    try:
        data = texts_for(args.archive, pos_urls, neg_urls)
    except ArchiveError as exc:
        raise ModelError(str(exc)) from None
    if not data.pos or not data.neg:
        raise ModelError(
            f"no training pages found: {len(data.pos)} positive, {len(data.neg)} negative"
        )
    return data


@dataclass(frozen=True, slots=True)
class Quality:
    """Binary classification quality on held-out pages (positive = relevant)."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def accuracy(self) -> float:
        total = self.tp + self.fp + self.tn + self.fn
        return (self.tp + self.tn) / total if total else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


def evaluate(
    predict: Callable[[Sequence[str]], Sequence[bool]],
    pos_texts: Sequence[str],
    neg_texts: Sequence[str],
) -> Quality:
    """Confusion counts of ``predict`` on known positive and negative texts.

    >>> q = evaluate(lambda ts: ["x" in t for t in ts], ["x", "x", "y"], ["y", "x"])
    >>> (q.tp, q.fn, q.tn, q.fp), round(q.accuracy, 2), q.precision, round(q.recall, 2)
    ((2, 1, 1, 1), 0.6, 0.6666666666666666, 0.67)
    """
    on_pos = list(predict(pos_texts)) if pos_texts else []
    on_neg = list(predict(neg_texts)) if neg_texts else []
    tp = sum(on_pos)
    fp = sum(on_neg)
    return Quality(tp=tp, fp=fp, tn=len(on_neg) - fp, fn=len(on_pos) - tp)
