"""P1's and P0's strategies against their equations, on tiny graphs, by hand.

Every test drives the real result processor (scope, filters, strategy, frontier)
over a MemoryFrontier with fabricated fetch results, so the numbers below are
the ones a crawl would store; each expected value says how it was derived.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.crawler.recorder import Recorder
from focuscrawl.crawler.window import InFlight
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.settings import ParseSettings, Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import STRATEGIES, Strategy
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import FetchResult, Page, URLState
from focuscrawl.urls import Scope

U = {name: f"http://{name}.org/" for name in ("s1", "s2", "a", "b", "c", "d", "x")}


class TableModel:
    """A relevance model that answers from tables: page score by URL, text score by word."""

    name = "table"
    threshold = 0.5

    def __init__(self, pages: dict[str, float], words: dict[str, float] | None = None) -> None:
        self.pages = pages
        self.words = words or {}

    def score(self, page: Page) -> float:
        return self.pages.get(page.url, 0.0)

    def score_text(self, text: str) -> float:
        return max((v for w, v in self.words.items() if w in text.split()), default=0.0)

    def save(self, directory: Path) -> None:  # pragma: no cover - not saved in tests
        raise NotImplementedError


def html(*links: tuple[str, str]) -> bytes:
    """A page whose links are (url, anchor) pairs, 30 filler words apart, so that each
    link's 20-word context window holds its own anchor only."""
    filler = " ".join(["lorem"] * 30)
    body = "".join(f'<p>{filler} <a href="{u}">{a}</a> {filler}</p>' for u, a in links)
    return f"<html><body>{body}</body></html>".encode()


class Harness:
    def __init__(self, tmp_path: Path, name: str, model: Any = None, **params: Any) -> None:
        self.store = MemoryFrontier()
        self.strategy: Strategy = STRATEGIES.get(name)(model, **params)
        # the pages here are the same filler around their links: duplicates of each other
        # to the duplicate detector (issue 37), which would drop their links
        settings = Settings(parse=ParseSettings(dedup=False))
        self.store.ensure_columns(("relevance", *self.strategy.columns, "_digest"))
        self.strategy.attach(FrontierView(self.store), random.Random(7))
        self.proc = Recorder(
            settings, queue=self.store, columns=self.store, graph=self.store, strategy=self.strategy, model=model, filters=[],
            scope=Scope.for_seeds(settings.scope, [U["s1"]]), stats=CrawlStats(),
            warc=WarcOutput(tmp_path / "c.warc.gz"), pages=JsonlOutput(tmp_path / "p.jsonl"),
            decisions=JsonlOutput(tmp_path / "d.jsonl"),
        )  # fmt: skip

    def seeds(self, *names: str) -> None:
        self.proc.add_seeds([U[n] for n in names])

    def fetch(self, name: str, *links: tuple[str, str], recrawl: bool = False) -> None:
        """Take ``name`` from the frontier (it must be queued or re-queued) and record its page."""
        url = U[name]
        if self.store.state(url) == URLState.QUEUED:
            self.store.mark(url, URLState.IN_FLIGHT)
        row = self.store.get(url)
        assert row is not None
        body = html(*((U[n], a) for n, a in links))
        result = FetchResult(url=url, final_url=url, status=200, body=body, content_type="text/html",
                             charset="utf-8", headers={"Content-Type": "text/html"})  # fmt: skip
        self.proc.record(InFlight(row, recrawl=recrawl), result)

    def score(self, name: str) -> float:
        row = self.store.get(U[name])
        assert row is not None
        return row.score

    def value(self, name: str, column: str) -> float:
        return self.store.value(U[name], column) or 0.0


# ---------------------------------------------------------------- P1: link-context
def test_link_context_is_eq9_and_keeps_the_higher_score(tmp_path: Path) -> None:
    model = TableModel({U["s1"]: 0.8, U["a"]: 0.2}, {"good": 0.6, "bad": 0.1})
    h = Harness(tmp_path, "link-context", model)
    h.seeds("s1")
    h.fetch("s1", ("b", "good"), ("c", "bad"))
    # eq. 9, beta 0.25: b = 0.25*0.8 + 0.75*0.6 = 0.65; c = 0.25*0.8 + 0.75*0.1 = 0.275
    assert h.score("b") == pytest.approx(0.65)
    assert h.score("c") == pytest.approx(0.275)
    h.proc.add_seeds([U["a"]])
    h.fetch("a", ("c", "good"), ("b", "bad"))
    # from a (0.2): c = 0.05 + 0.45 = 0.5 > 0.275 -> 0.5; b = 0.05 + 0.075 = 0.125 < 0.65 -> kept
    assert h.score("c") == pytest.approx(0.5)
    assert h.score("b") == pytest.approx(0.65)


