"""Comment keywords: a class/id name folded and cut into candidate keywords, and the
greedy cover that picks keywords from labelled pages' names.

Shared by the comments model (:mod:`focuscrawl.relevance.comments`, which matches
folded names) and its site-grouped learner (:mod:`focuscrawl.relevance.comment_sites`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_FOLD = re.compile(r"[-_]")


def fold_name(name: str, fold_separators: bool = True) -> str:
    """Lower-case ``name``; drop ``-`` and ``_`` when ``fold_separators``.

    >>> fold_name("Comment_Body"), fold_name("Comment_Body", False)
    ('commentbody', 'comment_body')
    """
    low = name.strip().lower()
    return _FOLD.sub("", low) if fold_separators else low


def holds_keyword(names: Iterable[str], folded_keywords: Sequence[str], fold_separators: bool = True) -> bool:
    """P0's rule: one of the folded keywords is a substring of one of the folded names
    (names never hold a newline, so one search a keyword over the joined names is the same).

    >>> holds_keyword(["post", "Comment-List"], ["commentlist"]), holds_keyword(["post"], ["commentlist"])
    (True, False)
    """
    blob = "\n".join(fold_name(n, fold_separators) for n in names)
    return any(k in blob for k in folded_keywords)


def candidate_keywords(name: str, fold_separators: bool = True, min_length: int = 4) -> set[str]:
    """Spans of 1-3 alphabetic word tokens of a class/id name (the learner's candidates).

    >>> sorted(candidate_keywords("commentList-item2"))
    ['comment', 'commentlist', 'commentlistitem', 'item', 'list', 'listitem']
    """
    parts = [(m.start(), m.end(), m.group().isdigit()) for m in _TOKEN.finditer(name)]
    out: set[str] = set()
    for i, (start, _, digit) in enumerate(parts):
        if digit:
            continue
        for j in range(i, min(i + 3, len(parts))):
            if parts[j][2]:
                break
            span = fold_name(name[start : parts[j][1]], fold_separators)
            if len(span) >= min_length:
                out.add(span)
    return out


@dataclass(frozen=True, slots=True)
class LabelledNames:
    """The class and id names of one labelled page."""

    url: str
    class_names: frozenset[str]
    ids: frozenset[str]
    label: bool

    def names(self, use_ids: bool) -> list[str]:
        return [*self.class_names, *self.ids] if use_ids else list(self.class_names)


@dataclass(frozen=True, slots=True)
class LearnedKeyword:
    keyword: str
    gain: int  # rise in training accuracy (pages) when it was added
    tp: int  # training comment pages it matches
    fp: int  # training non-comment pages it matches


def greedy_cover(
    cover: dict[str, int], pos_mask: int, *, top_k: int, min_gain: int
) -> list[LearnedKeyword]:
    """Greedy forward selection: add the keyword whose pages (bit masks) gain the most
    (new positives minus new negatives) until ``top_k`` or the gain falls below ``min_gain``.
    ``cover`` is consumed."""
    chosen: list[LearnedKeyword] = []
    covered = 0
    while len(chosen) < top_k and cover:
        best: tuple[int, int, int, str] | None = None  # (gain, -fp, -len, keyword), maximised
        for cand, matched in cover.items():
            new = matched & ~covered
            gain = (new & pos_mask).bit_count() - (new & ~pos_mask).bit_count()
            key = (gain, -(matched & ~pos_mask).bit_count(), -len(cand), cand)
            if best is None or key > best:
                best = key
        if best is None or best[0] < min_gain:
            break
        matched = cover.pop(best[3])
        tp = (matched & pos_mask).bit_count()
        chosen.append(LearnedKeyword(best[3], best[0], tp, matched.bit_count() - tp))
        covered |= matched
    return chosen
