"""Small inline-SVG plots for the experiment report: no library, no CDN, readable offline."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

# 12 distinct colours: experiments with BFS, the oracle and up to 10 strategies never repeat one
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#000000", "#bcbd22", "#7f7f7f", "#aec7e8",
)
W, H = 560, 320
LEFT, RIGHT, TOP, BOTTOM = 60, 170, 30, 45  # margins; the legend sits on the right


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi].

    >>> nice_ticks(0, 1), nice_ticks(0, 1000)
    ([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0])
    >>> nice_ticks(0, 0.55)
    [0.0, 0.2, 0.4, 0.6]
    """
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    count = math.ceil((hi - start) / step - 1e-9)  # the last tick at or above hi
    return [float(round(start + k * step, 10)) for k in range(count + 1)]


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e5 else f"{v:.0e}"


class _Frame:
    def __init__(self, xs: Sequence[float], ys: Sequence[float], *, y0: float | None = 0.0, log_y: bool = False) -> None:
        self.log_y = log_y
        fy = [math.log10(y) for y in ys if y > 0] if log_y else list(ys)
        self.xt = nice_ticks(min(xs, default=0.0), max(xs, default=1.0))
        lo = min(fy, default=0.0) if (y0 is None or log_y) else min(y0, *fy) if fy else y0
        self.yt = nice_ticks(lo, max(fy, default=1.0))

    def x(self, v: float) -> float:
        a, b = self.xt[0], self.xt[-1]
        return LEFT + (v - a) / ((b - a) or 1) * (W - LEFT - RIGHT)

    def y(self, v: float) -> float:
        if self.log_y:
            v = math.log10(v) if v > 0 else self.yt[0]
        a, b = self.yt[0], self.yt[-1]
        return H - BOTTOM - (v - a) / ((b - a) or 1) * (H - TOP - BOTTOM)

    def axes(self, title: str, xlabel: str, ylabel: str) -> list[str]:
        out = [f'<text x="{W / 2 - RIGHT / 2:.0f}" y="18" class="title" text-anchor="middle">{escape(title)}</text>']
        for t in self.xt:
            x = self.x(t)
            out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{H - BOTTOM}" class="grid"/>')
            out.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 15}" text-anchor="middle">{_fmt(t)}</text>')
        for t in self.yt:
            y = self.y(10**t if self.log_y else t)
            label = _fmt(10**t) if self.log_y else _fmt(t)
            out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" class="grid"/>')
            out.append(f'<text x="{LEFT - 5}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" class="frame"/>')
        out.append(f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" text-anchor="middle">{escape(xlabel)}</text>')
        out.append(f'<text x="14" y="{(TOP + H - BOTTOM) / 2:.0f}" text-anchor="middle" '
                   f'transform="rotate(-90 14 {(TOP + H - BOTTOM) / 2:.0f})">{escape(ylabel)}</text>')  # fmt: skip
        return out


def _legend(names: Sequence[str]) -> list[str]:
    out = []
    for i, name in enumerate(names):
        y = TOP + 10 + 18 * i
        color = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{W - RIGHT + 12}" y="{y - 8}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{W - RIGHT + 30}" y="{y + 2}">{escape(name[:22])}</text>')
    return out


def _svg(body: list[str], kind: str) -> str:
    return (f'<svg class="plot {kind}" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'viewBox="0 0 {W} {H}" role="img">' + "".join(body) + "</svg>")  # fmt: skip


def line_plot(
    title: str, xlabel: str, ylabel: str,
    series: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[float] | None]],
    *, log_y: bool = False, y0: float | None = 0.0, mark: tuple[float, str] | None = None,
) -> str:  # fmt: skip
    """Lines with optional ±error bars; series = (name, xs, ys, errors or None); ``mark``
    a dashed horizontal line at a y value, labelled (e.g. a crawl's budget).

    >>> svg = line_plot("t", "x", "y", [("a", [1, 2], [0.5, 0.7], [0.1, 0.1])], mark=(1.0, "budget"))
    >>> svg.count("<polyline"), svg.count('class="err"'), svg.count('class="mark"')
    (1, 2, 1)
    """
    xs = [x for _, sx, _, _ in series for x in sx]
    ys = [y + (e[i] if e else 0) for _, _, sy, e in series for i, y in enumerate(sy)]
    frame = _Frame(xs, ys + ([mark[0]] if mark else []), log_y=log_y, y0=y0)
    body = frame.axes(title, xlabel, ylabel)
    if mark is not None:
        y = frame.y(mark[0])
        body.append(f'<line class="mark" x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" '
                    'stroke="#555" stroke-dasharray="5,4"/>')  # fmt: skip
        body.append(f'<text x="{LEFT + 4}" y="{y + 13:.1f}">{escape(mark[1])}</text>')  # under it: clear of the title
    for i, (_, sx, sy, err) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        pts = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}" for x, y in zip(sx, sy, strict=True))
        body.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        for j, (x, y) in enumerate(zip(sx, sy, strict=True)):
            if err and err[j] > 0:
                body.append(f'<line class="err" x1="{frame.x(x):.1f}" y1="{frame.y(y - err[j]):.1f}" '
                            f'x2="{frame.x(x):.1f}" y2="{frame.y(y + err[j]):.1f}" stroke="{color}"/>')  # fmt: skip
    body += _legend([name for name, _, _, _ in series])
    return _svg(body, "line")


def bar_plot(title: str, ylabel: str, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float]]]) -> str:
    """Grouped bars: one group per category (layer, language), one bar per series.

    >>> bar_plot("t", "y", ["0", "1"], [("a", [0.2, 0.4]), ("b", [0.1, 0.3])]).count('class="bar"')
    4
    """
    vals = [v for _, vs in series for v in vs]
    frame = _Frame([0, 1], vals)
    body = frame.axes(title, "", ylabel)
    body = [b for b in body if 'text-anchor="middle">' not in b or "title" in b or "rotate" in b]
    width = (W - LEFT - RIGHT) / max(len(groups), 1)
    bar = width * 0.8 / max(len(series), 1)
    for g, group in enumerate(groups):
        gx = LEFT + g * width + width * 0.1
        body.append(f'<text x="{gx + width * 0.4:.1f}" y="{H - BOTTOM + 15}" text-anchor="middle">{escape(group[:10])}</text>')
        for i, (_, vs) in enumerate(series):
            v = vs[g] if g < len(vs) else 0.0
            y = frame.y(v)
            body.append(f'<rect class="bar" x="{gx + i * bar:.1f}" y="{y:.1f}" width="{bar:.1f}" '
                        f'height="{max(0.0, H - BOTTOM - y):.1f}" fill="{PALETTE[i % len(PALETTE)]}"/>')  # fmt: skip
    body += _legend([name for name, _ in series])
    return _svg(body, "bars")
