"""Learning the comment detector (:mod:`comment_detector`) from labelled pages, judged by site.

The learner is scikit-learn's logistic regression on standardised
:data:`~focuscrawl.relevance.comment_features.FEATURES`. Its two settings, the
regularisation ``C`` and the decision threshold, are chosen by **site-grouped
cross-validation** on the learning pages only (:func:`choose_settings`: each
page's probability comes from a model learned on other sites; the best accuracy
wins, at the pages' own class ratio). :func:`cross_validate` does the same one
level up, for a report over all pages.

Why the keyword learner could not do this: comments-dev has 141 comment pages on
~130 sites, and the names that mark comments are mostly one site's or one
theme's (``CommentTopMeta--Created``, ``jdgm-rev__reply``, ``kb-comments``);
a keyword needs several sites to transfer, so few survive, and an OR of
substrings cannot weigh weak signals against each other. The features here are
shared by sites (numbered comment ids, Reply buttons, counters, times of day).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from focuscrawl.exceptions import ArchiveError, ModelError
from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.metrics import BinaryScores
from focuscrawl.parse.html import parse_html
from focuscrawl.relevance.comment_detector import LearnedDetector
from focuscrawl.relevance.comment_features import FEATURES, comment_features
from focuscrawl.relevance.comment_keywords import fold_name
from focuscrawl.relevance.comment_sites import hash_fold, site_of
from focuscrawl.relevance.comments import DEFAULT_KEYWORDS
from focuscrawl.replay.archive import iter_responses, load_labels
from focuscrawl.types import Page

__all__ = [
    "C_GRID", "THRESHOLDS", "LabelledFeatures", "choose_settings", "cross_validate", "evaluate",
    "features_of", "learn_detector", "load_pages", "predict",
]  # fmt: skip

C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(13))  # 0.20 ... 0.80


@dataclass(frozen=True)
class LabelledFeatures:
    """Feature rows of labelled pages, with their URLs and sites."""

    urls: list[str]
    x: np.ndarray  # (pages, features)
    y: np.ndarray  # bool per page
    sites: list[str]

    def subset(self, rows: Iterable[int]) -> LabelledFeatures:
        idx = [int(i) for i in rows]
        return LabelledFeatures(
            [self.urls[i] for i in idx], self.x[idx], self.y[idx], [self.sites[i] for i in idx]
        )


def load_pages(
    archive: str | Path, labels: str | Path, field: str = "has_comments"
) -> list[tuple[Page, bool]]:
    """Every page of ``archive`` with a boolean ``field`` label, parsed as a crawl parses it."""
    try:
        table = load_labels(labels)
    except OSError as exc:
        raise ModelError(f"{labels}: cannot read labels ({exc.strerror or exc})") from None
    out: list[tuple[Page, bool]] = []
    try:
        for record in iter_responses(archive):
            value = table.get(record.url, {}).get(field)
            if isinstance(value, bool):
                html = decode_html(record.body, detect_charset(record.content_type, record.body))
                out.append((parse_html(record.url, html), value))
    except ArchiveError as exc:
        raise ModelError(str(exc)) from None
    if not out:
        raise ModelError(f"{archive}: no page has a boolean '{field}' label in {labels}")
    return out


def features_of(pages: Sequence[tuple[Page, bool]]) -> LabelledFeatures:
    """The feature rows of labelled pages (P0's ``keywords`` feature: the default list)."""
    keywords = [fold_name(k) for k in DEFAULT_KEYWORDS]
    urls = [page.url for page, _ in pages]
    return LabelledFeatures(
        urls,
        np.array([comment_features(page, keywords) for page, _ in pages]),
        np.array([label for _, label in pages], dtype=bool),
        [site_of(u) for u in urls],
    )


def _fit(data: LabelledFeatures, c: float) -> tuple[LogisticRegression, np.ndarray, np.ndarray]:
    mean = data.x.mean(axis=0)
    scale = data.x.std(axis=0)
    scale[scale == 0] = 1.0  # a feature constant on the learning pages adds nothing
    model = LogisticRegression(C=c, max_iter=5000).fit((data.x - mean) / scale, data.y)
    return model, mean, scale


def _probabilities(data: LabelledFeatures, c: float, folds: int, salt: str) -> np.ndarray:
    """Each page's p(comment) from a model learned on the other folds' sites."""
    fold = np.array([hash_fold(s + salt, folds) for s in data.sites])
    out = np.zeros(len(data.urls))
    for f in range(folds):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        if not len(test):
            continue
        part = data.subset(train)
        if part.y.all() or not part.y.any():
            out[test] = float(part.y.any())
            continue
        model, mean, scale = _fit(part, c)
        out[test] = model.predict_proba((data.x[test] - mean) / scale)[:, 1]
    return out


def _scores(predicted: np.ndarray, truth: np.ndarray) -> BinaryScores:
    tp = int((predicted & truth).sum())
    fp = int((predicted & ~truth).sum())
    fn = int((~predicted & truth).sum())
    return BinaryScores(tp, fp, len(truth) - tp - fp - fn, fn)


def choose_settings(data: LabelledFeatures, folds: int = 5) -> tuple[float, float, BinaryScores]:
    """``(C, threshold, cross-validated counts)``: the best site-grouped CV accuracy on ``data``
    (ties: the smaller C, then the threshold nearer 0.5)."""
    best: tuple[tuple[float, float, float], float, float, BinaryScores] | None = None
    for c in C_GRID:
        p = _probabilities(data, c, folds, "#tune")
        for t in THRESHOLDS:
            s = _scores(p >= t, data.y)
            key = (s.accuracy, -c, -abs(t - 0.5))
            if best is None or key > best[0]:
                best = (key, c, t, s)
    assert best is not None
    return best[1], best[2], best[3]


def learn_detector(data: LabelledFeatures, trained_on: str = "", folds: int = 5) -> tuple[LearnedDetector, BinaryScores]:
    """Settings by site-grouped CV on ``data`` (:func:`choose_settings`), then one model on all of it."""
    if data.y.all() or not data.y.any():
        raise ModelError("comment detector: the labelled pages need both classes")
    c, threshold, cv = choose_settings(data, folds)
    model, mean, scale = _fit(data, c)
    detector = LearnedDetector(
        tuple(round(float(w), 6) for w in model.coef_[0]), round(float(model.intercept_[0]), 6),
        tuple(round(float(m), 6) for m in mean), tuple(round(float(s), 6) for s in scale),
        threshold, FEATURES, f"{trained_on} (C={c}, threshold={threshold})".strip(),
    )  # fmt: skip
    return detector, cv


def predict(detector: LearnedDetector, data: LabelledFeatures) -> np.ndarray:
    return np.array([detector.probability(row) >= detector.threshold for row in data.x.tolist()], dtype=bool)


def evaluate(detector: LearnedDetector, data: LabelledFeatures) -> BinaryScores:
    """Counts of ``detector`` on labelled pages."""
    return _scores(predict(detector, data), data.y)


def cross_validate(data: LabelledFeatures, folds: int = 5) -> BinaryScores:
    """Site-grouped k-fold over ``data``: each fold judged by a detector learned (settings
    included) on the other folds' sites only; pooled counts."""
    fold = np.array([hash_fold(s + "#cv", folds) for s in data.sites])
    predicted = np.zeros(len(data.urls), dtype=bool)
    for f in range(folds):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        if not len(test):
            continue
        detector, _ = learn_detector(data.subset(train))
        predicted[test] = predict(detector, data.subset(test))
    return _scores(predicted, data.y)
