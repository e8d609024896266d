"""The replay server's request log: one TSV line per request, to check politeness.

Columns: start time (unix seconds, microseconds), client port, method, host
(lower-cased, ``:port`` when not the scheme's default), path with query,
status (0 when no answer was sent: ``reset``, ``timeout``), body bytes sent,
and a note (the injected fault, or ``-``). Each line is flushed as written so
another process can read the log while the server runs.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from focuscrawl.exceptions import ArchiveError, ConfigError

_UNSAFE = str.maketrans({"\t": "%09", "\n": "%0A", "\r": "%0D"})


@dataclass(frozen=True, slots=True)
class LogEntry:
    time: float
    client: int
    method: str
    host: str
    path: str
    status: int
    nbytes: int
    note: str = "-"

    def line(self) -> str:
        fields = (
            f"{self.time:.6f}",
            str(self.client),
            self.method,
            self.host,
            self.path,
            str(self.status),
            str(self.nbytes),
            self.note or "-",
        )
        return "\t".join(field.translate(_UNSAFE) for field in fields) + "\n"


class RequestLog:
    """Appends ``LogEntry`` lines to a file (or nowhere when ``path`` is None)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh: TextIO | None = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
            except OSError as exc:
                raise ConfigError(
                    f"{path}: cannot write the request log ({exc.strerror})"
                ) from None

    def write(self, entry: LogEntry) -> None:
        if self._fh is not None:
            self._fh.write(entry.line())
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_log(path: Path | str) -> list[LogEntry]:
    """The entries of a request log, sorted by start time."""
    entries: list[LogEntry] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                fields = line.rstrip("\n").split("\t")
                if fields == [""]:
                    continue
                try:
                    time, client, method, host, req_path, status, nbytes, note = fields
                    entries.append(
                        LogEntry(
                            float(time),
                            int(client),
                            method,
                            host,
                            req_path,
                            int(status),
                            int(nbytes),
                            note,
                        )
                    )
                except ValueError:
                    raise ArchiveError(f"{path}:{lineno}: not a request-log line") from None
    except FileNotFoundError:
        raise ArchiveError(f"{path}: no such request log") from None
    entries.sort(key=lambda entry: entry.time)
    return entries


def min_host_interval(entries: Iterable[LogEntry]) -> dict[str, float]:
    """Per host, the smallest gap between the starts of two of its requests.

    Hosts asked only once are left out.

    >>> log = [LogEntry(t, 1, "GET", h, "/", 200, 0) for t, h in
    ...        [(10.0, "a"), (11.5, "a"), (12.0, "b"), (12.25, "a"), (20.0, "c"), (13.0, "b")]]
    >>> min_host_interval(log)
    {'a': 0.75, 'b': 1.0}
    """
    starts: defaultdict[str, list[float]] = defaultdict(list)
    for entry in entries:
        starts[entry.host].append(entry.time)
    gaps: dict[str, float] = {}
    for host, times in starts.items():
        times.sort()
        if len(times) > 1:
            gaps[host] = min(b - a for a, b in itertools.pairwise(times))
    return gaps
