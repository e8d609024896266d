"""The web UI of ``focuscrawl serve`` end to end in headless Chromium: start a crawl from
the form, see it progress on its live page, stop it, search a page it fetched."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from tests.cdp import Browser
from tests.service_client import Server

pytest.importorskip("jinja2")
pytest.importorskip("prometheus_client")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
async def test_start_watch_stop_and_search_from_the_browser(
    tmp_path: Path, sample_replay: ReplayProcess
) -> None:
    assert CHROMIUM is not None
    with Server(tmp_path / "runs") as srv:
        async with Browser(CHROMIUM, tmp_path / "profile") as browser:
            await browser.goto(srv.base + "/")
            assert await browser.js("document.body.textContent.includes('No crawl yet')")
            # every control of the form has a label
            unlabelled = await browser.js(
                "[...document.querySelectorAll('#start input, #start select, #start textarea')]"
                ".filter(e => !document.querySelector(`label[for=\"${e.id}\"]`)).length"
            )
            assert unlabelled == 0
            values = {"f-name": "ui", "f-seeds": "\n".join(SAMPLE_SEEDS), "f-keywords": "cat, kitten",
                      "f-budget": "50", "f-delay": "1", "f-concurrency": "2", "f-proxy": sample_replay.proxy_url}  # fmt: skip
            for element, value in values.items():
                await browser.js(f"document.getElementById({json.dumps(element)}).value = {json.dumps(value)}")
            await browser.js("document.getElementById('f-strategy').value = 'best-first'")
            await browser.js("document.querySelector('#start button[type=submit]').click()")
            await browser.wait("location.pathname === '/crawls/ui'")
            # the live page: it runs and its figures grow as the page renews itself
            await browser.wait("document.getElementById('state').dataset.state === 'running'")
            await browser.wait("document.querySelectorAll('#live .run table tr').length > 3")
            assert await browser.js("document.querySelector('#live svg') !== null")
            await browser.js("document.getElementById('stop').click()")
            await browser.wait("document.getElementById('state').dataset.state === 'stopped'")
            assert await browser.js("document.getElementById('control-error').textContent") == ""
            _, numbers = srv.call("GET", "/api/crawls/ui/numbers")
            assert 0 < numbers["urls"] < 50
            # search, from the live page's search form, for a word of a page it fetched
            _, pages = srv.call("GET", "/api/crawls/ui/pages?limit=50")
            page = next(p for p in pages["pages"] if p["status"] == 200 and p.get("title"))
            word = next(w for w in re.findall(r"[a-z]{4,}", page["title"].lower()))
            await browser.js(f"document.getElementById('q').value = {json.dumps(word)}")
            await browser.js("document.querySelector('form[role=search]').requestSubmit()")
            await browser.wait("location.pathname === '/crawls/ui/search'")
            await browser.wait("document.getElementById('found') !== null")
            urls = await browser.js("[...document.querySelectorAll('#results .url')].map(e => e.textContent)")
            assert page["url"] in urls
            marked = await browser.js("[...document.querySelectorAll('#results mark')].map(m => m.textContent.toLowerCase())")
            assert marked
            assert all(word in m for m in marked)
            # the crawl list shows it, stopped
            await browser.goto(srv.base + "/")
            assert await browser.js("document.querySelector('#crawls td[data-state]').dataset.state") == "stopped"
