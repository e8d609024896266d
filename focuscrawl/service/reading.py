"""What the server reads of a run directory: its numbers (the dashboard's), pages,
decisions, ``why URL``, and its search index (kept up to date in the background)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from focuscrawl.dashboard import RunTail
from focuscrawl.output.layout import run_files
from focuscrawl.service.search import SearchIndex
from focuscrawl.why import explain_url

MAX_LIMIT = 1000  # rows one request may ask for


class ServiceTail(RunTail):
    """The dashboard's reading of a run, with the bytes of the pages too (for /metrics)."""

    def _reset(self) -> None:
        super()._reset()
        self.bytes = 0

    def _add(self, line: bytes) -> None:
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if isinstance(row, dict) and isinstance(row.get("size"), int):
            self.bytes += row["size"]
        super()._add(line)


def read_pages(run_dir: Path, offset: int, limit: int) -> list[dict[str, Any]]:
    """Lines ``offset`` .. ``offset + limit`` of the run's pages (fetch order)."""
    out: list[dict[str, Any]] = []
    n = 0
    for path in run_files(run_dir, "pages.jsonl"):
        with open(path, "rb") as fh:
            for line in fh:
                if n >= offset + limit:
                    return out
                if n >= offset:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        continue  # a torn last line: not counted
                n += 1
    return out


def last_lines(path: Path, limit: int, block: int = 1 << 16) -> list[bytes]:
    """The last ``limit`` complete lines of a file, read from its end."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return []
    with fh:
        end = fh.seek(0, os.SEEK_END)
        data = b""
        pos = end
        while pos > 0 and data.count(b"\n") <= limit:
            pos = max(0, pos - block)
            fh.seek(pos)
            data = fh.read(min(block, end - pos)) + data
            end = pos if pos else end
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        lines.pop()  # a line not ended yet
    if pos > 0 and lines:
        lines = lines[1:]  # the first may be cut
    return lines[-limit:] if limit else []


def read_decisions(run_dir: Path, limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` decisions of the run (the newest last)."""
    out = []
    for line in last_lines(run_dir / "decisions.jsonl", limit):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def why(run_dir: Path, url: str) -> dict[str, Any]:
    """``focuscrawl why``'s answer: the decisions that scored ``url``, its row, the text."""
    return explain_url(run_dir, url, need_db=False)


class RunReaders:
    """One tail and one search index per crawl, kept between requests."""

    def __init__(self, meta_root: Path, runs_dir: Path) -> None:
        self.meta_root = meta_root
        self.runs_dir = runs_dir
        self._tails: dict[str, ServiceTail] = {}
        self._indexes: dict[str, SearchIndex] = {}

    def tail(self, name: str) -> ServiceTail:
        tail = self._tails.get(name)
        if tail is None:
            tail = self._tails[name] = ServiceTail(self.runs_dir / name)
        tail.update()
        return tail

    def index(self, name: str) -> SearchIndex:
        index = self._indexes.get(name)
        if index is None:
            index = SearchIndex(self.meta_root / name / "search.db", self.runs_dir / name)
            self._indexes[name] = index
        return index

    def forget(self, name: str) -> None:
        """Drop what is kept of a crawl (deleted): its tail, its index closed once no
        update holds it."""
        self._tails.pop(name, None)
        index = self._indexes.pop(name, None)
        if index is not None:
            with index.lock:
                index.close()

    def close(self) -> None:
        for index in self._indexes.values():
            index.close()
        self._indexes.clear()
