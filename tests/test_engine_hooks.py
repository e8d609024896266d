"""The engine and a strategy's hooks, without the network: what the hooks see (the
frontier view, current scores, link counts, only the kept links), filters before the
strategy, redirects that move cash, typed parameters, the decision log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from focuscrawl.crawler.recorder import Recorder
from focuscrawl.crawler.window import InFlight
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.provenance import explain, format_explanation
from focuscrawl.settings import ScopeSettings, Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.strategies.filters import build_filters
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import (
    Decision,
    FetchResult,
    LinkScore,
    Merge,
    Page,
    QueuedURL,
    ScoreUpdate,
    URLState,
)

A, B, C, D, E = (f"http://{h}.org/" for h in "abcde")


class _Cash(Strategy):
    """A tiny OPIC: the page's current cash is split over its kept links by t(i,j)/n(i)."""

    name: ClassVar[str] = "test-cash"
    merge: ClassVar[Merge] = Merge.ADD
    columns: ClassVar[tuple[str, ...]] = ("history",)
    seen_scores: ClassVar[list[float]] = []

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        cash = queued.score
        _Cash.seen_scores.append(cash)
        n = sum(link.count for link in page.links)
        links = [
            LinkScore(link, cash * link.count / n, reason=f"t={link.count}/n={n} of {cash:g}")
            for link in page.links
        ]
        updates = [
            ScoreUpdate(queued.url, 0.0, Merge.SET, reason="cash spent"),
            ScoreUpdate(queued.url, cash, Merge.ADD, column="history", reason="history += cash"),
        ]
        return Decision(links=links, updates=updates)


def _html(*hrefs: str) -> bytes:
    return ("<html><body>" + "".join(f'<a href="{h}">x</a>' for h in hrefs) + "</body></html>").encode()


def _result(url: str, body: bytes, final_url: str | None = None) -> FetchResult:
    return FetchResult(
        url=url, final_url=final_url or url, status=200, body=body,
        content_type="text/html", charset="utf-8", headers={"Content-Type": "text/html"},
    )  # fmt: skip


def _processor(
    tmp_path: Path, store: MemoryFrontier, filters: list[dict[str, Any]] | None = None,
    strategy: Strategy | None = None,
) -> Recorder:  # fmt: skip
    settings = Settings(scope=ScopeSettings(deny_hosts=("d.org",)))
    strategy = strategy or _Cash()
    import random

    from focuscrawl.urls import Scope

    store.ensure_columns(("relevance", "history"))
    strategy.attach(FrontierView(store), random.Random(0))
    return Recorder(
        settings, queue=store, columns=store, graph=store, strategy=strategy, model=None,
        filters=build_filters(filters or []), scope=Scope.for_seeds(settings.scope, [A]),
        stats=CrawlStats(), warc=WarcOutput(tmp_path / "c.warc.gz"),
        pages=JsonlOutput(tmp_path / "pages.jsonl"), decisions=JsonlOutput(tmp_path / "decisions.jsonl"),
    )  # fmt: skip


def test_hooks_see_current_cash_link_counts_and_only_kept_links(tmp_path: Path) -> None:
    _Cash.seen_scores.clear()
    store = MemoryFrontier()
    proc = _processor(tmp_path, store)
    proc.add_seeds([A])
    (queued_a,) = store.pop(1)
    assert queued_a.score == 1.0
    store.update_scores([(A, 0.5)], Merge.ADD)  # cash arriving while A is in flight
    # A links to B twice, C once, itself once and to d.org (out of scope)
    proc.record(InFlight(queued_a), _result(A, _html(B, B, C, A, D)))
    # on_page saw the current cash 1.5, not the 1.0 it was popped with
    assert _Cash.seen_scores == [1.5]
    view = FrontierView(store)
    assert view.children(A) == [(B, 2), (C, 1)]  # t(A,B) = 2, t(A,C) = 1; self-link and D left out
    # split over n = 3 kept occurrences only: B 1.5 * 2/3 = 1.0, C 1.5 * 1/3 = 0.5; nothing leaked to D
    assert view.score(B) == pytest.approx(1.0)
    assert view.score(C) == pytest.approx(0.5)
    assert view.state(D) is None
    assert view.score(A) == 0.0
    assert view.value(A, "history") == pytest.approx(1.5)
    assert view.state(A) == URLState.FETCHED
    assert proc.stats.counters["link_rejected_denied-host"] == 1