# ------------------------------------------------------------------------ P1: OPIC
def test_opic_splits_cash_evenly_and_conserves_it(tmp_path: Path) -> None:
    h = Harness(tmp_path, "opic")
    h.seeds("s1", "s2")  # 1/2 each
    assert h.score("s1") == pytest.approx(0.5)
    h.fetch("s1", ("a", "x"), ("b", "x"), ("s2", "x"))
    # cash 1/2 over 3 links + the virtual page = 4 parts of 1/8; the virtual 1/8 is shared by
    # the 4 known pages (s1, s2, a, b): 1/32 each. s2: 1/2 + 1/8 + 1/32; a, b: 1/8 + 1/32;
    # s1: 0 + 1/32 (its own virtual share); its history 1/2.
    cash = h.strategy.cash  # type: ignore[attr-defined]
    assert cash(U["s2"]) == pytest.approx(0.5 + 1 / 8 + 1 / 32)
    assert cash(U["a"]) == pytest.approx(1 / 8 + 1 / 32)
    assert cash(U["s1"]) == pytest.approx(1 / 32)
    assert h.value("s1", "history") == pytest.approx(0.5)
    total = sum(cash(u) for u in (U["s1"], U["s2"], U["a"], U["b"]))
    assert total == pytest.approx(1.0)
    # greedy: the next URL is the one with the most cash
    (nxt,) = h.store.pop(1)
    assert nxt.url == U["s2"]
    h.store.mark(U["s2"], URLState.QUEUED)
    h.fetch("s2")  # no links: all of its cash goes to the virtual page, shared by all 4
    assert sum(cash(u) for u in (U["s1"], U["s2"], U["a"], U["b"])) == pytest.approx(1.0)
    assert cash(U["a"]) == pytest.approx(1 / 8 + 1 / 32 + (0.5 + 1 / 8 + 1 / 32) / 4)


# ------------------------------------------------------------------------ P1: OTIE
def test_otie_revises_by_eq8_and_splits_by_eq6_7(tmp_path: Path) -> None:
    model = TableModel({U["s1"]: 1.0, U["a"]: 0.25}, {"good": 0.8, "bad": 0.0})
    h = Harness(tmp_path, "otie", model)
    h.seeds("s1")  # cash 1
    h.fetch("s1", ("a", "good"), ("b", "bad"))
    # eq. 8, r = 1: cash = 1 + 1*max(-1, 0.85*1^3) = 1.85
    # eq. 7, both unfetched: sim'(a) = 0.25*1 + 0.75*0.8 = 0.85; sim'(b) = 0.25*1 + 0 = 0.25
    # eq. 6: a = 0.85/1.1 * 1.85, b = 0.25/1.1 * 1.85
    assert h.score("a") == pytest.approx(0.85 / 1.1 * 1.85)
    assert h.score("b") == pytest.approx(0.25 / 1.1 * 1.85)
    assert h.score("s1") == 0.0
    cash_a = h.score("a")
    h.fetch("a", ("s1", "bad"), ("c", "good"))
    # r(a) = 0.25: cash = cash_a * (1 + max(-1, 0.85*(-0.5)^3)) = cash_a * (1 - 0.10625)
    # s1 is fetched: its real similarity 1.0 (eq. 7); c predicted: 0.25*0.25 + 0.75*0.8 = 0.6625
    revised = cash_a * (1 - 0.85 * 0.125)
    assert h.score("s1") == pytest.approx(1.0 / 1.6625 * revised)
    assert h.score("c") == pytest.approx(0.6625 / 1.6625 * revised)
    # line 5: the fetched page with the most cash is s1; OTIE adds it to a fetch list
    h.strategy.p = type(h.strategy.p)(recrawl_every=1)
    decision = h.strategy.on_fetch_list([])
    assert decision.recrawl == [U["s1"]]


