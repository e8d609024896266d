"""Append-only outputs of a run: ``corpus.warc.gz`` and ``pages.jsonl``.

Both writers know their committed length. The engine writes a batch, calls
:meth:`sync` (flush + fsync) and stores the new offsets in the crawl DB in the
same transaction that marks the batch's URLs fetched. On resume each file is cut
back to the offset the DB remembers, so a record whose URL was not committed
disappears and is written again when the URL is fetched again: nothing lost,
nothing twice. (Each WARC record is its own gzip member, so a cut at a record
boundary leaves a valid archive.)

Before anything is cut, :func:`~focuscrawl.output.committed.verify_committed`
checks that the file still holds what was committed (at least that many bytes,
ending with a complete JSON line or gzip member), and a file that no commit accounts for (offset 0,
e.g. a lost or empty crawl DB) may hold nothing but a lone warcinfo record.
Otherwise :class:`ResumeError` (one line) is raised and no file is changed; the
cut itself is made at the first write or sync, so that a later check failing
(the other file) leaves this one untouched too.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import fields
from functools import partial
from pathlib import Path
from typing import IO, Any

import orjson

from focuscrawl.exceptions import ConfigError, ResumeError
from focuscrawl.output import warc_records
from focuscrawl.output.committed import verify_committed
from focuscrawl.output.warc_builder import RecordBuilder
from focuscrawl.types import FetchResult, PageRecord

_RECORD_FIELDS = tuple(f.name for f in fields(PageRecord) if f.name != "extra")
# what json.dumps(..., ensure_ascii=False, separators=(",", ":")) writes, without
# building an encoder for every line (json.dumps does, for any non-default option)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def json_line(data: dict[str, Any]) -> bytes:
    r"""``data`` as one compact UTF-8 JSON line.

    orjson writes the same bytes as ``_ENCODER`` for the records of a crawl (600 real
    pages.jsonl and decisions.jsonl lines compared), 7-9x faster: a decisions line
    with a page's links took 32 us. It writes some floats more briefly (1e-05 as
    0.00001, 1e+16 as 1e16: the same numbers), and NaN as null. What it refuses (a
    numpy scalar or an int beyond 64 bits in a strategy's extra fields, a lone
    surrogate) goes through the json module as before.

    >>> json_line({"url": "http://a.org/é", "score": 0.5, "n": None})
    b'{"url":"http://a.org/\xc3\xa9","score":0.5,"n":null}\n'
    >>> json_line({"big": 2**64, "x": 1e-05})  # beyond orjson: the json module's bytes
    b'{"big":18446744073709551616,"x":1e-05}\n'
    """
    try:
        return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (_ENCODER.encode(data) + "\n").encode("utf-8")


class _AppendFile:
    """A binary file opened for appending, cut back to ``offset`` when resuming
    (``None``: kept as it is), once :meth:`_verify` found it holds what was committed."""

    def __init__(self, path: Path, offset: int | None = None, *, committed: bool = False) -> None:
        self.path = path
        self._committed = committed  # a crawl DB commit says ``offset`` (0 included)
        if offset is not None:
            self._verify(offset)
        try:
            mode = "r+b" if path.exists() else "w+b"
            self._fh: IO[bytes] = open(path, mode)  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise ResumeError(f"{path}: cannot open for writing ({exc.strerror or exc})") from None
        self._cut_to = offset
        self._ready = False

    def _verify(self, offset: int) -> None:
        verify_committed(self.path, offset, committed=self._committed)

    def _prepare(self) -> None:
        """Cut the file back to the committed offset: done at the first use, not on opening."""
        self._ready = True
        if self._cut_to is not None and os.fstat(self._fh.fileno()).st_size != self._cut_to:
            self._fh.truncate(self._cut_to)
        self._fh.seek(0, io.SEEK_END)
        self._start()

    def _start(self) -> None:
        """What a subclass writes first into an empty file."""

    def _before_sync(self) -> None:
        """What a subclass writes before the file is synced."""

    @property
    def offset(self) -> int:
        if not self._ready:
            self._prepare()
        return self._fh.tell()

    def sync(self) -> int:
        """Write out everything so far and wait until it is on disk; the file's length."""
        offset = self.flushed()
        self.fsync()
        return offset

    def flushed(self) -> int:
        """Everything so far handed to the OS (what the subclass still holds too): the
        length :meth:`fsync` then makes durable: the two halves of :meth:`sync` (which a
        crawl runs in its commit thread; ``os.fsync`` releases the GIL)."""
        if not self._ready:
            self._prepare()
        self._before_sync()
        try:
            self._fh.flush()
        except OSError as exc:
            raise self._named(exc) from None
        return self._fh.tell()

    def fsync(self) -> None:
        """Wait until what :meth:`flushed` handed over is on disk (any thread)."""
        try:
            os.fsync(self._fh.fileno())
        except OSError as exc:
            # EINVAL: a file that cannot be synced (a pipe, a device): nothing to wait for
            if exc.errno != errno.EINVAL:
                raise self._named(exc) from None

    def _named(self, exc: OSError) -> OSError:
        """The error with this file's name (a failed write does not name its file)."""
        return exc if exc.filename else OSError(exc.errno, exc.strerror, str(self.path))

    def close(self) -> None:
        if not self._fh.closed:
            self.sync()
            self._fh.close()
        self._closed()

    def _closed(self) -> None:
        """What a subclass ends when its file is closed."""


