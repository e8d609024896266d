"""Pure metric functions of the papers, with doctests.

Binary judgements: accuracy, precision, recall, F1. Crawl curves: harvest rate
(share of relevant pages among those crawled, P0/P1/P3/P4) and target recall
(share of a target set that was crawled, P1).

A leaf beside ``types``: the models (their training and calibration) and the
evaluation both score with these, so it imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BinaryScores:
    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "n": self.n, "tp": self.tp, "fp": self.fp, "tn": self.tn, "fn": self.fn,
            "accuracy": self.accuracy, "precision": self.precision,
            "recall": self.recall, "f1": self.f1,
        }  # fmt: skip


def binary_scores(predicted: Iterable[bool], actual: Iterable[bool]) -> BinaryScores:
    """Confusion counts of two aligned boolean sequences.

    >>> s = binary_scores([True, True, False, False], [True, False, False, True])
    >>> (s.tp, s.fp, s.tn, s.fn, s.accuracy, s.precision, s.recall, s.f1)
    (1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5)
    """
    tp = fp = tn = fn = 0
    for p, a in zip(predicted, actual, strict=True):
        if p and a:
            tp += 1
        elif p:
            fp += 1
        elif a:
            fn += 1
        else:
            tn += 1
    return BinaryScores(tp, fp, tn, fn)


def harvest_rate(relevant: Sequence[bool]) -> float:
    """Share of relevant pages among the crawled ones.

    >>> harvest_rate([True, False, True, True])
    0.75
    >>> harvest_rate([])
    0.0
    """
    return sum(relevant) / len(relevant) if relevant else 0.0


def harvest_curve(relevant: Sequence[bool]) -> list[float]:
    """Harvest rate after each crawled page.

    >>> harvest_curve([True, False, True, False])
    [1.0, 0.5, 0.6666666666666666, 0.5]
    """
    out: list[float] = []
    hits = 0
    for i, rel in enumerate(relevant, 1):
        hits += bool(rel)
        out.append(hits / i)
    return out


def target_recall(crawled: Iterable[str], targets: Iterable[str]) -> float:
    """Share of the target set that was crawled (P1).

    >>> target_recall(["a", "b", "x"], ["a", "b", "c", "d"])
    0.5
    """
    target_set = set(targets)
    if not target_set:
        return 0.0
    return len(target_set.intersection(crawled)) / len(target_set)


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve (Mann–Whitney U; ties count one half).

    >>> auc([0.9, 0.8, 0.3, 0.1], [True, False, True, False])
    0.75
    """
    n_pos = sum(1 for lab in labels if lab)
    n_neg = len(labels) - n_pos
    if not n_pos or not n_neg:
        return 0.0
    order = sorted(range(len(scores)), key=lambda k: scores[k])
    rank_sum = 0.0  # sum of the (tie-averaged, 1-based) ranks of the positives
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        rank_sum += mean_rank * sum(1 for k in order[i : j + 1] if labels[k])
        i = j + 1
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
