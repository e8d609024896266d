"""What an output file holds against what the crawl DB committed: checked before a
resume cuts the file back to its committed length (:mod:`focuscrawl.output.writers`),
and before a worker takes over another's files.

A file still holds what was committed if it is at least that long and its committed
part ends with a complete record (a JSON line; a gzip member holding a WARC record);
a file that no commit accounts for may hold nothing but a lone warcinfo record.
Otherwise :class:`~focuscrawl.exceptions.ResumeError`, one line, and nothing changed.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from focuscrawl.exceptions import ResumeError

__all__ = ["verify_committed"]

# How far back from the committed offset the last complete record is looked for:
# a JSONL line is a few KB; a WARC pair holds a body of at most fetch.max_body_size
# (5 MB by default), which compresses to about that at worst.
_JSONL_WINDOW = 1 << 20
_WARC_WINDOW = 16 << 20


def verify_committed(
    path: Path, length: int, *, warc: bool = False, committed: bool = False
) -> None:
    """Raise :class:`ResumeError` unless ``path`` holds the ``length`` committed bytes.

    ``length`` > 0: the file is at least that long and its committed part ends with
    a complete record (a JSON object and a newline; a gzip member holding a WARC
    record). ``length`` = 0 and ``committed`` (a commit of the crawl DB says the file
    was empty: a run killed after its start was committed and before its first
    records were): whatever the file holds came later, and is cut. ``length`` = 0
    otherwise (no commit accounts for the file): the file is absent, empty, or (WARC)
    holds only the warcinfo record a run writes before its first commit. Reads at
    most a few MB, whatever the file's size.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = -1
    except OSError as exc:
        raise ResumeError(f"{path}: cannot read ({exc.strerror or exc})") from None
    name = path.name
    if length == 0:
        if committed or size <= 0 or (warc and _lone_warcinfo(path, size)):
            return
        raise ResumeError(
            f"{path}: {size:,} bytes that no crawl DB commit accounts for (crawl.db lost or "
            f"empty?); not touching it: move {name} away or use another --out"
        )
    if size < length:
        what = "is missing" if size < 0 else f"has {size:,} bytes"
        raise ResumeError(
            f"{path} {what} but the crawl DB committed {length:,}; "
            f"restore the file or start the crawl afresh in another --out"
        )
    with open(path, "rb") as fh:
        start = max(0, length - (_WARC_WINDOW if warc else _JSONL_WINDOW))
        fh.seek(start)
        tail = fh.read(length - start)
    intact = _ends_with_gzip_member(tail) if warc else _ends_with_json_line(tail, start == 0)
    if not intact:
        raise ResumeError(
            f"{path}: the committed part (first {length:,} bytes) does not end with a complete "
            f"{'WARC record' if warc else 'JSON line'}: the file was changed since the crawl "
            f"stopped; restore it or start the crawl afresh in another --out"
        )


def _ends_with_json_line(tail: bytes, whole: bool) -> bool:
    """Whether ``tail`` ends with a line holding a JSON object (``whole``: it is the whole file)."""
    if not tail.endswith(b"\n"):
        return False
    cut = tail.rfind(b"\n", 0, len(tail) - 1)
    if cut < 0 and not whole:
        return tail.endswith(b"}\n")  # a line longer than the window: its end must do
    line = tail[cut + 1 :]
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return False


def _ends_with_gzip_member(tail: bytes) -> bool:
    """Whether ``tail`` ends with a complete gzip member holding a WARC record.

    The last member starts at one of the gzip magic numbers before the end: they
    are tried from the end backwards. One inside compressed data fails to
    decompress and is skipped; the first that decompresses decides: the file is
    intact if its member ends exactly at the end (if it ends earlier, what
    follows it was tried before and is no gzip member).
    """
    view = memoryview(tail)
    pos = len(tail)
    while True:
        pos = tail.rfind(b"\x1f\x8b\x08", 0, pos)
        if pos < 0:
            return False
        inflater = zlib.decompressobj(wbits=31)
        try:
            head = inflater.decompress(view[pos:], 5)
            while inflater.unconsumed_tail and not inflater.eof:
                inflater.decompress(inflater.unconsumed_tail, 1 << 16)
        except zlib.error:
            continue
        if inflater.eof:
            return not inflater.unused_data and head.startswith(b"WARC/")


def _lone_warcinfo(path: Path, size: int) -> bool:
    """A file holding one gzip member with a warcinfo record and nothing else."""
    if size > 1 << 16:
        return False  # a warcinfo record is a few hundred bytes
    data = path.read_bytes()
    inflater = zlib.decompressobj(wbits=31)
    try:
        record = inflater.decompress(data)
    except zlib.error:
        return False
    return (
        inflater.eof
        and not inflater.unused_data
        and record.startswith(b"WARC/")
        and b"\r\nWARC-Type: warcinfo\r\n" in record.split(b"\r\n\r\n", 1)[0]
    )