class WarcOutput(_AppendFile):
    """``corpus.warc.gz``: a response and a request record per fetched URL.

    Records are built by :mod:`focuscrawl.output.warc_records` and written in
    order: here, or, after :meth:`start_builder`, by a child process
    (:mod:`focuscrawl.output.warc_builder`) and written as they come back, all of
    them by the next :meth:`sync`. (Building them on a worker thread, where hashlib
    and the deflate run without the GIL, was measured: with ISA-L it cost more CPU
    than it saved, and no pages/s was gained; so there is no such thread.)
    """

    def __init__(
        self,
        path: Path,
        offset: int | None = None,
        *,
        committed: bool = False,
        software: str = "focuscrawl",
        level: int = warc_records.GZIP_LEVEL,
    ) -> None:
        super().__init__(path, offset, committed=committed)
        self._software = software
        self._level = level
        self._builder: RecordBuilder | None = None
        self.builder_counts: dict[str, int] = {}  # what the builder did (for the crawl's counters)

    def start_builder(self) -> None:
        """Build the exchange records in a child process from now on (once it is up)."""
        if self._builder is None:
            try:
                self._builder = RecordBuilder(self._level)
            except OSError as exc:  # no process to be had: the records are built here
                self.builder_counts[f"warc_builder_failed_{type(exc).__name__}"] = 1

    def _take_built(self, *, wait: bool) -> None:
        """Write the records the builder has made (all it was given, with ``wait``);
        a failed builder's outstanding results are built here, in order."""
        builder = self._builder
        if builder is None:
            return
        for data in builder.take(wait=wait):
            self._put(data)
        if builder.failed is not None:
            orphans = builder.orphans()
            for result, when in orphans:
                self._put(warc_records.exchange(result, level=self._level, when=when))
            self.builder_counts["warc_builder_failed"] = 1
            self.builder_counts["warc_builder_records_rebuilt"] = len(orphans)
            self._stop_builder()

    def stop_builder(self) -> None:
        """Write what the builder holds and end it; records are built here from now on."""
        self._take_built(wait=True)
        self._stop_builder()

    def _stop_builder(self) -> None:
        if self._builder is not None:
            self.builder_counts["warc_builder_records"] = self._builder.sent
            self._builder.close()
            self._builder = None

    def _verify(self, offset: int) -> None:
        verify_committed(self.path, offset, warc=True, committed=self._committed)

    def _start(self) -> None:
        if self._fh.tell() == 0:
            info = {"software": self._software, "format": "WARC File Format 1.1"}
            self._put(warc_records.warcinfo(self.path.name, info, level=self._level))

    def _put(self, data: bytes) -> None:
        try:
            self._fh.write(data)
        except OSError as exc:  # a full disk
            raise self._named(exc) from None

    def _submit(self, build: Callable[..., bytes], result: FetchResult) -> None:
        if not self._ready:
            self._prepare()  # the cut to the committed offset, at the first use
        self._put(build(result, level=self._level))

    def _before_sync(self) -> None:
        self._take_built(wait=True)

    def _closed(self) -> None:
        self._stop_builder()

    def write(self, result: FetchResult) -> None:
        """Archive one HTTP exchange (its final URL after redirects)."""
        builder = self._builder
        if builder is not None and builder.ready and builder.failed is None:
            if not self._ready:
                self._prepare()
            builder.submit(result, time.time())  # the date the record would get here
            if builder.batched:  # answers come a batch at a time: look when one has gone
                return
        else:  # no builder, or not up yet, or failed: built here, after what it still holds
            self._take_built(wait=True)
            self._submit(warc_records.exchange, result)
        self._take_built(wait=False)

    def write_revisit(self, result: FetchResult) -> None:
        """A re-crawl that found the payload unchanged: a ``revisit`` record
        (identical-payload-digest profile) instead of a second copy of the body."""
        self._take_built(wait=True)  # the records before it first
        self._submit(warc_records.revisit, result)

    def write_not_modified(self, result: FetchResult, refers_to_uri: str, refers_to_date: str) -> None:
        """A conditional re-fetch answered 304: a ``revisit`` record (server-not-modified
        profile) pointing to the earlier record, with no body."""
        self._take_built(wait=True)  # the records before it first
        self._submit(partial(warc_records.not_modified, refers_to_uri=refers_to_uri,
                             refers_to_date=refers_to_date), result)  # fmt: skip