@pytest.mark.parametrize(
    ("params", "message"),
    [({"a": 0}, "a = 0.0 must be > 0"), ({"d": 2}, "x\\^d an odd function"), ({"beta": 1.5}, "beta")],
    ids=["a-not-positive", "d-even", "beta-out-of-range"],
)
def test_otie_refuses_parameters_that_break_the_paper(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        STRATEGIES.get("otie")(TableModel({}), **params)


# ---------------------------------------------------------------- P0: OPIC+COMMD
class Relevant(TableModel):
    """Binary judgement: relevant iff listed."""

    def __init__(self, relevant: set[str]) -> None:
        super().__init__(dict.fromkeys(relevant, 1.0))
        self.relevant = relevant

    def judge(self, page: Page) -> tuple[float, bool]:
        return (1.0, True) if page.url in self.relevant else (0.0, False)


def test_opic_commd_eq1_to_eq5_over_two_layers(tmp_path: Path) -> None:
    model = Relevant({U["s1"], U["a"]})
    h = Harness(tmp_path, "opic-commd", model)
    h.seeds("s1", "s2")  # eq. 1: c_0 = C/2 = 0.5 each; s_0 = 0.5
    assert h.value("s1", "cash") == pytest.approx(0.5)
    # layer 0: s1 relevant links a twice and b once (t/n = 2/3, 1/3); s2 not relevant links c
    h.proc.stats.layer = 0  # the fetch round (the rounds write it)
    h.fetch("s1", ("a", "x"), ("a", "x"), ("b", "x"))
    h.fetch("s2", ("c", "x"))
    h.proc.log_event("layer-end", h.strategy.on_layer_end(0))
    # R_0 = c_0(s2) = 0.5, one relevant page -> R_1 = 0.5 (eq. 4);
    # eq. 5: c_1(a) = 2/3 * (0.5 + 0.5) = 2/3, c_1(b) = 1/3, c_1(c) = 0 (s2 not relevant)
    assert h.value("a", "cash") == pytest.approx(2 / 3)
    assert h.value("b", "cash") == pytest.approx(1 / 3)
    assert h.value("c", "cash") == 0.0
    # s_1 = sum of c_n / C: a 2/3, b 1/3, c 0
    assert [h.score(n) for n in "abc"] == pytest.approx([2 / 3, 1 / 3, 0.0])
    total = sum(h.value(n, "cash") for n in ("s1", "s2", "a", "b", "c"))
    assert total == pytest.approx(1.0)  # the cash sum stays C
    # layer 1: a relevant links d; b not relevant; c (cash 0) not fetched (topN)
    h.proc.stats.layer = 1
    h.fetch("a", ("d", "x"), ("b", "x"))
    h.fetch("b", ("d", "x"))
    h.proc.log_event("layer-end", h.strategy.on_layer_end(1))
    # R_1 = c_1(b) = 1/3 -> R_2 = 1/3 on a; c_2(d) = 1/2 (2/3 + 1/3), c_2(b) = 1/2 (b was fetched:
    # its cash 0 + 1/2); s_2(d) = 1/2, s_2(b) = 1/3 + 1/2
    assert h.value("d", "cash") == pytest.approx(0.5)
    assert h.value("b", "cash") == pytest.approx(0.5)
    assert h.score("d") == pytest.approx(0.5)
    assert h.score("b") == pytest.approx(1 / 3 + 1 / 2)
    assert sum(h.value(n, "cash") for n in ("s1", "s2", "a", "b", "c", "d")) == pytest.approx(1.0)


def test_commd_scores_children_of_relevant_pages_1_with_seeded_ties(tmp_path: Path) -> None:
    model = Relevant({U["s1"]})
    runs = []
    for _ in range(2):
        h = Harness(tmp_path, "commd", model)
        h.seeds("s1", "s2")
        h.fetch("s1", ("a", "x"), ("b", "x"))
        h.fetch("s2", ("b", "x"), ("c", "x"))
        rows = {n: h.store.get(U[n]) for n in "abc"}
        # s = 1 (tier 1) for a and b (a relevant parent), 0 for c
        assert [rows[n].tier for n in "abc"] == [1, 1, 0]  # type: ignore[union-attr]
        order = [u.url for u in h.store.pop(3)]  # tier 1 only: one pop serves one tier
        assert sorted(order) == [U["a"], U["b"]]
        runs.append(order + [u.url for u in h.store.pop(3)])
    assert runs[0] == runs[1]  # the random tie-break comes from the crawl's seed
    assert runs[0][2] == U["c"]
