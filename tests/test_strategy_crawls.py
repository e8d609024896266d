"""P0's and P1's strategies end to end: in simulation and through the replay server,
the same crawl; and the invariants of their equations over a whole crawl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.api import crawl
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.settings import Settings
from focuscrawl.types import URLState

CATS = {"name": "keyword", "keywords": ["cat", "cats", "kitten", "feline"], "threshold": 0.25}


def _urls(run: Path) -> list[tuple[str, bool]]:
    lines = (run / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    return [(r["url"], r["recrawl"]) for r in map(json.loads, lines)]


@pytest.mark.parametrize(
    ("strategy", "extra"),
    [
        ("link-context", {}),
        ("opic", {}),
        ("otie", {"strategy_params": {"recrawl_every": 1}, "fetch_list_size": 5}),
        ("opic-commd", {"top_n": 8, "depth": 4}),
        ("commd", {"top_n": 8, "depth": 4}),
    ],
    ids=["link-context", "opic", "otie", "opic-commd", "commd"],
)
def test_live_and_simulated_crawls_agree(
    sample_archive: Path, sample_replay: ReplayProcess, tmp_path: Path, strategy: str, extra: dict[str, Any]
) -> None:
    model = None if strategy == "opic" else CATS
    common: dict[str, Any] = {"strategy": strategy, "model": model, "max_pages": 30, **extra}
    crawl(list(SAMPLE_SEEDS), tmp_path / "sim", archives=[sample_archive], **common)
    crawl(list(SAMPLE_SEEDS), tmp_path / "live", proxy=sample_replay.proxy_url, delay=0.0,
          schedule="ordered", **common)  # fmt: skip
    sim, live = _urls(tmp_path / "sim"), _urls(tmp_path / "live")
    assert sim == live
    first = [url for url, again in sim if not again]
    if strategy in ("opic-commd", "commd"):
        # layered: the seed, then 3 more layers of topN = 8 (depth 4), under the 30 URLs
        assert len(first) == 1 + 3 * 8
    else:
        assert len(first) == 30
    if strategy == "otie":
        # line 4-5 with recrawl_every = 1: one re-crawl per fetch list of 5 after the first
        # (the first has no fetched page yet), each of a page fetched before it
        again = [i for i, (_, a) in enumerate(sim) if a]
        assert len(again) == 30 // 5 - 1
        assert all(sim[i][0] in {u for u, a in sim[:i] if not a} for i in again)


def _scores(run: Path, column: str = "score") -> dict[str, float]:
    store = open_frontier(Settings(), run / "crawl.db")
    try:
        return {q.url: store.value(q.url, column) or 0.0 for q in store.iter_urls()}
    finally:
        store.close()


def test_opic_conserves_the_cash_over_a_whole_crawl(sample_archive: Path, tmp_path: Path) -> None:
    crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="opic", max_pages=40, archives=[sample_archive])
    g = json.loads((tmp_path / "run" / "run.json").read_text())  # the virtual page's share
    store = open_frontier(Settings(), tmp_path / "run" / "crawl.db")
    try:  # the strategy's state (the virtual page's g) is in the engine's committed meta
        state = json.loads(store.get_meta("engine") or "{}")["strategy"]
        total = sum(q.score + state["g"] for q in store.iter_urls())
        history = sum(store.value(q.url, "history") or 0.0 for q in store.iter_urls(URLState.FETCHED))
    finally:
        store.close()
    assert g["strategy"] == "opic"
    assert total == pytest.approx(1.0)  # cash is conserved: the seed's 1 is still all there
    assert history > 1.0  # and has passed through many pages (the history of OPIC)


def test_opic_commd_keeps_the_cash_sum_c_and_fetches_top_n_per_layer(
    sample_archive: Path, tmp_path: Path
) -> None:
    crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="opic-commd", model=CATS, max_pages=0,
          top_n=6, depth=4, archives=[sample_archive])  # fmt: skip
    cash = _scores(tmp_path / "run", "cash")
    pages = [json.loads(x) for x in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    rounds = [p["layer"] for p in pages if not p.get("error")]
    assert rounds.count(0) == 1  # layer 0: the seed
    assert all(rounds.count(k) <= 6 for k in set(rounds))
    assert max(rounds) == 3
    # eq. 4-5: at every layer end the cash sum is C = 1; any undistributed R is kept aside
    state = json.loads(_meta(tmp_path / "run"))["strategy"]
    assert sum(cash.values()) + state["undistributed"] == pytest.approx(1.0)


def _meta(run: Path) -> str:
    store = open_frontier(Settings(), run / "crawl.db")
    try:
        return store.get_meta("engine") or "{}"
    finally:
        store.close()
