"""Shared fixtures: the shared test web, replay servers in their own processes.

Tests that need ``../shared/testweb`` skip where it is absent, except in CI
(``CI=true``), where such a skip is a failure: a CI run must not pass by skipping.
``FOCUSCRAWL_TESTWEB`` points the tests at another copy of the test web.

Tests marked ``slow`` (SIGKILL loops, whole crawls of a test web, properties over
thousands of examples, pytest run inside pytest) are left out of a plain ``pytest``,
the run a developer makes while working, unless named (``file.py::test``);
``pytest --full`` runs them too, and so does any run with ``CI=true``: CI runs everything.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import build_sample_archive

TESTWEB = Path(
    os.environ.get("FOCUSCRAWL_TESTWEB") or Path(__file__).resolve().parents[2] / "shared" / "testweb"
)
# words of the skip reasons of tests that need the shared test web
_TESTWEB_SKIP_WORDS = ("shared test web", "../shared", "testweb")
# ... and of those that need the browser .ci/run installs (``chromium``, its headless shell)
_BROWSER_SKIP_WORDS = ("chromium", "Chromium")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--full", action="store_true",
                     help="run the tests marked slow too (the default with CI=true)")  # fmt: skip


def full_run(config: pytest.Config) -> bool:
    return bool(config.getoption("--full")) or in_ci()


def _named(item: pytest.Item, config: pytest.Config) -> bool:
    """Whether the command line names this test (``file.py::test``, with or without its
    parameters): a slow test asked for by name runs."""
    test = item.nodeid.split("::", 1)[-1]
    named = (arg.partition("::") for arg in config.args)
    return any(
        sep and (test == name or test.startswith((name + "[", name + "::")))
        and (config.invocation_params.dir / path).resolve() == item.path.resolve()
        for path, sep, name in named
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --full (and outside CI) the slow tests are deselected, unless named on the
    command line: not run, and not counted as skipped."""
    if full_run(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None and not _named(item, config)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        left_out = {id(item) for item in slow}
        items[:] = [item for item in items if id(item) not in left_out]


def shared_file(name: str) -> Path:
    path = TESTWEB / name
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/testweb)")  # a failure in CI: see below
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    """In CI, a test skipped for want of the shared test web, or of the browser CI
    installs, fails instead."""
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and in_ci()) or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
    if any(word in reason for word in _TESTWEB_SKIP_WORDS):
        report.outcome = "failed"
        report.longrepr = f"CI=true, and this test needs the shared test web: {reason}"
    elif any(word in reason for word in _BROWSER_SKIP_WORDS):
        report.outcome = "failed"
        report.longrepr = f"CI=true, and this test needs the browser .ci/run installs: {reason}"


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