class JsonlOutput(_AppendFile):
    """``pages.jsonl``: one JSON object per fetched URL, in fetch order."""

    def write(self, record: PageRecord | dict[str, Any]) -> None:
        if not self._ready:
            self._prepare()
        if isinstance(record, PageRecord):
            # a flat dict by hand: dataclasses.asdict deep-copies and is 4x slower
            data = {name: getattr(record, name) for name in _RECORD_FIELDS}
            data.update(record.extra)
        else:
            data = record
        line = json_line(data)
        try:
            self._fh.write(line)
        except OSError as exc:  # a full disk
            raise self._named(exc) from None


TEXTS_NAME = "texts.jsonl"  # beside pages.jsonl: the main texts the crawl's model read


class PagesOutput(JsonlOutput):
    """``pages.jsonl``, and beside it ``texts.jsonl``: the main text (trafilatura's) of
    the pages whose text the crawl's model extracted, one ``{"at", "text"}`` line each,
    ``at`` the byte offset of the page's line in pages.jsonl, so that the search index
    and the export read it instead of extracting it again from the WARC.

    The side file needs no committed length of its own: it is synced before
    pages.jsonl, and on resume cut back before its first line whose page is past
    pages.jsonl's committed length (or that is torn), so it holds each committed
    page's text once. It is made only when a text is kept."""

    def __init__(self, path: Path, offset: int | None = None, *, committed: bool = False) -> None:
        super().__init__(path, offset, committed=committed)
        self.texts_path = path.with_name(TEXTS_NAME)
        self._texts: IO[bytes] | None = None
        if offset is not None and self.texts_path.exists():
            self._texts = self._open_texts(offset)

    def _open_texts(self, cut: int | None) -> IO[bytes]:
        try:
            fh: IO[bytes] = open(self.texts_path, "r+b" if self.texts_path.exists() else "w+b")  # noqa: SIM115
        except OSError as exc:
            raise ResumeError(f"{self.texts_path}: cannot open for writing ({exc.strerror or exc})") from None
        if cut is not None:
            keep = 0
            for line in fh:
                at = text_offset(line)
                if at is None or at >= cut:
                    break
                keep += len(line)
            fh.truncate(keep)
        fh.seek(0, io.SEEK_END)
        return fh

    def keep_text(self, text: str) -> None:
        """The main text of the page whose record is written next."""
        if self._texts is None:
            self._texts = self._open_texts(None)
        try:
            self._texts.write(json_line({"at": self.offset, "text": text}))
        except OSError as exc:  # a full disk
            raise OSError(exc.errno, exc.strerror, str(self.texts_path)) from None

    def _before_sync(self) -> None:
        if self._texts is not None:
            self._texts.flush()
            os.fsync(self._texts.fileno())

    def _closed(self) -> None:
        if self._texts is not None and not self._texts.closed:
            self._texts.close()


def text_offset(line: bytes) -> int | None:
    """The ``at`` of a whole texts.jsonl line (None: torn or not one)."""
    if not line.endswith(b"\n"):
        return None
    try:
        at = orjson.loads(line).get("at")
    except (ValueError, AttributeError):
        return None
    return at if isinstance(at, int) else None


def read_texts(path: Path, start: int, end: int) -> tuple[dict[int, str], int]:
    """The texts of texts.jsonl from byte ``start`` whose page's line is before ``end``
    in pages.jsonl: {at: text}, and where the next read starts."""
    found: dict[int, str] = {}
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return found, start
    with fh:
        fh.seek(start)
        for line in fh:
            at = text_offset(line)
            if at is None or at >= end:
                break
            found[at] = orjson.loads(line)["text"]
            start += len(line)
    return found, start


def prepare_run_dir(path: Path) -> bool:
    """Create the run directory ``path`` if needed and check that files can be made
    in it, or raise a one-line ConfigError (a file, no permission, read-only disk).
    Returns whether this call made the directory."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"--out {path}: is a file, not a run directory")
    made = False
    try:
        with contextlib.suppress(FileExistsError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir()
            made = True
        # an existing directory may still refuse files (permissions, read-only mount)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ConfigError(f"--out {path}: cannot write a run directory there ({exc.strerror or exc})") from None
    return made
