"""The share of the way from the floor (breadth-first) to the ceiling (the oracle): a
strategy's curves as 0 at BFS and 1 at the oracle, at each checkpoint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from focuscrawl.evaluation.experiment_file import Experiment

# curves reported as the share of the way from BFS to the oracle (% of the answer set
# found: P3's "% relevant found", against the URLs crawled)
SHARE_METRICS = ("target_recall", "relevant_found", "harvest_rate")


def share(value: float, floor: float, ceiling: float) -> float | None:
    """How far ``value`` went from the floor (breadth-first) to the ceiling (the oracle):
    0 at the floor, 1 at the ceiling; None where the two meet (nothing to share).

    >>> [round(share(v, 0.2, 0.8), 3) for v in (0.5, 0.2, 0.9)], share(0.3, 0.4, 0.4)
    ([0.5, 0.0, 1.167], None)
    """
    gap = ceiling - floor
    return None if abs(gap) < 1e-9 else (value - floor) / gap


def share_of_the_way(exp: Experiment, curves: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Every strategy's curves as the share of the way from the floor (the first ``bfs``
    strategy) to the ceiling (the first ``oracle``), at each checkpoint: of the means
    across topics (a ratio of per-topic values blows up where a topic's gap is small).
    Empty without both."""
    floor = next((s.label for s in exp.strategies if s.strategy == "bfs"), None)
    ceiling = next((s.label for s in exp.strategies if s.strategy == "oracle"), None)
    if floor is None or ceiling is None:
        return {}
    out: dict[str, Any] = {"floor": floor, "ceiling": ceiling, "labels": {}}
    for metric in SHARE_METRICS:
        lo, hi = curves.get(floor, {}).get(metric), curves.get(ceiling, {}).get(metric)
        if lo is None or hi is None:
            continue
        for label, c in curves.items():
            if metric in c:
                out["labels"].setdefault(label, {})[metric] = [
                    share(v, a, b) for v, a, b in zip(c[metric]["mean"], lo["mean"], hi["mean"], strict=True)
                ]  # fmt: skip
    return out


def share_points(x: Sequence[int], n: int = 4) -> list[int]:
    """Indices of ``n`` checkpoints spread over ``x`` (the last one always).

    >>> share_points([50 * k for k in range(1, 21)])
    [4, 9, 14, 19]
    """
    if not x:
        return []
    return sorted({max(0, round(len(x) * k / n) - 1) for k in range(1, n + 1)})
