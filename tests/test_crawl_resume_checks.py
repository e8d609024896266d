"""A resume checks the outputs against the crawl DB before touching anything
(issue 9, items 7 and 8): a shorter or changed output, or outputs that no commit
accounts for, stop the crawl with one line and exit 2; no file is changed."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.exceptions import ResumeError
from focuscrawl.output.committed import verify_committed
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.types import FetchResult

FILES = ("corpus.warc.gz", "pages.jsonl")


def _digests(run: Path) -> dict[str, str | None]:
    return {
        name: hashlib.sha256((run / name).read_bytes()).hexdigest() if (run / name).exists() else None
        for name in FILES
    }


@pytest.fixture
def finished_run(sample_replay: ReplayProcess, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    argv = ["crawl", "--seeds", *SAMPLE_SEEDS, "--out", str(run), "--proxy", sample_replay.proxy_url,
            "--delay", "0", "--max-pages", "12", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    return run


def _resume(run: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["crawl", "--out", str(run), "--resume", "--max-pages", "20", "--quiet"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        pytest.param(lambda run: (run / "pages.jsonl").unlink(), "pages.jsonl is missing but the crawl DB committed", id="jsonl-deleted"),
        pytest.param(lambda run: (run / "corpus.warc.gz").unlink(), "corpus.warc.gz is missing", id="warc-deleted"),
        pytest.param(lambda run: _cut(run / "corpus.warc.gz", 0.5), "corpus.warc.gz has", id="warc-short"),
        pytest.param(lambda run: _zero(run / "pages.jsonl"), "does not end with a complete JSON line", id="jsonl-zeroed"),
        pytest.param(lambda run: _zero(run / "corpus.warc.gz"), "does not end with a complete WARC record", id="warc-zeroed"),
        pytest.param(lambda run: (run / "crawl.db").write_bytes(b""), "pages.jsonl holds records but crawl.db has no crawl state", id="db-empty"),
        pytest.param(lambda run: [(run / "crawl.db").write_bytes(b""), (run / "pages.jsonl").unlink()], "corpus.warc.gz: .* bytes that no crawl DB commit accounts for", id="db-empty-warc-only"),
    ],
)
def test_resume_refuses_outputs_that_do_not_match_the_crawl_db(
    finished_run: Path, damage: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    damage(finished_run)  # type: ignore[operator]
    before = _digests(finished_run)
    code, err = _resume(finished_run, capsys)
    assert code == 2
    assert re.search(message, err), err
    assert err.count("\n") == 1, err
    assert _digests(finished_run) == before  # not cut, not zero-filled, not created


def test_resume_after_a_refusal_works_once_the_file_is_back(
    finished_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = (finished_run / "pages.jsonl").read_bytes()
    (finished_run / "pages.jsonl").unlink()
    assert _resume(finished_run, capsys)[0] == 2
    (finished_run / "pages.jsonl").write_bytes(saved)
    code, err = _resume(finished_run, capsys)
    assert code == 0, err
    lines = (finished_run / "pages.jsonl").read_bytes().splitlines()
    assert len(lines) == 20
    assert (finished_run / "pages.jsonl").read_bytes().startswith(saved)


def _cut(path: Path, share: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * share)])


def _zero(path: Path) -> None:
    path.write_bytes(bytes(path.stat().st_size))


def _result(url: str) -> FetchResult:
    return FetchResult(url, url, status=200, reason="OK", body=b"<p>x</p>", content_type="text/html")


def test_verify_committed_by_hand(tmp_path: Path) -> None:
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_bytes(b'{"url":"a"}\n{"url":"b"}\n{"url":')
    verify_committed(jsonl, 12)  # first line
    verify_committed(jsonl, 24)  # both complete lines; the torn third is uncommitted
    for bad in (5, 13, 30, 100):  # mid-line, mid-line, past the end of a line, past the end
        with pytest.raises(ResumeError):
            verify_committed(jsonl, bad)
    verify_committed(tmp_path / "absent.jsonl", 0)
    with pytest.raises(ResumeError, match="no crawl DB commit"):
        verify_committed(jsonl, 0)
    verify_committed(jsonl, 0, committed=True)  # a commit said empty: what came after is cut

    warc = tmp_path / "c.warc.gz"
    out = WarcOutput(warc, 0)
    info_end = out.sync()
    out.write(_result("http://h.org/1"))
    one = out.sync()
    out.write(_result("http://h.org/2"))
    two = out.sync()
    out.close()
    for good in (info_end, one, two):
        verify_committed(warc, good, warc=True)
    for bad in (one - 1, one + 1, two + 1):
        with pytest.raises(ResumeError):
            verify_committed(warc, bad, warc=True)
    with pytest.raises(ResumeError, match="no crawl DB commit"):
        verify_committed(warc, 0, warc=True)
    # a lone warcinfo record (a run killed before its first commit) may be restarted
    warc.write_bytes(warc.read_bytes()[:info_end])
    verify_committed(warc, 0, warc=True)
    assert gzip.decompress(warc.read_bytes()).startswith(b"WARC/1.1\r\nWARC-Type: warcinfo\r\n")


def test_outputs_are_cut_only_when_first_used(tmp_path: Path) -> None:
    # the engine opens the WARC, then the JSONL: if the second check fails, the first
    # file must not have been cut already
    warc = tmp_path / "c.warc.gz"
    out = WarcOutput(warc, 0)
    out.write(_result("http://h.org/1"))
    committed = out.sync()
    out.write(_result("http://h.org/2"))
    out.close()
    size = warc.stat().st_size
    WarcOutput(warc, committed)  # opened, never used
    assert warc.stat().st_size == size
    with pytest.raises(ResumeError):
        JsonlOutput(tmp_path / "p.jsonl", 10)
    reopened = WarcOutput(warc, committed)
    assert reopened.sync() == committed
    reopened.close()
