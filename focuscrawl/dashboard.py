"""A live dashboard of one or more crawls, served by ``focuscrawl dashboard RUN [RUN ...]``
(:mod:`focuscrawl.commands.dashboard`).

It follows run directories while their crawls write them, and shows them side by
side on one self-contained page (no script, style or font from anywhere else; the
page reloads its figures once a second): URLs crawled, pages/s now and overall, the
queue, the harvest rate by the crawl's own model and, with ``--labels`` and
``--relevant``, by an independent judge (a label file), as numbers and as curves
over the URLs crawled, the answers' statuses, the busiest hosts and the latest pages.

Each run's ``pages.jsonl`` is read incrementally (only the bytes added since the
last look; a line still being written waits for its end) as far as its crawl DB's
last commit accounts for, as run.json's summary counts (a killed crawl's later lines,
which its resume cuts, made every total fall back at the resume); a file cut back
otherwise is read again from the start. ``run.json`` is re-read when it changes, so
following a crawl costs the crawl nothing. ``/api/runs`` gives the
same numbers as JSON.
"""

from __future__ import annotations

import json
import time
from array import array
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from focuscrawl.evaluation.run import Judge, RunPages
from focuscrawl.evaluation.svg import line_plot
from focuscrawl.exceptions import ConfigError
from focuscrawl.output.committed import committed_offsets
from focuscrawl.output.layout import run_files
from focuscrawl.urls import host_of

_RATE_WINDOW = 10.0  # seconds of fetches behind "URLs/s now"
_IDLE_GAP = (
    30.0  # seconds without a fetch that are no crawling (a stopped crawl, before its resume)
)
_CURVE_POINTS = 200  # points per curve on the page
_RECENT = 12  # latest pages shown per run
_MARK = 64  # bytes read last, looked for again at the next look (a file cut and rewritten)
_READ_CAP = 16 << 20  # bytes of pages.jsonl read per look: a long run is caught up over a few looks


