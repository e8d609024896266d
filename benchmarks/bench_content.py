"""Content as the Web serves it (issue 37), measured on the generated content web
(:mod:`focuscrawl.replay.content_web`) served by the replay server.

1. ``auto``'s rule (:func:`focuscrawl.fetch.render.looks_like_shell`) on every
   article of the web: precision and recall at deciding which pages need a browser.
2. One crawl per ``fetch.render`` mode (keyword model on the topic, whole web):
   the share of script-built relevant articles found relevant, of the deep pages
   only their scripts link to found, pages/s, rendered pages, the PDFs read, and
   the peak RSS of the browser's processes.
3. The duplicate detector against the known copies: precision and recall.

    python benchmarks/bench_content.py [--modes never,auto,always]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import psutil

from focuscrawl.api import crawl_async
from focuscrawl.fetch.render import looks_like_shell
from focuscrawl.relevance.examples import iter_archive_pages
from focuscrawl.replay.content_web import SEEDS, build_content_web
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import labels_path_for

TOPIC = ["kitten", "kittens", "cat", "litter", "feline", "purring", "whiskers", "catnip", "veterinary", "adopt"]


def rule_scores(archive: Path, labels: dict[str, dict[str, Any]]) -> dict[str, float]:
    tp = fp = fn = tn = 0
    for page in iter_archive_pages(archive, only_ok=True):
        label = labels.get(page.url)
        if label is None or label["kind"] not in ("static", "script", "short"):
            continue
        shell, needs = looks_like_shell(page.body), bool(label["needs_render"])
        tp, fp, fn, tn = tp + (shell and needs), fp + (shell and not needs), fn + (needs and not shell), tn + (not shell and not needs)
    return {"precision": tp / max(tp + fp, 1), "recall": tp / max(tp + fn, 1), "tp": tp, "fp": fp, "fn": fn, "tn": tn}


class BrowserMemory(threading.Thread):
    """Samples the summed RSS of this process's Chromium children."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.peak = max(self.peak, _browser_rss(os.getpid()))


def _browser_rss(root: int) -> int:
    """Summed RSS (bytes) of the Chromium processes descending from ``root`` (psutil)."""
    total = 0
    with contextlib.suppress(psutil.Error):
        for proc in psutil.Process(root).children(recursive=True):
            with contextlib.suppress(psutil.Error):  # a process gone since the listing
                if "chrom" in proc.name():
                    total += proc.memory_info().rss
    return total


def crawl(proxy: str, out: Path, render: str) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    memory = BrowserMemory()
    memory.start()
    asyncio.run(crawl_async(
        out, list(SEEDS),
        overrides={"crawl": {"max_pages": 5000}, "fetch": {"proxy": proxy, "delay": 0, "concurrency": 8,
                   "allow_private": ("127.0.0.1",), "render": render}},
        model={"name": "keyword", "keywords": TOPIC},
    ))  # fmt: skip
    memory.done.set()
    rows = [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()]
    summary = json.loads((out / "run.json").read_text())["summary"]
    return rows, summary, memory.peak


def dedup_scores(rows: list[dict[str, Any]], labels: dict[str, dict[str, Any]]) -> dict[str, float]:
    def group(url: str) -> str:
        label = labels.get(url) or {}
        while label.get("copy_of"):
            url = str(label["copy_of"])
            label = labels.get(url) or {}
        return url

    seen: set[str] = set()
    tp = fp = fn = 0
    for row in rows:
        if row.get("status") != 200 or row.get("error"):
            continue
        url, dup = row["url"], row.get("duplicate_of")
        g = group(url)
        is_copy = g in seen  # its group's content was fetched already
        seen.add(g)
        if dup is not None:
            tp, fp = tp + (group(dup) == g), fp + (group(dup) != g)
        elif is_copy:
            fn += 1
    return {"precision": tp / max(tp + fp, 1), "recall": tp / max(tp + fn, 1), "tp": tp, "fp": fp, "fn": fn}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modes", default="never,auto,always")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = build_content_web(Path(tmp))
        labels = {}
        for line in labels_path_for(archive).read_text().splitlines():
            label = json.loads(line)
            labels[label["url"]] = label
        rule = rule_scores(archive, labels)
        print(f"auto's rule on {rule['tp'] + rule['fp'] + rule['fn'] + rule['tn']} articles: precision {rule['precision']:.3f}, "
              f"recall {rule['recall']:.3f} (tp {rule['tp']}, fp {rule['fp']}, fn {rule['fn']})")  # fmt: skip
        scripted = {u for u, lab in labels.items() if lab["kind"] == "script" and lab["relevant"]}
        deep_of_scripted = {u for u in labels if "/deep/" in u and f"{u.split('/deep/')[0]}/{u.split('/deep/')[1].split('-')[0]}.html" in scripted}
        with ReplayProcess([archive]) as replay:
            for mode in args.modes.split(","):
                rows, summary, peak = crawl(replay.proxy_url, Path(tmp) / f"run-{mode}", mode)
                found = {r["url"] for r in rows if r.get("relevant")}
                fetched = {r["url"] for r in rows}
                counters = summary["counters"]
                pdfs = sum(1 for r in rows if r.get("pdf_pages"))
                print(f"render={mode}: {len(rows)} URLs in {summary['elapsed']:.1f} s ({len(rows) / summary['elapsed']:.1f} pages/s); "
                      f"script-built relevant articles found relevant {len(scripted & found)}/{len(scripted)} "
                      f"({len(scripted & found) / len(scripted):.2f}); their deep pages fetched "
                      f"{len(deep_of_scripted & fetched)}/{len(deep_of_scripted)}; rendered {counters.get('render_pages', 0)}, "
                      f"failed {sum(v for k, v in counters.items() if k.startswith('render_failed'))}; PDFs read {pdfs}; "
                      f"browser peak RSS {peak / 2**20:.0f} MiB")  # fmt: skip
                d = dedup_scores(rows, labels)
                print(f"  duplicates: precision {d['precision']:.3f}, recall {d['recall']:.3f} (tp {d['tp']}, fp {d['fp']}, fn {d['fn']})")


if __name__ == "__main__":
    main()
