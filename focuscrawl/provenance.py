"""Provenance: why every URL has its priority.

The engine writes one line to ``decisions.jsonl`` for every decision a
strategy returns (a fetched page, a failure, the seeds, a fetch list, a tick,
a layer end, a parameter change), in the same exactly-once commit as
``pages.jsonl``. A line holds the event, the page it is about with its score
and relevance then, and what the strategy asked for, each with the short reason
the strategy gave (which parent, which equation term):

``{"event": "page", "n": 17, "url": ..., "score": 0.5, "relevance": 0.9,
"links": [[url, score, reason, merge, tier], ...], "updates": [[url, value, reason, merge, column], ...],
"siblings": [score, reason], "hosts": [[host, score, merge]], "recrawl": [...],
"dropped": {"scope:too-deep": 2, "filter:language": 5}}``

(``merge`` / ``tier`` / ``column`` are left out of a link or update that uses the
default.) :func:`explain` reads the log back for ``focuscrawl why``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from focuscrawl.output.layout import run_files
from focuscrawl.types import Decision, Merge

DECISIONS_NAME = "decisions.jsonl"


def decision_record(
    event: str,
    decision: Decision,
    *,
    default_merge: Merge,
    url: str | None = None,
    n: int | None = None,
    score: float | None = None,
    relevance: float | None = None,
    dropped: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """One ``decisions.jsonl`` line (a plain dict, written by JsonlOutput)."""
    rec: dict[str, Any] = {"event": event}
    if n is not None:
        rec["n"] = n
    if url is not None:
        rec["url"] = url
    if score is not None:
        rec["score"] = score
    if relevance is not None:
        rec["relevance"] = round(relevance, 6)
    if decision.links:
        links = []
        for ls in decision.links:
            item: list[Any] = [ls.link.url, ls.score, ls.reason]
            if ls.tier or (ls.merge is not None and ls.merge is not default_merge):
                item += [(ls.merge or default_merge).value, ls.tier or 0]
            links.append(item)
        rec["links"] = links
    if decision.updates:
        updates = []
        for up in decision.updates:
            entry: list[Any] = [up.url, up.score, up.reason, up.merge.value]
            if up.column != "score":
                entry.append(up.column)
            updates.append(entry)
        rec["updates"] = updates
    if decision.raise_siblings is not None:
        rec["siblings"] = [decision.raise_siblings, decision.reason]
    if decision.host_updates:
        rec["hosts"] = [[h, s, m.value] for h, s, m in decision.host_updates]
    if decision.tiers:
        rec["tiers"] = [[u, t] for u, t in decision.tiers]
    if decision.recrawl:
        rec["recrawl"] = list(decision.recrawl)
    if decision.column_ops:
        rec["columns"] = [
            [op.dst, [list(t) for t in op.terms], op.add] for op in decision.column_ops
        ]
    if decision.reason:
        rec["reason"] = decision.reason
    if dropped:
        rec["dropped"] = dict(dropped)
    return rec


def iter_decisions(run_dir: Path, needle: str | None = None) -> Iterator[dict[str, Any]]:
    """The records of a run's decision log (only lines mentioning ``needle``, if given);
    a shared crawl's (``--workers``): its workers' logs, one after the other."""
    for _, rec in _worker_decisions(Path(run_dir), needle):
        yield rec


def _worker_decisions(run_dir: Path, needle: str | None) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """(the worker that wrote it, or None for the run's own log; the record)."""
    key = json.dumps(needle, ensure_ascii=False)[1:-1] if needle else None
    for path in run_files(run_dir, DECISIONS_NAME):
        worker = None if path.parent == run_dir else path.parent.name
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if key is not None and key not in line:
                    continue
                try:
                    yield worker, json.loads(line)
                except ValueError:
                    continue  # a torn last line of a killed run (cut back on resume)


def explain(run_dir: Path, url: str) -> dict[str, Any]:
    """Every decision that touched ``url``: where it came from and what each parent gave.

    Returns ``{"url", "fetched": record or None, "contributions": [...], "own": [...]}``;
    each contribution is ``{"event", "from", "n", "from_score", "from_relevance",
    "kind" (link / update / sibling / host / recrawl / seed), "value", "merge", "reason"}``,
    and, in a shared crawl, the ``worker`` whose log holds it (each worker numbers its
    own results: its ``n`` is the worker's).
    """
    contributions: list[dict[str, Any]] = []
    own: list[dict[str, Any]] = []
    for worker, rec in _worker_decisions(Path(run_dir), url):
        base = {
            "event": rec.get("event"),
            "from": rec.get("url"),
            "n": rec.get("n"),
            "from_score": rec.get("score"),
            "from_relevance": rec.get("relevance"),
        }
        if worker is not None:  # each worker numbers its own results: #n alone is ambiguous
            base["worker"] = worker
        if rec.get("url") == url:
            own.append(rec if worker is None else {**rec, "worker": worker})
        for item in rec.get("links", ()):
            if item[0] == url:
                merge = item[3] if len(item) > 3 else None
                kind = "seed" if rec.get("event") == "seeds" else "link"
                contributions.append(
                    {**base, "kind": kind, "value": item[1], "merge": merge, "reason": item[2]}
                )
        for item in rec.get("updates", ()):
            if item[0] == url:
                column = item[4] if len(item) > 4 else "score"
                contributions.append(
                    {**base, "kind": "update" if column == "score" else f"column:{column}",
                     "value": item[1], "merge": item[3], "reason": item[2]}
                )  # fmt: skip
        if url in rec.get("recrawl", ()):
            contributions.append(
                {**base, "kind": "recrawl", "value": None, "merge": None, "reason": ""}
            )
    return {"url": url, "contributions": contributions, "own": own}


def format_explanation(info: Mapping[str, Any], row: Mapping[str, Any] | None) -> str:
    """The text ``focuscrawl why`` prints."""
    lines = [str(info["url"])]
    if row is None:
        lines.append("  not in the crawl DB (never linked from a fetched page, or filtered out)")
    else:
        lines.append("  now: {state}, score {score:.6g}, tier {tier}, depth {depth}".format(**row))
        # the relevance column holds a judged page's score; any other URL's is the
        # column's fill value, no judgement: shown only for a page the model judged
        judged = any(r.get("event") == "page" and r.get("relevance") is not None for r in info["own"])
        for name, value in sorted(row.get("columns", {}).items()):
            if name != "relevance" or judged:
                lines.append(f"  {name} = {value:.6g}")
    contribs = info["contributions"]
    if not contribs:
        lines.append("  no recorded decision gave it a score")
    for c in contribs:
        src = c["from"] or "(seed list)"
        where = f"#{c['n']} " if c.get("n") is not None else ""
        if c.get("worker") is not None:
            where += f"(worker {c['worker']}) "
        ctx = []
        if c.get("from_score") is not None:
            ctx.append(f"score {c['from_score']:.6g}")
        if c.get("from_relevance") is not None:
            ctx.append(f"relevance {c['from_relevance']:.6g}")
        value = "" if c["value"] is None else f" {c['value']:.6g}"
        merge = f" ({c['merge']})" if c.get("merge") else ""
        reason = f": {c['reason']}" if c.get("reason") else ""
        lines.append(
            f"  <- {c['event']} {where}{src}"
            + (f" [{', '.join(ctx)}]" if ctx else "")
            + f" {c['kind']}{value}{merge}{reason}"
        )
    for rec in info["own"]:
        if rec.get("event") == "page":
            n_links = len(rec.get("links", ()))
            lines.append(
                f"  fetched as #{rec.get('n')}"
                + (f" by worker {rec['worker']}" if rec.get("worker") is not None else "")
                + f" with score {rec.get('score')}, "
                + ("not judged (no model, or not a page it judges)" if rec.get("relevance") is None
                   else f"relevance {rec.get('relevance')}")
                + f", gave scores to {n_links} links"
            )
    return "\n".join(lines)