class RunTail:
    """What a run directory holds so far, brought up to date by :meth:`update`."""

    def __init__(self, path: Path, judge: Judge | None = None) -> None:
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{path}: not a run directory")
        # a directory not made yet is waited for: the dashboard may start before the crawl
        self.path = path
        self.name = path.name or str(path)
        self.judge = judge
        # per pages.jsonl read (a shared crawl has one per worker): bytes read so far,
        # and the start of a line not yet ended
        self._read: dict[Path, tuple[int, bytes, bytes]] = {}  # (and the bytes read last)
        self._run_mtime: int | None = None
        self.info: dict[str, Any] = {}
        self._reset()

    def _reset(self) -> None:
        self.urls = 0  # lines of the budget (re-crawls left out, as evaluation counts)
        self.pages = 0  # answered 2xx without error, sitemaps and feeds aside (RunPages.is_page)
        self.recrawls = 0
        self.bad_lines = 0
        self.model_relevant = 0
        self.label_relevant = 0
        self.statuses: Counter[str] = Counter()
        self.hosts: Counter[str] = Counter()
        self.recent: deque[dict[str, Any]] = deque(maxlen=_RECENT)
        self.fetched_at: deque[float] = deque()  # times of the last _RATE_WINDOW seconds
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.active = 0.0  # seconds of crawling: gaps between fetches, idle gaps left out
        # pages and relevant pages after each URL (4 bytes each: ~4 MB per million URLs)
        self.page_curve = array("I")
        self.time_curve = array("d")  # seconds of crawling at each URL
        self.model_curve = array("I")
        self.label_curve = array("I")

    def update(self) -> None:
        """Read what was added to ``pages.jsonl`` (at most ``_READ_CAP`` bytes a look,
        so that the page of a long run answers while it is caught up) and a changed
        ``run.json``. A shared crawl's run directory (``--workers``) is shown as one
        run: its workers' files, each read on from where it was."""
        self._read_run_json()
        for pages in run_files(self.path, "pages.jsonl"):
            self._update_from(pages)

    def _update_from(self, pages: Path) -> None:
        try:
            size = pages.stat().st_size
        except FileNotFoundError:
            return
        committed = committed_offsets(pages.parent)
        if committed is not None:  # a killed crawl's later lines: its resume cuts them
            size = min(size, committed[0])
        offset, rest, mark = self._read.get(pages, (0, b"", b""))
        if size == offset:
            return
        with pages.open("rb") as fh:
            # a resumed crawl cut the file back to its last commit: read everything again;
            # it may have written past where this look left before the next one, so the
            # bytes read last are looked for again where they were
            cut = size < offset
            if not cut and mark:
                fh.seek(offset - len(mark))
                cut = fh.read(len(mark)) != mark
            if cut:
                self._read.clear()
                self._reset()
                offset, rest = 0, b""
            fh.seek(offset)
            data = fh.read(min(size - offset, _READ_CAP))
        data = rest + data
        end = data.rfind(b"\n") + 1
        self._read[pages] = (offset + len(data) - len(rest), data[end:], data[-_MARK:])
        for line in data[:end].splitlines():
            self._add(line)

    def _read_run_json(self) -> None:
        path = self.path / "run.json"
        try:
            mtime = path.stat().st_mtime_ns
            if mtime == self._run_mtime:
                return
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # absent, or being replaced: the last one read stands
            return
        if isinstance(info, dict):
            self.info, self._run_mtime = info, mtime

    def _add(self, line: bytes) -> None:
        try:
            row = json.loads(line)
        except ValueError:
            self.bad_lines += 1
            return
        if not isinstance(row, dict) or "url" not in row:
            self.bad_lines += 1
            return
        if row.get("recrawl"):
            self.recrawls += 1
            return
        url = str(row["url"])
        self.urls += 1
        status, error = row.get("status"), row.get("error")
        self.statuses[str(error) if error and not status else str(status)] += 1
        self.hosts[host_of(url)] += 1
        is_page = RunPages.is_page(row)
        self.pages += is_page
        self.page_curve.append(self.pages)
        self.model_relevant += bool(is_page and row.get("relevant"))
        self.model_curve.append(self.model_relevant)
        label = None
        if self.judge is not None:  # judged where the content was found, as evaluation does
            label = bool(self.judge(RunPages.content_url(row)))
            self.label_relevant += is_page and label
            self.label_curve.append(self.label_relevant)
        when = row.get("fetched_at")
        if isinstance(when, int | float):
            gap = 0.0 if self.last_at is None else when - self.last_at
            if 0 < gap <= _IDLE_GAP:
                self.active += gap
            self.first_at = when if self.first_at is None else min(self.first_at, when)
            self.last_at = when if self.last_at is None else max(self.last_at, when)
            self.fetched_at.append(when)
            while self.fetched_at and self.fetched_at[0] < self.last_at - _RATE_WINDOW:
                self.fetched_at.popleft()
        self.time_curve.append(self.active)
        self.recent.append({
            "url": url, "status": status, "error": error,
            "relevance": row.get("relevance"), "relevant": row.get("relevant"),
            "label": label,
        })  # fmt: skip

    # ----------------------------------------------------------------- figures
    def state(self, now: float | None = None) -> str:
        if not self.info and not self.urls:
            return "waiting"  # no run.json yet (the crawl has not started writing here)
        if self.info.get("finished"):
            return "finished"
        if self.info.get("stopped_early"):
            return "stopped"
        now = time.time() if now is None else now
        if self._run_mtime is not None and now - self._run_mtime / 1e9 < 15:
            return "running"
        return "idle"

    def rate_now(self, now: float | None = None) -> float:
        """URLs per second over the last seconds of fetches (0 when none came lately)."""
        if self.last_at is None or len(self.fetched_at) < 2:
            return 0.0
        now = time.time() if now is None else now
        if now - self.last_at > _RATE_WINDOW:
            return 0.0
        span = max(self.last_at - self.fetched_at[0], 1e-3)
        return (len(self.fetched_at) - 1) / span

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        summary = self.info.get("summary") or {}
        return {
            "name": self.name, "path": str(self.path), "state": self.state(now),
            "strategy": self.info.get("strategy"), "model": self.info.get("model"),
            "max_pages": (self.info.get("settings") or {}).get("crawl", {}).get("max_pages"),
            "urls": self.urls, "pages": self.pages, "recrawls": self.recrawls,
            "bad_lines": self.bad_lines, "queued": summary.get("queued"),
            "urls_per_s_now": round(self.rate_now(now), 2),
            **self._overall_rate(summary),
            "crawl_seconds": round(self.active, 1),
            "has_model": self.has_model,
            "harvest_model": _rate(self.model_relevant, self.pages) if self.has_model else None,
            "harvest_labels": _rate(self.label_relevant, self.pages) if self.judge else None,
            "relevant_model": self.model_relevant,
            "relevant_labels": self.label_relevant if self.judge else None,
            "statuses": dict(self.statuses.most_common()),
            "hosts": len(self.hosts), "top_hosts": self.hosts.most_common(8),
            "recent": list(self.recent)[::-1],
        }  # fmt: skip

    def _overall_rate(self, summary: dict[str, Any]) -> dict[str, Any]:
        """URLs/s overall: the crawl's own figure (run.json's, the summary line's: URLs of
        the budget / seconds its runs took, the time between a stop and its resume left
        out); until the crawl has written one, an estimate from pages.jsonl (the seconds
        between the first and the last fetch, gaps of more than _IDLE_GAP s left out),
        labelled as such."""
        own = summary.get("pages_per_second")
        if isinstance(own, int | float):
            # (not rounded here: shown rounded once, to the figure the crawl's own line says;
            # rounded twice, 54.3496 read 54.4 beside the crawl's 54.3)
            return {"urls_per_s": float(own), "urls_per_s_from": "run.json"}
        estimate = round((self.urls - 1) / self.active, 2) if self.active > 0 else None
        return {"urls_per_s": estimate, "urls_per_s_from": "pages.jsonl"}

    @property
    def has_model(self) -> bool:
        """Whether the crawl has a model (before run.json is read: assumed so)."""
        if not self.info:
            return True
        return bool(self.info.get("model") or (self.info.get("settings") or {}).get("model"))

    def progress_curve(self) -> tuple[list[float], list[float]]:
        """URLs crawled against seconds of crawling, at about ``_CURVE_POINTS`` points."""
        n = len(self.time_curve)
        step = max(1, n // _CURVE_POINTS)
        xs = [*range(step, n + 1, step)]
        if xs and xs[-1] != n:
            xs.append(n)
        return [self.time_curve[x - 1] for x in xs], [float(x) for x in xs]

    def curve(self, by_labels: bool) -> tuple[list[float], list[float]]:
        """The harvest rate among the pages of the first x URLs crawled (the
        evaluation's curve over the budget), at about ``_CURVE_POINTS`` points."""
        cum, pages = (self.label_curve if by_labels else self.model_curve), self.page_curve
        n = len(cum)
        step = max(1, n // _CURVE_POINTS)
        xs = [*range(step, n + 1, step)]
        if xs and xs[-1] != n:
            xs.append(n)
        xs = [x for x in xs if pages[x - 1]]
        return [float(x) for x in xs], [cum[x - 1] / pages[x - 1] for x in xs]


def _rate(relevant: int, pages: int) -> float | None:
    return round(relevant / pages, 4) if pages else None


# ------------------------------------------------------------------- the page
_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.2em;color:#222;background:#fafafa}
h1{font-size:1.3em;margin:0 0 .3em} h2{font-size:1.05em;margin:1.2em 0 .4em}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f0f0f0} td.l,th.l{text-align:left} .muted{color:#777}
.running{color:#1a7f37;font-weight:600} .finished{color:#555} .stopped,.idle,.waiting{color:#b35900}
.plots{display:flex;flex-wrap:wrap;gap:12px} .plot{background:#fff;border:1px solid #ddd}
.plot text{font-size:11px;fill:#333} .plot .title{font-size:13px;font-weight:600}
.plot .grid{stroke:#eee} .plot .frame{fill:none;stroke:#999}
.runs{display:flex;flex-wrap:wrap;gap:16px;margin-top:12px}
.run{background:#fff;border:1px solid #ddd;padding:6px 10px;flex:1 1 520px;max-width:760px;min-width:0}
.run h2{margin-top:.2em} .run table{table-layout:fixed;width:100%;margin-top:6px}
.run td,.run th{font-size:12px} .run th.c{width:64px}
.url{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.yes{color:#1a7f37} .no{color:#999}
"""

_SCRIPT = """
async function tick(){
  try{
    const r = await fetch('fragment', {cache:'no-store'});
    if(r.ok){ document.getElementById('live').innerHTML = await r.text();
              document.getElementById('clock').textContent = new Date().toLocaleTimeString(); }
    else document.getElementById('clock').textContent = 'server answered ' + r.status;
  }catch(e){ document.getElementById('clock').textContent = 'dashboard server gone'; }
}
setInterval(tick, EVERY_MS);
"""


def _num(v: Any, fmt: str = "{:,}") -> str:
    return "–" if v is None else fmt.format(v)


def render_fragment(
    tails: Sequence[RunTail], now: float | None = None, states: Mapping[str, str] | None = None
) -> str:
    """The live part of the page: the table, the curves and each run's latest pages;
    ``states``: a run's state as its owner knows it (the server's: failed, paused...)."""
    snaps = [{**snap, "state": (states or {}).get(snap["name"], snap["state"])}
             for snap in (t.snapshot(now) for t in tails)]  # fmt: skip
    judged = any(t.judge is not None for t in tails)
    head = ["run", "state", "strategy", "model", "URLs", "pages", "URLs/s now", "URLs/s",
            "queued", "harvest (model)"] + (["harvest (labels)"] if judged else []) + ["hosts"]  # fmt: skip
    tips = {"URLs": "URLs crawled (every URL of the budget) / the budget",
            "pages": "answers 200 without error (HTML or PDF; sitemaps and feeds aside)", "URLs/s now": "over the last 10 s of fetches",
            "URLs/s": "the crawl's own figure (run.json, the summary line): URLs / seconds its runs "
                      "took (the time between a stop and its resume left out); marked ~ while "
                      "estimated from pages.jsonl before the crawl wrote one",
            "harvest (model)": "relevant pages / pages, by the crawl's own model",
            "harvest (labels)": "relevant pages / pages, by the label file"}  # fmt: skip
    rows = []
    for s in snaps:
        budget = f" / {s['max_pages']:,}" if s["max_pages"] else ""
        cells = [
            f'<td class="l">{escape(s["name"])}</td>',
            f'<td class="l {s["state"]}">{s["state"]}</td>',
            f'<td class="l">{escape(str(s["strategy"] or "–"))}</td>',
            f'<td class="l">{escape(str(s["model"] or "–"))}</td>',
            f"<td>{s['urls']:,}{budget}</td>", f"<td>{s['pages']:,}</td>",
            f"<td>{_num(s['urls_per_s_now'] if s['state'] == 'running' else None, '{:.1f}')}</td>",
            f"<td>{'~' if s['urls_per_s_from'] != 'run.json' and s['urls_per_s'] else ''}"
            f"{_num(s['urls_per_s'], '{:.1f}')}</td>",
            f"<td>{_num(s['queued'])}</td>",
            f"<td>{_num(s['harvest_model'], '{:.3f}')} <span class=muted>({s['relevant_model']:,})</span></td>"
            if s["has_model"] else '<td class="muted">no model</td>',
        ]  # fmt: skip
        if judged:
            cells.append(f"<td>{_num(s['harvest_labels'], '{:.3f}')} "
                         f"<span class=muted>({_num(s['relevant_labels'])})</span></td>")  # fmt: skip
        cells.append(f"<td>{s['hosts']:,}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = ("<table><tr>" + "".join(f'<th class="{"l" if i < 4 else ""}" title="{tips.get(h, "")}">{h}</th>'
                                     for i, h in enumerate(head))
             + "</tr>" + "".join(rows) + "</table>")  # fmt: skip
    plots = []
    progress = [(t.name, *t.progress_curve(), None) for t in tails if len(t.time_curve) > 1]
    budgets = {s["max_pages"] for s in snaps if s["max_pages"]}
    if progress:
        mark = None
        if len(budgets) == 1:  # the runs' one budget
            budget = next(iter(budgets))
            mark = (float(budget), f"budget: {budget:,} URLs")
        plots.append(line_plot("URLs crawled over time", "seconds of crawling (pauses left out)",
                               "URLs crawled", progress, mark=mark))  # fmt: skip
    for by_labels in (True, False) if judged else (False,):
        series = [(t.name, *t.curve(by_labels), None) for t in tails if t.pages and (by_labels or t.has_model)]
        if series:
            judge = "labels" if by_labels else "the crawl's model"
            plots.append(line_plot(f"Harvest rate by {judge}", "URLs crawled",
                                   "harvest rate (relevant pages / pages)", series))  # fmt: skip
    runs = []
    for s in snaps:
        statuses = ", ".join(f"{escape(k)}: {v:,}" for k, v in s["statuses"].items())
        hosts = ", ".join(f"{escape(h)} ({n:,})" for h, n in s["top_hosts"])
        recent = "".join(
            f'<tr><td class="l url" title="{escape(p["url"])}">{escape(p["url"])}</td>'
            f"<td>{escape(str(p['status'] or p['error']))}</td>"
            f"<td>{_num(p['relevance'], '{:.3f}')}</td>"
            f'<td class="{"yes" if p["relevant"] else "no"}">{"yes" if p["relevant"] else "no"}</td>'
            + (f'<td class="{"yes" if p["label"] else "no"}">{"yes" if p["label"] else "no"}</td>'
               if judged else "")
            + "</tr>"
            for p in s["recent"]
        )  # fmt: skip
        label_head = '<th class="c">label</th>' if judged else ""
        where = "" if s["path"] == s["name"] else f" <span class=muted>{escape(s['path'])}</span>"
        runs.append(
            f'<div class="run"><h2>{escape(s["name"])}{where}</h2>'
            f"<div>statuses: {statuses or '–'}</div><div>busiest hosts: {hosts or '–'}</div>"
            f'<table><tr><th class=l>latest pages</th><th class="c">status</th><th class="c">relevance</th>'
            f'<th class="c">relevant</th>{label_head}</tr>{recent}</table></div>'
        )
    return (f"{table}<div class=plots>{''.join(plots)}</div>"
            f"<div class=runs>{''.join(runs)}</div>")  # fmt: skip


def render_page(tails: Sequence[RunTail], every: float, now: float | None = None) -> str:
    """The whole page: the fragment as it is now, and the script that renews it."""
    names = ", ".join(t.name for t in tails)
    script = _SCRIPT.replace("EVERY_MS", str(max(100, round(every * 1000))))
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>focuscrawl: {escape(names)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>focuscrawl dashboard</h1><div class=muted>{len(tails)} run(s), "
        f"renewed every {every:g} s; last: <span id=clock>now</span></div>"
        f"<div id=live>{render_fragment(tails, now)}</div><script>{script}</script></body></html>"
    )
