"""An experiment's results as text: the README's table (mean ± SE across topics at the
budget), the share of the way from BFS to the oracle, and the t-tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from focuscrawl.evaluation.share import SHARE_METRICS, share_points


def _pm(cell: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not cell:
        return "—"
    return f"{cell['mean']:.{digits}f} ± {cell['se']:.{digits}f}"


def summary_table(results: Mapping[str, Any]) -> str:
    """The README table: one row per strategy, mean ± SE across topics at the budget."""
    present = [m for m in ("harvest_rate", "harvest_rate_classifiers", "target_recall", "f1", "f1_best", "f1_heldout", "external_share", "external_harvest_rate", "domains", "wall_seconds")
               if any(m in s for s in results["summary"].values())]  # fmt: skip
    head = "| strategy | " + " | ".join(m.replace("_", " ") for m in present) + " |"
    lines = [
        f"{results['title']} — {len(results['topics'])} topics, budget {results['budget']}, {results['mode']}",
        head, "|" + "---|" * (len(present) + 1),
    ]  # fmt: skip
    for label, s in results["summary"].items():
        cells = [_pm(s.get(m), 1 if m in ("domains", "wall_seconds") else 3) for m in present]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += share_table(results)
    if results.get("left_out"):
        n = len(results["left_out"])
        lines.append(f"{n} of {n + len(results['runs'])} runs left out: not crawled, or not to the end "
                     f"(`focuscrawl experiment` without --report-only crawls them)")  # fmt: skip
    for t in results["tests"]:
        star = "significant" if t["significant"] else "not significant"
        tval = "inf" if t["t"] is None else f"{t['t']:.2f}"
        lines.append(f"{t['metric']}: {t['better']} > {t['worse']}: t = {tval}, p = {t['p']:.4f} ({star}, n = {t['n']})")
    return "\n".join(lines)


def share_table(results: Mapping[str, Any]) -> list[str]:
    """README lines: each strategy's share of the way from BFS to the oracle at a few
    checkpoints, for each curve metric the two crawls have."""
    share_info = results.get("share") or {}
    if not share_info.get("labels"):
        return []
    lines: list[str] = []
    curves = results["curves"]
    for metric in SHARE_METRICS:
        rows = {lab: m[metric] for lab, m in share_info["labels"].items() if metric in m}
        if not rows:
            continue
        x = curves[share_info["floor"]][metric]["x"]
        idx = share_points(x)
        lines += [
            "",
            f"share of the way from {share_info['floor']} (0) to {share_info['ceiling']} (1), "
            f"{metric.replace('_', ' ')} of the means, at URLs crawled:",
            "| strategy | " + " | ".join(str(x[i]) for i in idx) + " |",
            "|" + "---|" * (len(idx) + 1),
        ]
        for label, values in rows.items():
            cells = ["—" if values[i] is None else f"{values[i]:.2f}" for i in idx]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines
