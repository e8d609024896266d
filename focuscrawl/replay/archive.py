"""Reading WARC archives and their label files (warcio).

``iter_responses`` streams the ``response`` records of one or more archives;
``ArchiveIndex`` maps each target URL to the record's offset so that a record
is read only when it is asked for (the replay server serves from it).
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from focuscrawl.exceptions import ArchiveError
from focuscrawl.urls import normalize_escapes, normalize_url

log = logging.getLogger(__name__)


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


_SCAN_CHUNK = 16384
_HEADER_END = b"\r\n\r\n"


def _warc_header(block: bytes) -> tuple[str, str, str] | None:
    """(WARC-Type, WARC-Target-URI, WARC-Refers-To-Target-URI) of a record's header
    block, None if it is not one."""
    if not block.startswith(b"WARC/"):
        return None
    rec_type = uri = refers = ""
    for line in block.split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        if not colon:
            continue
        key = name.strip().lower()
        if key == b"warc-type":
            rec_type = value.strip().decode("latin-1")
        elif key == b"warc-target-uri":
            try:
                uri = value.strip().decode("utf-8")
            except UnicodeDecodeError:
                uri = value.strip().decode("latin-1")
        elif key == b"warc-refers-to-target-uri":
            refers = value.strip().decode("utf-8", "replace")
    return rec_type, _repaired(uri), _repaired(refers)


def _repaired(uri: str) -> str:
    """As warcio does: <uri> (a Wget 1.19 bug) and spaces are repaired."""
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
    return uri.replace(" ", "%20")


@dataclass
class _Scan:
    """What the fast scan found: the response records, and where the file is cut short
    (the offset of a gzip member that ends before the file does; None: it is whole),
    and the revisit records that name the URL whose payload they repeat."""

    found: list[tuple[str, int]]
    cut_at: int | None = None
    revisits: list[tuple[str, str]] = field(default_factory=list)


def _scan_gzip_members(path: Path | str) -> _Scan | None:
    """(URL, offset) of the response records of a gzip-per-record WARC, read with
    zlib directly: three to four times faster than warcio, which reads each
    record through Python-level buffers. None when the file is not such a WARC
    (plain, one gzip stream for many records, odd headers): warcio then decides.
    A file that is none (no WARC record, no gzip at its start) is an ArchiveError:
    warcio would warn once per line of it and find nothing."""
    found: list[tuple[str, int]] = []
    revisits: list[tuple[str, str]] = []
    with open(path, "rb") as fh:
        data = memoryview(fh.read())
    if bytes(data[:2]) != b"\x1f\x8b":
        if data and not bytes(data[:16]).lstrip().startswith((b"WARC/", b"filedesc:")):
            raise ArchiveError(f"{path}: not a WARC archive (it starts with {bytes(data[:16])!r})")
        return None
    pos, size = 0, len(data)
    try:
        while pos < size:
            inflater = zlib.decompressobj(31)
            head = b""
            fed = pos
            while not inflater.eof:
                if fed >= size:  # warcio would end here too, without a word
                    return _Scan(found, pos, revisits) if found else None
                chunk = data[fed : fed + _SCAN_CHUNK]
                fed += len(chunk)
                out = inflater.decompress(chunk)
                if len(head) < 65536 and _HEADER_END not in head:
                    head += out[:65536]
            header = head.split(_HEADER_END, 1)
            fields = _warc_header(header[0]) if len(header) == 2 else None
            if fields is None:
                return None
            if fields[0] == "response":
                found.append((fields[1], pos))
            elif fields[0] == "revisit" and fields[2]:
                revisits.append((fields[1], fields[2]))
            pos = fed - len(inflater.unused_data)
    except zlib.error:
        return None
    return _Scan(found, None, revisits)


def _scan_or_none(path: Path | str) -> _Scan | OSError | ArchiveError | None:
    try:
        return _scan_gzip_members(path)
    except (OSError, ArchiveError) as exc:  # reported in file order by the caller
        return exc


@dataclass
class ArchiveIndex:
    """URL -> (archive, offset) for every response record of some archives."""

    entries: dict[str, tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def build(cls, paths: Iterable[Path | str]) -> ArchiveIndex:
        index = cls()
        paths = list(paths)
        revisits: list[tuple[str, str]] = []  # (URL, the URL whose payload it repeats)
        # zlib inflates without the GIL: archives are scanned side by side
        with ThreadPoolExecutor(max_workers=min(2, max(1, len(paths)))) as pool:
            scans = list(pool.map(_scan_or_none, paths))
        for path, fast in zip(paths, scans, strict=True):
            try:
                if isinstance(fast, BaseException):
                    raise fast
                if fast is not None:
                    for url, offset in fast.found:
                        index.entries.setdefault(url, (str(path), offset))
                    revisits += fast.revisits
                    if fast.cut_at is not None:
                        log.warning("%s is cut short: the record at byte %d ends past the file's end; "
                                    "the %d response records before it are used", path, fast.cut_at,
                                    len(fast.found))  # fmt: skip
                    continue
                responses = 0
                with open(path, "rb") as fh:
                    iterator = ArchiveIterator(fh)
                    for record in iterator:
                        if record.rec_type == "revisit":
                            refers = record.rec_headers.get_header("WARC-Refers-To-Target-URI")
                            if refers:
                                revisits.append((record.rec_headers.get_header("WARC-Target-URI") or "", refers))
                        if record.rec_type != "response":
                            continue
                        responses += 1
                        url = record.rec_headers.get_header("WARC-Target-URI") or ""
                        # the first record of a URL wins, as in the archive's own convention
                        index.entries.setdefault(url, (str(path), iterator.get_record_offset()))
                if not responses:
                    raise ArchiveError(f"{path}: no response record in it (an empty or cut-short archive)")
            except FileNotFoundError:
                raise ArchiveError(f"{path}: no such archive") from None
            except IsADirectoryError:
                raise ArchiveError(f"{path}: is a directory, not an archive") from None
            except ArchiveLoadFailed as exc:
                raise ArchiveError(f"{path}: not a readable WARC ({exc})") from None
        # a URL archived only as a revisit (a deduplicating crawler's: the same payload as
        # another URL's) is answered with the record it refers to, as a replay tool does
        for url, refers in revisits:
            if url not in index.entries and refers in index.entries:
                index.entries[url] = index.entries[refers]
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


class Labels(dict[str, dict[str, Any]]):
    """``{url: label object}`` that also answers for a URL in the crawler's normal form
    (:func:`~focuscrawl.urls.normalize_url`), as pages.jsonl records it: percent-escapes as
    RFC 3986 6.2.2 writes them (``%2f`` is ``%2F``, ``%7e`` is ``~``), a host's trailing
    dot dropped (``http://a.edu./x`` is ``http://a.edu/x``), the host lower-cased, the
    default port dropped; iteration and ``len`` see each labelled URL once."""

    def __init__(self) -> None:
        super().__init__()
        self._aliases: dict[str, str] = {}

    def add(self, url: str, label: dict[str, Any]) -> None:
        self[url] = label
        canon = normalize_url(url) or normalize_escapes(url)
        if canon != url:
            self._aliases.setdefault(canon, url)

    def __missing__(self, url: str) -> dict[str, Any]:
        raw = self._aliases.get(url)
        if raw is None:
            raise KeyError(url)
        return dict.__getitem__(self, raw)

    def get(self, url: str, default: Any = None) -> Any:
        found = dict.get(self, url)
        if found is None and url in self._aliases:
            found = dict.get(self, self._aliases[url])
        return default if found is None else found

    def __contains__(self, url: object) -> bool:
        return dict.__contains__(self, url) or url in self._aliases


def load_labels(path: Path | str) -> Labels:
    """A ``*.labels.jsonl`` file as ``{url: label object}``; bad lines are an error.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write('{"url": "http://a.org/x%2fy%7e", "type": "course"}' + chr(10))
    >>> labels = load_labels(fh.name); os.unlink(fh.name)
    >>> labels.get("http://a.org/x%2Fy~")["type"], len(labels), "http://a.org/x%2Fy~" in labels
    ('course', 1, True)
    """
    labels = Labels()
    conflicts: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                url = str(obj["url"])
                if url in labels and dict.get(labels, url, obj) != obj:
                    conflicts.append(url)
                labels.add(url, obj)
            except (ValueError, KeyError, TypeError):
                raise ArchiveError(f"{path}:{lineno}: not a label line") from None
    if conflicts:  # a page judged twice, differently: the judgement is the last line's
        log.warning("%s: %d URLs labelled twice with different labels, the last line's used (the first: %s)",
                    path, len(conflicts), conflicts[0])  # fmt: skip
    return labels
