"""A crawl that renders every page, SIGKILLed at random moments (mostly while a page
renders) and resumed: nothing lost, nothing written twice (issue 37, bad input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.fetch.render import browser_path
from focuscrawl.replay.content_web import SEEDS, build_content_web
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.settings import FetchSettings
from tests.test_crawl_resume import _kill_and_resume


@pytest.mark.slow  # crawls with a browser, killed and resumed five times, and their reference
@pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")
def test_sigkill_while_rendering_then_resume(tmp_path: Path) -> None:
    (tmp_path / "web").mkdir()
    # 120 articles: since a page's DOM is taken at once, 30 rendered in about a second,
    # too fast for the kills to land (CI: 1 of the 2 needed)
    archive = build_content_web(tmp_path / "web", articles=120, reports=2)
    with ReplayProcess([archive]) as replay:
        _kill_and_resume(
            replay.proxy_url, tmp_path, ["--seeds", *SEEDS, "--delay", "0"],
            extra_env={"FOCUSCRAWL_FETCH__RENDER": "always"},
        )  # fmt: skip
