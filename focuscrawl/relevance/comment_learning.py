"""Learning the comment detector's keywords from labelled pages (P0, end of section III).

The labels hold no comment snippets, so P0's "class names near comment text" is
replaced by "class names that separate comment pages from the others":
candidates are spans of 1-3 word tokens of the names (split on ``-``, ``_``,
camelCase and digits) found on at least ``min_support`` comment pages; a greedy
forward selection then adds, K times, the candidate whose *new* matches bring the
largest net gain (new true positives minus new false positives = the rise of
training accuracy), and stops when no candidate gains ``min_gain`` pages.
Because the rule is an OR of substring tests, matches only ever grow; requiring
a net gain of several pages keeps one-site accidents (a hash-like class, a theme
name) out of the list.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser as HTMLParser

from focuscrawl.exceptions import ArchiveError, ModelError
from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.metrics import BinaryScores, binary_scores
from focuscrawl.parse.html import class_names_and_ids
from focuscrawl.relevance.comment_keywords import (
    LabelledNames,
    LearnedKeyword,
    candidate_keywords,
    fold_name,
    greedy_cover,
)
from focuscrawl.relevance.comment_sites import NameIndex, site_of, split_sites, tune_learner
from focuscrawl.relevance.comments import DEFAULT_KEYWORDS, CommentModel
from focuscrawl.replay.archive import iter_responses, load_labels

__all__ = [
    "LabelledNames",
    "LearnOptions",
    "LearnedKeyword",
    "candidate_keywords",
    "evaluate_keywords",
    "learn_keywords",
    "learn_model",
    "load_labelled_names",
    "names_from_html",
    "split_half",
]


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


@dataclass(frozen=True)
class LearnOptions:
    """What ``focuscrawl model train comments`` (and ``learn-comment-keywords``) is given."""

    archive: Path | None = None  # labelled pages (None: the default keywords)
    labels: Path | None = None
    field: str = "has_comments"  # the boolean label
    top_k: int = 25  # keywords to learn (P0: 25)
    min_support: int = 3  # comment pages per keyword
    min_gain: int | None = None  # None: chosen by site-grouped cross-validation
    min_sites: int | None = None  # None: chosen by site-grouped cross-validation
    use_ids: bool = False
    fold_separators: bool = True
    learn_on_all: bool = False  # no held-out half of the sites


def learn_model(options: LearnOptions, report: list[str] | None = None) -> CommentModel:
    """A comment model with keywords learnt from the labelled pages of ``options.archive``
    (the default keywords without an archive); ``report`` gets what was learnt, and
    how the learnt and the default lists do on the held-out sites."""
    use_ids, fold = options.use_ids, options.fold_separators
    if not options.archive:
        return CommentModel(DEFAULT_KEYWORDS, use_ids=use_ids, fold_separators=fold)
    if not options.labels:
        raise ModelError("comments model: --archive needs --labels")
    try:
        pages = load_labelled_names(options.archive, options.labels, options.field)
    except ArchiveError as exc:
        raise ModelError(str(exc)) from None
    index = NameIndex(pages, use_ids=use_ids, fold_separators=fold)
    learn = index.all_mask if options.learn_on_all else index.mask(lambda p: split_sites(p.url) == "learn")
    held = 0 if options.learn_on_all else index.all_mask & ~learn
    given = {"min_gain": options.min_gain, "min_sites": options.min_sites}
    cv = None
    tuned: dict[str, int] = {}
    if None in given.values():
        tuned, cv = tune_learner(index, learn, top_k=options.top_k)
    params = {k: tuned[k] if v is None else v for k, v in given.items()}
    learned = index.learn(
        learn, top_k=options.top_k, min_support=options.min_support,
        min_gain=params["min_gain"], min_sites=params["min_sites"],
    )  # fmt: skip
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
            mine = index.evaluate(model.folded_keywords, held)
            report.append(format_scores("held-out sites, learned list", mine))
    return model