class _MixedMerges(Strategy):
    """Links with their own merge rule before and after links with the strategy's."""

    name: ClassVar[str] = "test-mixed-merges"
    merge: ClassVar[Merge] = Merge.ADD

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        b, c = page.links
        return Decision(links=[LinkScore(b, 1.0, merge=Merge.MAX), LinkScore(c, 2.0), LinkScore(b, 2.0)])


def test_links_are_added_one_batch_per_merge_rule_in_the_order_the_rules_appear(
    tmp_path: Path,
) -> None:
    """The MAX link comes first: its batch is added first (B is discovered before C),
    then the strategy's ADD batch adds 2.0 to B's 1.0; the other order would leave B
    at max(2.0, 1.0) and discover C first."""
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, strategy=_MixedMerges())
    proc.add_seeds([A])
    (queued_a,) = store.pop(1)
    proc.record(InFlight(queued_a), _result(A, _html(B, C)))
    assert store.get(B).score == pytest.approx(3.0)  # type: ignore[union-attr]
    assert store.get(C).score == pytest.approx(2.0)  # type: ignore[union-attr]
    assert [r.url for r in store.iter_urls()] == [A, B, C]


def test_a_redirect_moves_the_cash_of_its_target(tmp_path: Path) -> None:
    store = MemoryFrontier()
    proc = _processor(tmp_path, store)
    proc.add_seeds([A])
    (queued_a,) = store.pop(1)
    proc.record(InFlight(queued_a), _result(A, _html(B, B, C)))  # B 2/3, C 1/3
    (queued_b,) = store.pop(1)
    assert queued_b.url == B
    # B redirects to C, which waits with 1/3: that cash joins B's 2/3, and C is not fetched again
    proc.record(InFlight(queued_b), _result(B, _html(E), final_url=C))
    assert store.state(C) == URLState.FETCHED
    assert store.get(C).score == 0.0  # type: ignore[union-attr]
    assert store.get(E).score == pytest.approx(1.0)  # type: ignore[union-attr]  # 2/3 + 1/3
    # the seed's cash is conserved: all of it now waits on E; A and B each passed on 1.0
    assert sum(r.score for r in store.iter_urls()) == pytest.approx(1.0)
    assert [store.value(u, "history") for u in (A, B, C)] == pytest.approx([1.0, 1.0, 0.0])
    assert store.count(URLState.QUEUED) == 1  # only E


def test_filters_run_before_the_strategy(tmp_path: Path) -> None:
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, filters=[{"name": "host-blacklist", "hosts": ["c.org"]}])
    proc.add_seeds([A])
    (queued_a,) = store.pop(1)
    proc.record(InFlight(queued_a), _result(A, _html(B, C)))
    assert store.get(B).score == pytest.approx(1.0)  # type: ignore[union-attr]  # all of A's cash
    assert store.state(C) is None
    assert proc.stats.counters["link_rejected_host-blacklist"] == 1


