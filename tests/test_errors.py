"""Careless use and a hostile environment give one clear line and exit 2 (bad usage)
or 1 (failure while running), never a traceback (issue 9, item 10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS


def _setup(tmp: Path) -> None:
    (tmp / "binary.toml").write_bytes(bytes(range(256)) * 4)
    (tmp / "regex.toml").write_text('[scope]\ndeny_regex = ["/cal(endar"]\n', encoding="utf-8")
    (tmp / "a-file").write_text("not a directory\n", encoding="utf-8")
    for name, text in {
        "truncated": '{"seeds": ["http://a.example/"], "sett',
        "binary": "\udcff\udcfe",
        "not-an-object": "[1, 2]",
        "no-settings": '{"seeds": ["http://a.example/"]}',
        "bad-seeds": '{"seeds": [1], "settings": {}}',
    }.items():
        run = tmp / f"run-{name}"
        run.mkdir()
        (run / "run.json").write_bytes(text.encode("utf-8", "surrogateescape"))
        (run / "crawl.db").write_bytes(b"")


SEED = ["--seeds", "http://a.example/"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param([*SEED, "--out", "{tmp}/r", "--config", "{tmp}/binary.toml"], "not a TOML file", id="binary-config"),
        pytest.param([*SEED, "--out", "{tmp}/r", "--config", "{tmp}"], "cannot read (Is a directory)", id="config-is-a-directory"),
        pytest.param([*SEED, "--out", "{tmp}/r", "--config", "{tmp}/regex.toml"], "scope.deny_regex '/cal(endar' is not a valid regular expression", id="bad-deny-regex"),
        pytest.param([*SEED, "--out", "{tmp}/a-file"], "is a file, not a run directory", id="out-is-a-file"),
        pytest.param([*SEED, "--out", "{tmp}/a-file/run"], "cannot write a run directory there (Not a directory)", id="out-under-a-file"),
        pytest.param([*SEED, "--out", "/proc/focuscrawl-test"], "cannot write a run directory there", id="out-unwritable"),
        pytest.param(["--out", "{tmp}/run-truncated", "--resume"], "run.json: corrupt", id="run-json-truncated"),
        pytest.param(["--out", "{tmp}/run-binary", "--resume"], "run.json: corrupt", id="run-json-binary"),
        pytest.param(["--out", "{tmp}/run-not-an-object", "--resume"], "run.json: corrupt (no settings or seeds)", id="run-json-list"),
        pytest.param(["--out", "{tmp}/run-no-settings", "--resume"], "run.json: corrupt (no settings or seeds)", id="run-json-no-settings"),
        pytest.param(["--out", "{tmp}/run-bad-seeds", "--resume"], "run.json: corrupt (no settings or seeds)", id="run-json-bad-seeds"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _setup(tmp_path)
    code = main(["crawl", "--quiet", *(a.replace("{tmp}", str(tmp_path)) for a in argv)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("focuscrawl: ")
    assert message in err
    assert err.count("\n") == 1, err
    assert not (tmp_path / "r").exists()  # refused before anything was created


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_full_disk_exits_1_with_one_line(
    sample_replay: ReplayProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every write to /dev/full fails with ENOSPC, as on a full disk
    run = tmp_path / "run"
    run.mkdir()
    (run / "pages.jsonl").symlink_to("/dev/full")
    code = main(["crawl", "--seeds", *SAMPLE_SEEDS, "--out", str(run), "--quiet",
                 "--proxy", sample_replay.proxy_url, "--delay", "0", "--max-pages", "5"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith("focuscrawl: ")
    assert "No space left on device" in err
    assert err.count("\n") == 1, err
    # nothing was committed past the failure: run.json does not claim a finished crawl
    run_json = run / "run.json"
    assert not run_json.exists() or json.loads(run_json.read_text())["finished"] is False
