"""The strategies' equations checked independently: every expected number is worked out
by hand from the paper's equation (the derivation is in the comment beside it), never
read back from the code or from a crawl's own log.

The harness (``tests.test_strategy_cash.Harness``) drives the real result processor
over a memory frontier with fabricated pages, so the values are the ones a crawl stores.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from focuscrawl.api import crawl
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.params import NoParams
from focuscrawl.relevance.base import register_model
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.strategies.base import STRATEGIES, Strategy, register_strategy
from focuscrawl.strategies.filters import LanguageLinkFilter, Verdict
from focuscrawl.strategies.oracle import OracleStrategy, distances_to, score_of
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Decision, Link, LinkScore, Merge, Page, QueuedURL, URLState
from tests.test_strategy_cash import Harness, Relevant, TableModel, U


class Constant(TableModel):
    """Every page and every link context scores ``value``."""

    def __init__(self, value: float) -> None:
        super().__init__({})
        self.value = value

    def score(self, page: Any) -> float:
        return self.value

    def score_text(self, text: str) -> float:
        return self.value


def _cash(h: Harness, *names: str) -> list[float]:
    return [h.score(n) for n in names]


# ------------------------------------------------------------------- P1: OTIE vs. OPIC
def test_otie_at_relevance_one_half_is_opic_without_the_virtual_page(tmp_path: Path) -> None:
    # eq. 8 at r = 0.5: Δcash = cash · max(−1, 0.85 · 0^3) = 0, the cash is unchanged;
    # eq. 9 with every score 0.5: sim' = 0.25·0.5 + 0.75·0.5 = 0.5 for every link, so
    # eq. 6 splits evenly: exactly OPIC's split without the virtual page.
    (tmp_path / "otie").mkdir()
    (tmp_path / "opic").mkdir()
    otie = Harness(tmp_path / "otie", "otie", Constant(0.5))
    opic = Harness(tmp_path / "opic", "opic", None, virtual_page=False)
    for h in (otie, opic):
        h.seeds("s1")  # cash 1
        h.fetch("s1", ("a", "x"), ("b", "x"))  # a, b: 1/2 each
        h.fetch("a", ("b", "x"), ("c", "x"), ("d", "x"))  # b += 1/6, c = d = 1/6
    # by hand: s1 0, a 0, b 1/2 + 1/6 = 2/3, c 1/6, d 1/6
    expected = [0.0, 0.0, 2 / 3, 1 / 6, 1 / 6]
    assert _cash(otie, "s1", "a", "b", "c", "d") == pytest.approx(expected)
    assert [opic.strategy.cash(U[n]) for n in ("s1", "a", "b", "c", "d")] == pytest.approx(expected)  # type: ignore[attr-defined]


def test_otie_page_without_links_loses_its_cash(tmp_path: Path) -> None:
    # Algorithm 1 line 13 sets cash[p_i] = 0 whatever; with no p_j to pass it to, it is gone
    h = Harness(tmp_path, "otie", Constant(0.5))
    h.seeds("s1")
    h.fetch("s1", ("a", "x"), ("b", "x"))  # 1/2 each
    h.fetch("a")  # no links
    assert h.score("a") == 0.0
    assert h.score("b") == pytest.approx(0.5)  # the total is now 1/2, not 1


def test_otie_zero_similarity_total_splits_evenly(tmp_path: Path) -> None:
    # r = 0: eq. 8 cash = 1 + 1·max(−1, 0.85·(−1)^3) = 0.15; every sim' = 0.25·0 + 0.75·0 = 0,
    # so eq. 6's denominator is 0 and the cash is split evenly: 0.15 / 3 = 0.05 each
    h = Harness(tmp_path, "otie", Constant(0.0))
    h.seeds("s1")
    h.fetch("s1", ("a", "x"), ("b", "x"), ("c", "x"))
    assert _cash(h, "a", "b", "c") == pytest.approx([0.05, 0.05, 0.05])


def test_otie_recrawl_passes_the_gathered_cash_on(tmp_path: Path) -> None:
    model = TableModel({U["s1"]: 1.0, U["a"]: 0.5}, {"good": 1.0, "bad": 0.0})
    h = Harness(tmp_path, "otie", model)
    h.seeds("s1")
    h.fetch("s1", ("a", "good"), ("b", "bad"))
    # r(s1) = 1: cash 1.85. sim'(a) = 0.25 + 0.75·1 = 1, sim'(b) = 0.25 + 0 = 0.25:
    # a = 1.85 · 1/1.25 = 1.48, b = 1.85 · 0.25/1.25 = 0.37
    assert _cash(h, "a", "b") == pytest.approx([1.48, 0.37])
    h.fetch("a", ("s1", "bad"), ("c", "bad"))
    # r(a) = 0.5: cash stays 1.48. s1 fetched: real sim 1.0; c predicted 0.25·0.5 + 0 = 0.125:
    # s1 = 1.48 · 1/1.125, c = 1.48 · 0.125/1.125
    s1 = 1.48 / 1.125
    assert _cash(h, "s1", "c") == pytest.approx([s1, 1.48 * 0.125 / 1.125])
    # line 5 picks s1 (the fetched page with the most cash) and re-crawls it
    h.strategy.p = type(h.strategy.p)(recrawl_every=1)
    assert h.strategy.on_fetch_list([]).recrawl == [U["s1"]]
    h.fetch("s1", ("a", "good"), ("b", "bad"), recrawl=True)
    # re-crawl: cash s1 · 1.85; a is fetched now: real sim 0.5; b predicted 0.25 (as before):
    # a += s1·1.85 · 0.5/0.75, b += s1·1.85 · 0.25/0.75; s1 back to 0
    gain = s1 * 1.85
    assert h.score("s1") == 0.0
    assert h.score("a") == pytest.approx(gain * 2 / 3)  # a was 0 after its fetch
    assert h.score("b") == pytest.approx(0.37 + gain / 3)


# ------------------------------------------------------------ OPIC: the split, exactly
def test_opic_split_is_exact_per_page_not_only_conserved(tmp_path: Path) -> None:
    # virtual page on: 1 cash over 2 links + the virtual page = 1/3 each; the virtual
    # third goes to the 3 known pages (s1, a, b) evenly: 1/9 each
    h = Harness(tmp_path, "opic")
    h.seeds("s1")
    h.fetch("s1", ("a", "x"), ("b", "x"))
    cash = h.strategy.cash  # type: ignore[attr-defined]
    assert [cash(U[n]) for n in ("s1", "a", "b")] == pytest.approx([1 / 9, 4 / 9, 4 / 9])
    # a: 4/9 over (b, c, virtual) = 4/27 each; virtual 4/27 over s1, a, b, c = 1/27 each
    h.fetch("a", ("b", "x"), ("c", "x"))
    expected = {"s1": 1 / 9 + 1 / 27, "a": 1 / 27, "b": 4 / 9 + 4 / 27 + 1 / 27, "c": 4 / 27 + 1 / 27}
    assert [cash(U[n]) for n in expected] == pytest.approx(list(expected.values()))


# ---------------------------------------------------------------- P0: COMMD tie-break
def test_commd_draws_once_per_url_per_layer(tmp_path: Path) -> None:
    # b is found by two relevant parents, a by one: one draw each, so finding b twice
    # does not raise it (with one draw per parent kept by MAX it would: E[max of 2] = 2/3)
    h = Harness(tmp_path, "commd", Relevant({U["s1"], U["s2"]}))
    h.seeds("s1", "s2")
    h.fetch("s1", ("a", "x"), ("b", "x"))
    after_one = h.score("b")
    h.fetch("s2", ("b", "x"))
    assert h.score("b") == after_one
    strategy: Any = h.strategy
    assert h.score("a") == strategy.draw(U["a"])
    # at the layer's end every queued URL gets a fresh draw for the next generate
    h.proc.log_event("layer-end", strategy.on_layer_end(0))
    assert strategy.layer == 1
    assert h.score("b") == strategy.draw(U["b"]) != after_one
    assert h.store.get(U["b"]).tier == 1  # type: ignore[union-attr]  # the draw leaves the tier


def test_commd_ties_are_fair_between_one_and_many_relevant_parents() -> None:
    # over 2,000 salts, a URL with 3 relevant parents beats one with 1 parent about half
    # the time (binomial: 1,000 ± 22; 3 parents kept as max-of-3 draws would win ~75 %)
    wins = 0
    for salt in range(1, 2001):
        s: Any = STRATEGIES.get("commd")(Relevant(set()))
        s.salt = salt
        many = max(s.draw("http://many.org/") for _ in range(3))
        wins += many > s.draw("http://one.org/")
    assert 900 < wins < 1100


# ------------------------------------------------------------------------- the oracle
def test_oracle_distances_by_hand() -> None:
    graph = {"s": ["a", "b"], "a": ["c"], "b": ["d"], "c": ["r"], "d": [], "r": ["s"]}
    # r is relevant: c is 1 link from it, a 2, s 3 (via a, c), r itself 0; b, d never reach it
    assert distances_to({"r"}, graph) == {"r": 0, "c": 1, "a": 2, "s": 3}
    assert [score_of(d) for d in (0, 1, 2, 3, None)] == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4, 0])


def test_oracle_rescores_when_the_relevant_page_is_found(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(f'{{"url": "{U[n]}", "good": {str(n in ("b", "d")).lower()}}}\n' for n in U), encoding="utf-8"
    )
    graph = tmp_path / "graph.json"
    # s1 -> a -> b (relevant) and s1 -> c -> x -> d (relevant)
    edges = {"s1": ["a", "c"], "a": ["b"], "c": ["x"], "x": ["d"]}
    graph.write_text(json.dumps({U[k]: [U[v] for v in vs] for k, vs in edges.items()}), encoding="utf-8")
    oracle = OracleStrategy(labels=str(labels), relevant="good=true", graph=str(graph))
    store = MemoryFrontier()
    oracle.attach(FrontierView(store), random.Random(0))
    # a is 1 link from b: 1/2; c is 2 links from d: 1/3
    assert (oracle.dist[U["a"]], oracle.dist[U["c"]]) == (1, 2)
    store.add(U["c"], 1 / 3, depth=1, parent=None, host="c.org")
    oracle.found.add(U["b"])  # b fetched: a leads nowhere new; c still leads to d
    decision = oracle.on_tick(50)
    assert (oracle.dist.get(U["a"]), oracle.dist[U["c"]]) == (None, 2)
    assert decision.updates == []  # c's score 1/3 is still right
    oracle.found.add(U["d"])
    (update,) = oracle.on_tick(100).updates
    assert (update.url, update.score) == (U["c"], 0.0)
    assert store.state(U["c"]) == URLState.QUEUED


# ------------------------------------------------------------------- P4: the zh rule
ZH_LINKS = [
    ("http://news.example.com.tw/", "Home"),  # .tw: Chinese by TLD, whatever the anchor
    ("http://portal.example.hk/", "Login"),  # .hk: Chinese by TLD
    ("http://wiki.example.org/", "中文维基"),  # .org, Han-only anchor: Chinese for a zh crawl
    ("http://docs.example.org/", "設定"),  # .org, Han-only (also a Japanese word)
    ("http://shop.example.jp/", "English page"),  # .jp, Latin anchor: neither
    ("http://site.example.sg/", "Products"),  # .sg: English first in its table, so no
    ("http://blog.example.org/", "ひらがな"),  # kana: Japanese, never Chinese
]


@pytest.mark.parametrize(
    ("target", "kept"),
    [
        # zh: .tw and .hk by TLD; both Han-only anchors read as Chinese
        ("zh", [0, 1, 2, 3]),
        # ja: no Japanese TLD except .jp (kept by TLD); a Han-only anchor reads as Japanese
        # in a Japanese crawl (kanji) unless it names a language in its own script (中文维基:
        # Chinese, as every reading of a link's language has it), and kana is Japanese
        ("ja", [3, 4, 6]),
    ],
    ids=["zh", "ja"],
)
def test_p4_rule_tld_or_anchor_for_chinese_and_japanese(target: str, kept: list[int]) -> None:
    links = [Link(url, anchor) for url, anchor in ZH_LINKS]
    rule = LanguageLinkFilter(target=[target])
    got = rule.keep(Page("http://start.example.org/"), links, Verdict())
    assert [links.index(link) for link in got] == kept


# ------------------------------------------------------------- best-N-first (P1: N = 50)
class _ListRecorder(Strategy):
    """Links score the number of pages seen so far: the latest page's links are the best,
    so a list taken before the previous list's last page was applied would show it."""

    name: ClassVar[str] = "test-best-n"
    merge: ClassVar[Merge] = Merge.MAX
    calls: ClassVar[list[tuple[str, Any]]] = []

    def on_fetch_list(self, urls: Sequence[QueuedURL]) -> Decision:
        self.calls.append(("list", [q.url for q in urls]))
        return Decision()

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        seen = sum(1 for c in self.calls if c[0] != "list")
        self.calls.append(("page", (queued.url, [link.url for link in page.links])))
        return Decision(links=[LinkScore(link, float(seen + 1)) for link in page.links])

    def on_failure(self, queued: QueuedURL, reason: str) -> Decision:
        self.calls.append(("failure", (queued.url, [])))
        return Decision()


