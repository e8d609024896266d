"""crawl.patience: a focused crawl whose good URLs are found one by one does not fill its
window with poor ones (issue 38: at the default window of 32 the language crawl of the
documentation web fetched 0.42 Japanese pages, 0.77 with a window of 1).

The web, by hand: an English seed links to a chain of Japanese pages (/ja/1.html ->
/ja/2.html -> /ja/3.html, each found only on the one before) and to 12 English pages
on hosts of their own (each host has room in the window).
The language strategy scores /ja/ links 0.75 from the English seed and 0.9 from a
Japanese page (they pass P4's rule by their Japanese anchors), the English pages 0.25.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.api import crawl
from focuscrawl.exceptions import ConfigError
from tests.archives import write_archive

SEED = "http://hub.example/"
JA = "これは日本語のページです。ひらがなとカタカナと漢字で書かれています。" * 4
EN = "This is an English page about free software documentation. " * 4


def _archive(path: Path) -> Path:
    pages = {
        SEED: f"<html><body><p>{EN}</p><a href='/ja/1.html'>Japanese</a>"
        + "".join(f"<a href='http://en{i}.example/'>Page {i}</a>" for i in range(12))
        + "</body></html>"
    }
    for i in (1, 2, 3):
        nxt = f"<a href='/ja/{i + 1}.html'>次のページ</a>" if i < 3 else ""
        pages[f"http://hub.example/ja/{i}.html"] = (
            f"<html lang='ja'><body><p>{JA}</p>{nxt}</body></html>"
        )
    for i in range(12):
        pages[f"http://en{i}.example/"] = f"<html><body><p>{EN}</p></body></html>"
    return write_archive(path, pages)


def _order(tmp_path: Path, name: str, patience: float) -> list[str]:
    out = tmp_path / name
    crawl(
        [SEED],
        out,
        strategy="language",
        strategy_params={"target": ["ja"], "prior_pages": 0},  # the rule's scores alone
        archives=[_archive(tmp_path / "w.warc.gz")],
        max_pages=20,
        delay=0,
        patience=patience,
        fetch={"respect_robots": False},
    )
    return [
        json.loads(line)["url"].removeprefix("http://hub.example")
        for line in (out / "pages.jsonl").open()
    ]


ENGLISH = [f"http://en{i}.example/" for i in range(12)]


def test_patience_waits_for_the_chain_of_good_urls(tmp_path: Path) -> None:
    chain = ["/ja/1.html", "/ja/2.html", "/ja/3.html"]
    # without it the window (32) takes /ja/1.html and every English page at once
    eager = _order(tmp_path, "eager", 0.0)
    assert eager[:2] == ["/", "/ja/1.html"]
    assert eager.index("/ja/2.html") > 12
    # with it, 0.25 < 0.5 x 0.75: the English pages wait while a Japanese one is in flight
    patient = _order(tmp_path, "patient", 0.5)
    assert patient[:4] == ["/", *chain]
    assert sorted(patient[4:]) == sorted(ENGLISH)


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_patience_outside_0_1_is_refused(tmp_path: Path, value: float) -> None:
    with pytest.raises(ConfigError, match=r"crawl\.patience"):
        crawl([SEED], tmp_path / "x", archives=[_archive(tmp_path / "w.warc.gz")], patience=value)
