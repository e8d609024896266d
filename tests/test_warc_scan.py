"""The response records' offsets read from the WARC's header blocks alone are warcio's."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.exceptions import ArchiveError
from focuscrawl.output.warc_scan import response_offsets


def _warcio(path: Path) -> list[tuple[str, int]]:
    with open(path, "rb") as fh:
        records = ArchiveIterator(fh)
        return [(r.rec_headers.get_header("WARC-Target-URI") or "", records.get_record_offset())
                for r in records if r.rec_type == "response"]  # fmt: skip


def test_the_offsets_are_warcios_whole_and_between_bounds(sample_archive: Path) -> None:
    expected = _warcio(sample_archive)
    assert len(expected) > 10
    assert list(response_offsets(sample_archive)) == expected
    low, high = expected[3][1], expected[9][1]
    assert list(response_offsets(sample_archive, low, high)) == expected[3:9]


@pytest.mark.parametrize(
    "data",
    [b"not gzip at all", gzip.compress(b"HTTP/1.1 200 OK\r\n\r\nnot a WARC record")],
    ids=["not-gzip", "not-warc"],
)
def test_bytes_that_are_no_warc_record_are_an_archive_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.warc.gz"
    path.write_bytes(data)
    with pytest.raises(ArchiveError, match=r"bad\.warc\.gz"):
        list(response_offsets(path))


def test_a_record_cut_short_ends_the_scan(tmp_path: Path) -> None:
    whole = gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a/\r\n\r\nbody")
    path = tmp_path / "cut.warc.gz"
    path.write_bytes(whole + whole[:-6])
    assert list(response_offsets(path)) == [("http://a/", 0)]