def test_decision_log_explains_a_url(tmp_path: Path) -> None:
    store = MemoryFrontier()
    proc = _processor(tmp_path, store)
    proc.add_seeds([A])
    (queued_a,) = store.pop(1)
    proc.record(InFlight(queued_a), _result(A, _html(B, B, C, D)))
    assert proc.decisions is not None
    proc.decisions.sync()
    lines = [json.loads(x) for x in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert lines[0]["event"] == "seeds"
    assert lines[0]["links"] == [[A, 1.0, "seed"]]
    page = lines[1]
    assert (page["event"], page["n"], page["url"], page["score"]) == ("page", 1, A, 1.0)
    assert page["links"] == [[B, pytest.approx(2 / 3), "t=2/n=3 of 1"], [C, pytest.approx(1 / 3), "t=1/n=3 of 1"]]
    assert page["dropped"] == {"scope:denied-host": 1}
    info = explain(tmp_path, B)
    (contribution,) = info["contributions"]
    assert contribution["from"] == A
    assert contribution["kind"] == "link"
    assert contribution["reason"] == "t=2/n=3 of 1"
    text = format_explanation(info, {"state": "queued", "score": 2 / 3, "tier": 0, "depth": 1, "columns": {}})
    assert f"<- page #1 {A} [score 1] link 0.666667: t=2/n=3 of 1" in text


def test_strategy_parameters_are_typed_and_checked() -> None:
    from dataclasses import dataclass

    from focuscrawl.exceptions import ConfigError

    @dataclass(frozen=True)
    class P:
        beta: float = 0.25
        n: int = 50

        def __post_init__(self) -> None:
            if not 0.0 <= self.beta <= 1.0:
                raise ValueError(f"beta = {self.beta} must be in [0, 1]")

    class S(_Cash):
        name: ClassVar[str] = "test-typed"
        Params: ClassVar[type[Any]] = P

    assert S(beta="0.5").p == P(0.5, 50)
    with pytest.raises(ConfigError, match=r"unknown parameter 'bta' \(known: beta, n\)"):
        S(bta=0.5)
    with pytest.raises(ConfigError, match=r"beta = 2.0 must be in \[0, 1\]"):
        S(beta=2)
    with pytest.raises(ConfigError, match="n must be an integer"):
        S(n=[1])
    s = S()
    s.set_params({"beta": 0.75})
    assert s.p.beta == 0.75


class _Reader(_Cash):
    """Records the pages it is shown."""

    name: ClassVar[str] = "test-reader"
    pages: ClassVar[list[Page]] = []

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        _Reader.pages.append(page)
        return super().on_page(page, relevance, queued)


class _LinkReader(_Reader):
    name: ClassVar[str] = "test-link-reader"
    needs_text: ClassVar[bool] = False


@pytest.mark.parametrize(
    ("strategy", "filters", "links_only"),
    [
        (_LinkReader, [], True),
        (_LinkReader, [{"name": "host-blacklist", "hosts": ["e.org"]}], True),
        (_LinkReader, [{"name": "language", "target": ["en"]}], False),  # reads anchors
        (_Reader, [], False),
    ],
    ids=["links-only", "with-url-filter", "with-anchor-filter", "text-reader"],
)
def test_pages_are_parsed_for_what_strategy_and_filters_read(
    tmp_path: Path, strategy: type[Strategy], filters: list[dict[str, Any]], links_only: bool
) -> None:
    _Reader.pages.clear()
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, filters=filters, strategy=strategy())
    assert proc.links_only is links_only
    proc.add_seeds([A])
    (queued_a,) = store.pop(1)
    body = (f'<html><head><title>T</title></head><body><p>some words</p><a href="{B}">to b</a>'
            f'<a href="{C}" rel="nofollow">to c</a><a href="{B}">b again</a></body></html>').encode()  # fmt: skip
    proc.record(InFlight(queued_a), _result(A, body))
    (page,) = _Reader.pages
    # the rel="nofollow" link is not followed (fetch.follow_nofollow_links is off)
    assert [(k.url, k.count, k.nofollow) for k in page.links] == [(B, 2, False)]
    assert page.title == "T"
    if links_only:
        assert (page.text, page.links[0].anchor, page.links[0].context) == ("", "", "")
    else:
        assert page.text == "some words to b to c b again"
        assert page.links[0].anchor == "to b"