register_strategy("test-best-n")(_ListRecorder)


def test_each_best_n_list_is_fully_applied_before_the_next(sample_archive: Path, tmp_path: Path) -> None:
    _ListRecorder.calls.clear()
    crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="test-best-n", max_pages=30,
          fetch_list_size=5, archives=[sample_archive])  # fmt: skip
    lists = [i for i, c in enumerate(_ListRecorder.calls) if c[0] == "list"]
    assert len(lists) >= 6
    for k, (start, end) in enumerate(itertools.pairwise([*lists, len(_ListRecorder.calls)])):
        listed = _ListRecorder.calls[start][1]
        assert 1 <= len(listed) <= 5
        # between two lists: a result for every URL of the list, and nothing else
        done = [c[1][0] for c in _ListRecorder.calls[start + 1 : end]]
        assert sorted(done) == sorted(listed), k
    for nxt in lists[1:]:
        # the next list starts with a new link of the list's last page, if it found one
        last_url, last_links = _ListRecorder.calls[nxt - 1][1]
        before = {u for c in _ListRecorder.calls[:nxt - 1] if c[0] != "list" for u in [c[1][0], *c[1][1]]}
        fresh = [u for u in last_links if u not in before and u != last_url]
        if fresh:
            assert _ListRecorder.calls[nxt][1][0] in fresh


