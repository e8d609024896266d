"""Decisions at the real class ratio: prior shift, thresholds chosen by cross-validation.

A classifier trained on P1's 75 positive / 150 negative pages learns the prior
1/3, while on the Web the share of relevant pages (the base rate π) is often a
few per cent: WebKB has 928 course pages in 8,213 (11 %), a Wikispeedia
category 1–10 %. A page with Pr = 0.5 under the training prior is then far less
likely relevant, and the fixed threshold 0.5 gives precision 0.12–0.51. Two
corrections, both fitted on the training pages only:

* **prior shift** (Bayes' rule with new class priors; Saerens, Latinne and
  Decaestecker 2002, eq. 2.4 there):

      p' = (π/π_t)·p / ((π/π_t)·p + ((1 − π)/(1 − π_t))·(1 − p))      (C1)

  with π_t the training share of positives and π the expected base rate;
* **threshold by cross-validation**: out-of-fold scores of the training pages
  give the true/false positive rates TPR(t), FPR(t) of every threshold t; the
  precision and accuracy *at the base rate π* follow without resampling:

      precision(t) = π·TPR / (π·TPR + (1 − π)·FPR)                    (C2)
      accuracy(t)  = π·TPR + (1 − π)·(1 − FPR)                         (C3)

  and the threshold maximising F1 (or accuracy, or recall at a minimum
  precision) is kept.

>>> round(float(shift_prior(np.array([0.5]), 1 / 3, 0.1)[0]), 4)
0.1818
>>> op = choose_threshold([0.9, 0.8, 0.4], [0.7, 0.3, 0.2, 0.1], prior=0.5)
>>> round(op.threshold, 2), round(op.recall, 3), round(op.precision, 3)
(0.35, 1.0, 0.8)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold

from focuscrawl.exceptions import ModelError

Scores = Sequence[float] | np.ndarray
OBJECTIVES = ("f1", "accuracy", "none")  # and "precision:X" (best recall at precision >= X)


def check_prior(prior: float | None) -> None:
    if prior is not None and not 0.0 < prior < 1.0:
        raise ModelError(f"prior (expected share of relevant pages) must be in (0, 1), not {prior}")


def check_objective(objective: str) -> None:
    if objective in OBJECTIVES:
        return
    if objective.startswith("precision:"):
        try:
            value = float(objective.partition(":")[2])
        except ValueError:
            value = -1.0
        if 0.0 < value <= 1.0:
            return
    raise ModelError(
        f"unknown calibration {objective!r} (f1, accuracy, none or precision:X with 0 < X <= 1)"
    )


def shift_prior(p: np.ndarray, from_prior: float, to_prior: float) -> np.ndarray:
    """Eq. C1: probabilities under the training prior -> under the base rate ``to_prior``."""
    if from_prior == to_prior:
        return p
    a = (to_prior / from_prior) * p
    b = ((1.0 - to_prior) / (1.0 - from_prior)) * (1.0 - p)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(a + b > 0.0, a / np.maximum(a + b, 1e-300), 0.0)
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    """A threshold and the rates expected at the base rate ``prior`` (eq. C2, C3)."""

    threshold: float
    prior: float
    tpr: float
    fpr: float

    @property
    def recall(self) -> float:
        return self.tpr

    @property
    def precision(self) -> float:
        hit = self.prior * self.tpr
        return hit / (hit + (1.0 - self.prior) * self.fpr) if hit + self.fpr > 0.0 else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def accuracy(self) -> float:
        return self.prior * self.tpr + (1.0 - self.prior) * (1.0 - self.fpr)

    def as_dict(self) -> dict[str, float]:
        return {
            **asdict(self), "precision": self.precision, "recall": self.recall,
            "f1": self.f1, "accuracy": self.accuracy,
        }  # fmt: skip


def operating_points(pos_scores: Scores, neg_scores: Scores, prior: float) -> list[OperatingPoint]:
    """One point per distinct score (judge ``score >= t``), from the highest threshold down.

    Each threshold sits half-way between two neighbouring distinct scores, so
    that it does not lie on a training page's own score; the first point (above
    every score) judges nothing relevant.
    """
    pos = np.asarray(pos_scores, dtype=np.float64)
    neg = np.asarray(neg_scores, dtype=np.float64)
    if not len(pos) or not len(neg):
        raise ModelError("threshold calibration needs positive and negative scores")
    distinct = np.unique(np.concatenate([pos, neg]))[::-1]  # high -> low
    cuts = [float(distinct[0]) + 1e-9]
    cuts += [float((hi + lo) / 2.0) for hi, lo in itertools.pairwise(distinct)]
    cuts.append(float(distinct[-1]))  # everything relevant
    return [
        OperatingPoint(t, prior, float(np.mean(pos >= t)), float(np.mean(neg >= t))) for t in cuts
    ]


def choose_threshold(
    pos_scores: Scores, neg_scores: Scores, prior: float, objective: str = "f1"
) -> OperatingPoint:
    """The operating point that maximises ``objective`` at base rate ``prior``.

    Ties go to the higher threshold (fewer pages judged relevant).
    """
    check_objective(objective)
    points = operating_points(pos_scores, neg_scores, prior)
    if objective == "accuracy":
        return max(points, key=lambda op: op.accuracy)
    if objective.startswith("precision:"):
        need = float(objective.partition(":")[2])
        ok = [op for op in points if op.precision >= need and op.tpr > 0.0]
        if ok:
            return max(ok, key=lambda op: op.recall)
        return max(points, key=lambda op: op.precision)  # the target is out of reach
    return max(points, key=lambda op: op.f1)


Scorer = Callable[[Sequence[str]], Mapping[str, np.ndarray]]


def out_of_fold(
    fit: Callable[[Sequence[str], Sequence[str]], Scorer],
    pos_texts: Sequence[str],
    neg_texts: Sequence[str],
    folds: int,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Out-of-fold scores of every text (positives first, then negatives), per score name.

    ``fit(pos, neg)`` trains on one fold's training part and returns a function
    ``texts -> {name: scores}``; stratified, shuffled folds with ``seed``.
    """
    texts = [*pos_texts, *neg_texts]
    y = np.array([1] * len(pos_texts) + [0] * len(neg_texts))
    out: dict[str, np.ndarray] = {}
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train_idx, test_idx in splitter.split(np.zeros(len(y)), y):
        pos = [texts[i] for i in train_idx if y[i]]
        neg = [texts[i] for i in train_idx if not y[i]]
        scores = fit(pos, neg)([texts[i] for i in test_idx])
        for name, values in scores.items():
            out.setdefault(name, np.zeros(len(y)))[test_idx] = values
    return out
