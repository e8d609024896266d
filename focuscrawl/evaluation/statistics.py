"""Summaries across topics: mean ± standard error and P1's one-tailed paired t-test."""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (sample standard deviation / √n; 0 for n < 2).

    >>> m, se = mean_se([1.0, 2.0, 3.0, 4.0])
    >>> m, round(se, 4)
    (2.5, 0.6455)
    >>> mean_se([]), mean_se([0.5])
    ((0.0, 0.0), (0.5, 0.0))
    """
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def paired_t_greater(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """One-tailed paired t-test of "a > b" over the same topics (P1 [Results]): (t, p).

    With fewer than two pairs, or all differences equal (the test is undefined),
    t is 0 (or ±inf for a constant non-zero difference) and p is 1.0 or 0.0.

    Differences 1, 2, 3 (mean 2, sd 1): t = 2 / (1/√3) = 3.4641, p = 0.0371 (df 2):

    >>> t, p = paired_t_greater([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    >>> round(t, 4), round(p, 4)
    (3.4641, 0.0371)
    >>> paired_t_greater([1.0, 1.0], [1.0, 1.0])
    (0.0, 1.0)
    >>> paired_t_greater([2.0, 3.0], [1.0, 2.0])
    (inf, 0.0)
    """
    if len(a) != len(b):
        raise ValueError("paired t-test needs the same topics on both sides")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    if len(diffs) < 2:
        return 0.0, 1.0
    if all(d == diffs[0] for d in diffs):  # zero variance: scipy would warn and return nan
        if diffs[0] == 0:
            return 0.0, 1.0
        return (math.inf, 0.0) if diffs[0] > 0 else (-math.inf, 1.0)
    result = stats.ttest_rel(a, b, alternative="greater")
    return float(result.statistic), float(result.pvalue)
