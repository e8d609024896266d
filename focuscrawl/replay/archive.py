"""Reading WARC archives and their label files (warcio).

``iter_responses`` streams the ``response`` records of one or more archives;
``ArchiveIndex`` maps each target URL to the record's offset so that a record
is read only when it is asked for (the replay server serves from it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from focuscrawl.exceptions import ArchiveError


@dataclass(slots=True)
class ArchivedResponse:
    url: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    archive: str = ""
    offset: int = 0
    warc_date: str = ""

    def header(self, name: str, default: str = "") -> str:
        low = name.lower()
        for key, value in self.headers:
            if key.lower() == low:
                return value
        return default

    @property
    def content_type(self) -> str:
        return self.header("Content-Type")


def _response_from_record(record: Any, archive: str, offset: int) -> ArchivedResponse:
    url = record.rec_headers.get_header("WARC-Target-URI") or ""
    http = record.http_headers
    status, reason = 200, "OK"
    headers: list[tuple[str, str]] = []
    if http is not None:
        code = http.get_statuscode() or "200"
        try:
            status = int(code)
        except ValueError:
            status = 200
        # warcio splits the status line: protocol "HTTP/1.1", statusline "200 OK"
        statusline = http.statusline or ""
        reason = statusline.split(" ", 1)[1] if " " in statusline else ""
        headers = list(http.headers)
    body = record.content_stream().read()
    return ArchivedResponse(
        url=url,
        status=status,
        reason=reason,
        headers=headers,
        body=body,
        archive=archive,
        offset=offset,
        warc_date=record.rec_headers.get_header("WARC-Date") or "",
    )


def iter_responses(paths: Path | str | Iterable[Path | str]) -> Iterator[ArchivedResponse]:
    """Every ``response`` record of the archives, in file order."""
    if isinstance(paths, str | Path):
        paths = [paths]
    for path in paths:
        try:
            with open(path, "rb") as fh:
                iterator = ArchiveIterator(fh)
                for record in iterator:
                    if record.rec_type != "response":
                        continue
                    # the body first: get_record_offset() reads the record to its end
                    response = _response_from_record(record, str(path), 0)
                    response.offset = iterator.get_record_offset()
                    yield response
        except FileNotFoundError:
            raise ArchiveError(f"{path}: no such archive") from None
        except ArchiveLoadFailed as exc:
            raise ArchiveError(f"{path}: not a readable WARC ({exc})") from None


def read_response_at(path: Path | str, offset: int) -> ArchivedResponse:
    """The response record that starts at ``offset`` in ``path``."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        for record in ArchiveIterator(fh):
            return _response_from_record(record, str(path), offset)
    raise ArchiveError(f"{path}: no record at offset {offset}")


@dataclass
class ArchiveIndex:
    """URL -> (archive, offset) for every response record of some archives."""

    entries: dict[str, tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def build(cls, paths: Iterable[Path | str]) -> ArchiveIndex:
        index = cls()
        for path in paths:
            try:
                with open(path, "rb") as fh:
                    iterator = ArchiveIterator(fh)
                    for record in iterator:
                        if record.rec_type != "response":
                            continue
                        url = record.rec_headers.get_header("WARC-Target-URI") or ""
                        # the first record of a URL wins, as in the archive's own convention
                        index.entries.setdefault(url, (str(path), iterator.get_record_offset()))
            except FileNotFoundError:
                raise ArchiveError(f"{path}: no such archive") from None
            except ArchiveLoadFailed as exc:
                raise ArchiveError(f"{path}: not a readable WARC ({exc})") from None
        return index

    def get(self, url: str) -> ArchivedResponse | None:
        where = self.entries.get(url)
        if where is None:
            return None
        return read_response_at(*where)

    def __contains__(self, url: object) -> bool:
        return url in self.entries

    def __len__(self) -> int:
        return len(self.entries)


def load_labels(path: Path | str) -> dict[str, dict[str, Any]]:
    """A ``*.labels.jsonl`` file as ``{url: label object}``; bad lines are an error."""
    labels: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                labels[str(obj["url"])] = obj
            except (ValueError, KeyError, TypeError):
                raise ArchiveError(f"{path}:{lineno}: not a label line") from None
    return labels