class _HalfModel(Constant):
    """Every page and link context is exactly half relevant (r = 0.5)."""

    name = "test-half"
    Params = NoParams

    @classmethod
    def from_params(cls, params: NoParams) -> _HalfModel:
        return cls(0.5)


register_model("test-half")(_HalfModel)


@pytest.mark.slow  # whole crawls
def test_otie_at_one_half_crawls_in_opic_without_virtual_page_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hand-computed case above, over a whole crawl: 300 URLs in the same order. On
    # Wikispeedia every link leads to a page; on a web of dead links (WebKB) the two part
    # after ~70 URLs, rightly: eq. 7 gives a fetched URL that gave no page its real
    # similarity, 0, so OTIE sends it no cash, while OPIC splits evenly over every link.
    from tests.conftest import shared_file

    archive = shared_file("wikispeedia.warc.gz")
    # a duplicate's links are followed: only OTIE (which has a model) reads page text, and
    # so only it would find duplicates and drop their links (parse.follow_duplicates)
    monkeypatch.setenv("FOCUSCRAWL_PARSE__FOLLOW_DUPLICATES", "true")
    seed = ["http://schools-wikipedia.org/wp/c/Cat.htm"]
    common: dict[str, Any] = {"max_pages": 300, "fetch_list_size": 50, "archives": [archive]}
    crawl(seed, tmp_path / "otie", strategy="otie", model={"name": "test-half"},
          strategy_params={"recrawl_every": 0}, **common)  # fmt: skip
    crawl(seed, tmp_path / "opic", strategy="opic", strategy_params={"virtual_page": False}, **common)
    order = [
        [json.loads(x)["url"] for x in (tmp_path / name / "pages.jsonl").read_text().splitlines()]
        for name in ("otie", "opic")
    ]
    assert len(order[0]) == 300
    assert order[0] == order[1]
