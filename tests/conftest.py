"""Shared fixtures: the shared test web, replay servers in their own processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import build_sample_archive

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def shared_file(name: str) -> Path:
    path = TESTWEB / name
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/testweb)")
    return path


@pytest.fixture(scope="session")
def sample_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample_archive(tmp_path_factory.mktemp("sample") / "sample.warc.gz")


@pytest.fixture(scope="session")
def webkb_replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayProcess]:
    """The WebKB archive served by the project's replay server (one per test session)."""
    archive = shared_file("webkb.warc.gz")
    log = tmp_path_factory.mktemp("replay") / "requests.tsv"
    with ReplayProcess([archive], log_path=log) as replay:
        yield replay


@pytest.fixture(scope="session")
def sample_replay(
    sample_archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplayProcess]:
    log = tmp_path_factory.mktemp("sample-replay") / "requests.tsv"
    with ReplayProcess([sample_archive], log_path=log) as replay:
        yield replay
