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
* the keyword list is :data:`DEFAULT_KEYWORDS`, or one learnt from labelled pages
  (:mod:`focuscrawl.relevance.comment_learning`).

``score`` is 1.0 (comment) or 0.0. ``score_text`` treats the text as a list of
class/id names (e.g. an element's class attribute).

``detector`` chooses the page detector: ``"keywords"`` (default) is P0's rule
above, the paper's detector (``experiments/p0.toml`` and the recorded outputs
use it); ``"learned"`` is the logistic regression over features that transfer
between sites (:mod:`focuscrawl.relevance.comment_detector`: numbered comment
ids, Reply buttons, counters, dates and times, microdata, comment systems, and
P0's rule as one feature). On sites it was not learned on it is the better one
(accuracy 0.881 against 0.846 on the held-out half of comments-dev's sites, 0.899
against 0.859 in site-grouped CV: ``benchmarks/bench_comments.py``); its
``score`` is p(comment) and the judgement is p >= the detector's own threshold
(the model's ``threshold`` applies to P0's rule only). ``detector`` may also be
the path of a detector learned on other labelled pages
(``python benchmarks/bench_comments.py --write-detector FILE``). It costs about 4 ms of
CPU per page against P0's 0.1 ms, so it stays a choice, and the default keeps
the paper's detector.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.base import register_model
from focuscrawl.relevance.comment_detector import LearnedDetector
from focuscrawl.relevance.comment_keywords import fold_name, holds_keyword
from focuscrawl.types import Page

__all__ = ["DEFAULT_KEYWORDS", "DETECTORS", "CommentModel", "CommentParams"]

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


DETECTORS = ("keywords", "learned")
_OWN_DETECTOR = "comment_detector.json"  # a given detector file, as a saved model keeps it


def _detector_in(directory: Path, detector: str) -> str:
    return detector if detector in DETECTORS else str(directory / detector)


@dataclass(frozen=True)
class CommentParams:
    keywords: tuple[str, ...] = DEFAULT_KEYWORDS  # substrings of class (or id) names
    use_ids: bool = False  # match element ids too
    fold_separators: bool = True  # ignore - and _ (and case) when matching
    threshold: float = 0.5
    detector: str = "keywords"  # "keywords": P0's rule; "learned": the shipped model; or a .json file


@register_model("comments")
@dataclass
class CommentModel:
    """P0's comment detector: 1.0 if a class (or id) name contains a keyword."""

    name: ClassVar[str] = "comments"
    Params: ClassVar[type[CommentParams]] = CommentParams
    keywords: Sequence[str] = DEFAULT_KEYWORDS
    use_ids: bool = False
    fold_separators: bool = True
    threshold: float = 0.5
    detector: str = "keywords"

    def __post_init__(self) -> None:
        #: the learned detector (None: P0's keyword rule)
        self.learned: LearnedDetector | None = None
        if self.detector == "learned":
            self.learned = LearnedDetector.load()
        elif self.detector.endswith(".json"):
            self.learned = LearnedDetector.load(Path(self.detector))
        elif self.detector != "keywords":
            raise ModelError(
                f"comments model: detector={self.detector!r}: use one of "
                f"{', '.join(DETECTORS)} or a detector .json file"
            )
        folded = [fold_name(k, self.fold_separators) for k in self.keywords]
        #: the keywords as matched (folded, distinct)
        self.folded_keywords: tuple[str, ...] = tuple(dict.fromkeys(k for k in folded if k))
        if not self.folded_keywords:
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
            out.extend((k, name) for k in self.folded_keywords if k in folded)
        return out

    def is_comment(self, names: Iterable[str]) -> bool:
        return holds_keyword(names, self.folded_keywords, self.fold_separators)

    def score(self, page: Page) -> float:
        if self.learned is not None:
            return self.learned.score(page, self.folded_keywords)
        return 1.0 if self.is_comment(self.page_names(page)) else 0.0

    def judge(self, page: Page) -> tuple[float, bool]:
        """``(score, comment?)``: the learned detector decides by its own threshold."""
        score = self.score(page)
        if self.learned is not None:
            return score, score >= self.learned.threshold
        return score, score >= self.threshold

    def score_text(self, text: str) -> float:
        return 1.0 if self.is_comment(text.split()) else 0.0

    @classmethod
    def from_params(cls, p: CommentParams) -> CommentModel:
        return cls(list(p.keywords), p.use_ids, p.fold_separators, p.threshold, p.detector)

    def save(self, directory: Path) -> None:
        data = {
            "keywords": list(self.keywords), "use_ids": self.use_ids,
            "fold_separators": self.fold_separators, "threshold": self.threshold,
            "detector": self.detector if self.detector in DETECTORS else _OWN_DETECTOR,
        }  # fmt: skip
        if self.learned is not None and self.detector not in DETECTORS:
            self.learned.save(directory / _OWN_DETECTOR)  # the saved model carries its own copy
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
                _detector_in(directory, str(data.get("detector", "keywords"))),
            )  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"{directory}: not a saved comments model ({exc})") from None
