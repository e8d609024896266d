"""report.html: the experiment's tables and inline-SVG plots in one self-contained file.

No external resource (no CDN, no font, no image file): the report reads the same
offline. A few lines of inline script only mark, once the page is laid out, how
many plots the browser actually drew (``<body data-plots-drawn>``), so that a test
in a real browser can check the plots render.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from focuscrawl.evaluation.share import SHARE_METRICS, share_points
from focuscrawl.evaluation.svg import bar_plot, line_plot

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td{white-space:nowrap}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:12px}
svg.plot{border:1px solid #ddd;background:#fff}svg text{font-size:11px;fill:#333}
svg text.title{font-size:13px;font-weight:bold}svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#999}
.sig{color:#070;font-weight:bold}.note{color:#555;max-width:60em}
"""

# counts the plots with a drawn (non-empty) box; the test reads the attribute
SCRIPT = """
window.addEventListener('load', function () {
  var drawn = 0;
  document.querySelectorAll('svg.plot').forEach(function (s) {
    var box = s.getBBox();
    if (box.width > 0 && box.height > 0 && s.querySelector('polyline, rect.bar')) { drawn += 1; }
  });
  document.body.setAttribute('data-plots-drawn', String(drawn));
});
"""


def _pm(cell: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not cell:
        return "—"
    return f"{cell['mean']:.{digits}f} ± {cell['se']:.{digits}f}"


class Markup(str):
    """Markup built here from escaped parts: put into the page as it is. Every other
    value (labels, topics, parameters: the experiment file's text) is escaped."""


def _cell(value: Any) -> str:
    return value if isinstance(value, Markup) else escape(str(value))


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["<table><tr>", *(f"<th>{_cell(h)}</th>" for h in head), "</tr>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "".join(out)


METRIC_COLUMNS = (
    ("harvest_rate", "harvest rate", 3), ("harvest_rate_classifiers", "harvest (classifier judge)", 3),
    ("target_recall", "target recall", 3),
    ("precision", "precision", 3), ("recall", "recall", 3), ("f1", "F1", 3),
    ("f1_best", "F1 at its best threshold (in-sample)", 3), ("f1_heldout", "F1 at the other topics' best threshold", 3),
    ("external_share", "external share", 3), ("external_harvest_rate", "harvest on external", 3),
    ("domains", "domains", 1), ("visited_per_relevant", "visited / relevant", 2),
    ("pages", "pages", 0), ("wall_seconds", "seconds", 1),
)  # fmt: skip


def _summary(results: Mapping[str, Any]) -> str:
    summary = results["summary"]
    cols = [c for c in METRIC_COLUMNS if any(c[0] in s for s in summary.values())]
    rows = [[label, *(_pm(s.get(key), d) for key, _, d in cols)] for label, s in summary.items()]
    return _table(["strategy", *(name for _, name, _ in cols)], rows)


def _tests(results: Mapping[str, Any]) -> str:
    if not results["tests"]:
        return "<p>No paired test (fewer than two topics in common).</p>"
    rows = []
    for t in results["tests"]:
        verdict = Markup('<span class="sig">yes</span>') if t["significant"] else "no"
        rows.append([t["metric"], f"{t['better']} > {t['worse']}", t["n"],
                     "inf" if t["t"] is None else f"{t['t']:.3f}", f"{t['p']:.4f}", verdict])  # fmt: skip
    return _table(["metric", "hypothesis", "topics", "t", "p (one-tailed)", "p < 0.05"], rows)


def _curve_plots(results: Mapping[str, Any]) -> list[str]:
    curves = results["curves"]
    plots = []
    for key, title, ylabel in (
        ("harvest_rate", "Harvest rate vs. URLs crawled", "harvest rate"),
        ("target_recall", "Target recall vs. URLs crawled", "target recall"),
        ("harvest_rate_classifiers", "Harvest, classifier judge", "harvest rate"),
    ):
        series = [(label, c[key]["x"], c[key]["mean"], c[key]["se"]) for label, c in curves.items() if key in c]
        if series:
            plots.append(line_plot(title + " (mean ± SE)", "URLs crawled", ylabel, series))
    series = [(label, c["found_vs_visited"]["x"], c["found_vs_visited"]["mean"], None)
              for label, c in curves.items() if "found_vs_visited" in c]  # fmt: skip
    if series:
        plots.append(line_plot("% relevant found vs. % visited", "% of the web visited", "% relevant found", series))
    series = [(label, c["f1_by_threshold"]["x"], c["f1_by_threshold"]["mean"], c["f1_by_threshold"]["se"])
              for label, c in curves.items() if "f1_by_threshold" in c]  # fmt: skip
    if series:
        plots.append(line_plot("F1 vs. similarity threshold", "threshold", "F1", series))
    return plots


SHARE_CLIP = (-0.5, 1.5)  # the share plot's y range: where BFS and oracle nearly meet it swings far


def _share_plots(results: Mapping[str, Any]) -> list[str]:
    """Each strategy's share of the way from BFS (0) to the oracle (1) vs. URLs crawled."""
    info = results.get("share") or {}
    plots = []
    lo, hi = SHARE_CLIP
    for metric in SHARE_METRICS:
        series = []
        for label, by_metric in info.get("labels", {}).items():
            values = by_metric.get(metric)
            if not values:
                continue
            x = results["curves"][label][metric]["x"]
            pts = [(a, min(hi, max(lo, v))) for a, v in zip(x, values, strict=True) if v is not None]
            if pts:
                series.append((label, [a for a, _ in pts], [v for _, v in pts], None))
        if series:
            title = f"Share of the way {info['floor']} → {info['ceiling']}, {metric.replace('_', ' ')}"
            plots.append(line_plot(title, "URLs crawled", f"share (clipped to {lo:g}..{hi:g})", series, y0=None))
    return plots


def _share_table(results: Mapping[str, Any]) -> str:
    """The same shares as a table, at every checkpoint (of the means across topics)."""
    info = results.get("share") or {}
    out = []
    for metric in SHARE_METRICS:
        rows = [(label, m[metric]) for label, m in info.get("labels", {}).items() if metric in m]
        if not rows:
            continue
        x = results["curves"][info["floor"]][metric]["x"]
        idx = share_points(x, 10)  # at most 10 columns: the page stays readable
        out.append(
            f"<h2>Share of the way from {escape(info['floor'])} (0) to {escape(info['ceiling'])} (1): "
            f"{metric.replace('_', ' ')}</h2><p class=\"note\">(strategy − floor) / (ceiling − floor) of the "
            "means across topics at up to 10 of the checkpoints (all in results.json); — where floor and ceiling are equal. The oracle reads "
            "the labels and the link graph (focuscrawl.strategies.oracle): a reference, not a proven "
            "optimum, so a share can exceed 1.</p>"
        )
        out.append(_table(["strategy", *(str(x[i]) for i in idx)],
                          [[label, *("—" if vals[i] is None else f"{vals[i]:.2f}" for i in idx)] for label, vals in rows]))  # fmt: skip
    return "".join(out)


def _bar_plots(results: Mapping[str, Any]) -> list[str]:
    summary = results["summary"]
    plots = []
    layers = sorted({k for s in summary.values() for k in s.get("harvest_by_layer", {})}, key=int)
    if 1 < len(layers) <= 12:  # best-N-first rounds (dozens) are no layers to compare
        series = [(label, [s["harvest_by_layer"].get(k, 0.0) for k in layers]) for label, s in summary.items()]
        plots.append(bar_plot("Harvest rate per layer", "harvest rate", layers, series))
    langs: dict[str, float] = {}
    for s in summary.values():
        for k, v in s.get("languages", {}).items():
            langs[k] = max(langs.get(k, 0.0), v)
    top = sorted(langs, key=lambda k: -langs[k])[:8]
    if len(top) > 1:
        series = [(label, [s["languages"].get(k, 0.0) for k in top]) for label, s in summary.items()]
        plots.append(bar_plot("Language shares of the crawled pages", "share", top, series))
    return plots


def _perplexity_plots(results: Mapping[str, Any]) -> list[str]:
    runs = [r for r in results["runs"] if r.get("perplexity")]
    if not runs:
        return []
    plots = []
    for key, title in (("perplexity", "Held-out perplexity (with OOV)"),
                       ("perplexity_no_oov", "Held-out perplexity (without OOV)")):  # fmt: skip
        series = []
        for r in runs:
            pts = [p for p in r["perplexity"] if p.get(key)]
            if pts:
                series.append((f"{r['topic']} {r['label']}", [p["tokens"] for p in pts], [p[key] for p in pts], None))
        if series:
            plots.append(line_plot(title + " vs. tokens crawled", "tokens crawled", "perplexity", series, y0=None))
    return plots


def _per_topic(results: Mapping[str, Any]) -> str:
    labels = [s["label"] for s in results["strategies"]]
    key = "target_recall" if any("target_recall" in r for r in results["runs"]) else "harvest_rate"
    cell: dict[tuple[str, str], list[float]] = {}
    for r in results["runs"]:
        if r.get(key) is not None:
            cell.setdefault((r["topic"], r["label"]), []).append(float(r[key]))
    rows = []
    for t in results["topics"]:
        vals = [cell.get((t["name"], lab)) for lab in labels]
        rows.append([t["name"], t["seeds"], t["targets"],
                     *("—" if not v else f"{sum(v) / len(v):.3f}" for v in vals)])  # fmt: skip
    return f"<h2>Per topic: {key.replace('_', ' ')} at the budget</h2>" + _table(["topic", "seeds", "targets", *labels], rows)


def render(results: Mapping[str, Any]) -> str:
    plots = _curve_plots(results) + _share_plots(results) + _bar_plots(results) + _perplexity_plots(results)
    overlap = ""
    if results.get("overlap"):
        overlap = "<h2>Overlap of the crawls (Jaccard, mean over topics)</h2>" + _table(
            ["crawls", "pages", "domains"],
            [[f"{o['a']} / {o['b']}", f"{o['page_jaccard']:.3f}", f"{o['domain_jaccard']:.3f}"] for o in results["overlap"]],
        )  # fmt: skip
    strategies = _table(["label", "strategy", "model", "parameters"], [
        [s["label"], s["strategy"], s["model"] or "—", ", ".join(f"{k}={v}" for k, v in s["params"].items()) or "—"]
        for s in results["strategies"]])  # fmt: skip
    notes = f'<p class="note">{escape(results["notes"])}</p>' if results.get("notes") else ""
    return "".join([
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{escape(results['title'])}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(results['title'])}</h1>", notes,
        f"<p>{len(results['topics'])} topics × {len(results['strategies'])} strategies × "
        f"{results['repetitions']} repetition(s); budget {results['budget']} URLs; mode {escape(results['mode'])}; "
        f"{results.get('crawl_seconds', 0.0):.0f} s of crawling (wall clock). Mean ± standard error across topics.</p>",
        "<h2>At the budget</h2>", _summary(results), _share_table(results),
        "<h2>One-tailed paired t-tests at the budget (α = 0.05)</h2>", _tests(results),
        "<h2>Plots</h2><div class=\"plots\">", *plots, "</div>",
        overlap, _per_topic(results), "<h2>Strategies</h2>", strategies,
        f"<script>{SCRIPT}</script></body></html>",
    ])  # fmt: skip


def write_report(exp: Any, results: Mapping[str, Any], path: Path) -> None:
    path.write_text(render(results), encoding="utf-8")
