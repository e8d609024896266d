"""P4's language focus: the link rule and Tamura's hard / soft / server / directory policies
by hand on tiny graphs, and a crawl of the replay web (multilingual-dev, https)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.crawler.recorder import Recorder
from focuscrawl.crawler.window import InFlight
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.replay.archive import load_labels
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import STRATEGIES
from focuscrawl.strategies.language import LanguageStrategy, ancestors
from focuscrawl.strategies.language_kinds import directory_of, kind_of
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import FetchResult, Link, URLState
from focuscrawl.urls import Scope
from tests.conftest import shared_file

JA = "これは日本語で書かれたページです。ウェブサーバの設定について説明します。"
EN = "This page is written in English and explains how to configure the web server."


def _page(text: str, *links: tuple[str, str]) -> bytes:
    anchors = "".join(f' <a href="{url}">{anchor}</a>' for url, anchor in links)
    return f"<html><body><p>{text}</p>{anchors}</body></html>".encode()


def _result(url: str, body: bytes) -> FetchResult:
    return FetchResult(
        url=url, final_url=url, status=200, body=body, content_type="text/html",
        charset="utf-8", headers={"Content-Type": "text/html; charset=utf-8"},
    )  # fmt: skip


def _crawler(tmp_path: Path, seed: str, **params: object) -> tuple[Recorder, MemoryFrontier, LanguageStrategy]:
    settings = Settings()
    params.setdefault("prior_pages", 0)  # P4's rule and Tamura's policies by hand: the prior alone
    strategy = LanguageStrategy(None, **params)
    store = MemoryFrontier()
    store.ensure_columns(("relevance", *strategy.columns))
    strategy.attach(FrontierView(store), random.Random(0))
    proc = Recorder(
        settings, queue=store, columns=store, graph=store, strategy=strategy, model=None, filters=[],
        scope=Scope.for_seeds(settings.scope, [seed]), stats=CrawlStats(),
        warc=WarcOutput(tmp_path / "c.warc.gz"), pages=JsonlOutput(tmp_path / "pages.jsonl"),
        decisions=JsonlOutput(tmp_path / "decisions.jsonl"),
    )  # fmt: skip
    proc.add_seeds([seed])
    return proc, store, strategy


def _next(proc: Recorder, store: MemoryFrontier, expected: str, body: bytes) -> None:
    (queued,) = store.pop(1)
    assert queued.url == expected
    proc.record(InFlight(queued), _result(queued.url, body))


def _scores(store: MemoryFrontier, *urls: str) -> list[float | None]:
    return [None if (row := store.get(u)) is None else row.score for u in urls]


A, B, C, D, E = "http://a.org/", "http://b.jp/", "http://c.org/", "http://d.org/", "http://e.jp/x"
# A (Japanese) links to B by its .jp TLD (English anchor), to C by its Japanese anchor,
# and to D with an English anchor on .org: P4's rule keeps B and C, drops D.
A_PAGE = _page(JA, (B, "English words"), (C, "日本語のリンク"), (D, "English link"))
# B (English) links to E (.jp) and to C with a kanji-only anchor (read as ja in a ja crawl)
B_PAGE = _page(EN, (E, "more"), (C, "設定"))


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # rule (P4's experimental group): kept links in discovery order, score 0.9 (1 if
        # their URL names ja); D failed the rule and is queued after them (the soft
        # fallback: on a ja page, 0.5)
        ("rule", {B: 0.9, C: 0.9, D: 0.5, E: 0.9}),
        # hard: B is English, so its links (E) are dropped; C was queued from A already
        ("hard", {B: 0.0, C: 0.0, D: None, E: None}),
        # soft: links of A (ja) score 1, links of B (en) 0; C keeps its best score 1
        ("soft", {B: 1.0, C: 1.0, D: None, E: 0.0}),
    ],
)
def test_link_rule_and_page_policies(tmp_path: Path, policy: str, expected: dict[str, float | None]) -> None:
    proc, store, strategy = _crawler(tmp_path, A, target=["ja"], policy=policy)
    _next(proc, store, A, A_PAGE)
    _next(proc, store, B, B_PAGE)
    assert dict(zip(expected, _scores(store, *expected), strict=True)) == expected
    assert strategy.counters() == {"pages_lang_en": 1, "pages_lang_ja": 1, "pages_lang_target": 1}
    assert proc.decisions is not None
    proc.decisions.sync()
    decisions = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert "page ja; 1 links failed the tld-or-anchor rule" in json.dumps(decisions[1], ensure_ascii=False)


def test_rule_off_keeps_every_link(tmp_path: Path) -> None:
    proc, store, _ = _crawler(tmp_path, A, target=["ja"], rule="off")
    _next(proc, store, A, A_PAGE)
    assert _scores(store, B, C, D) == [0.9, 0.9, 0.9]


def test_p4_rule_without_fallback_drops_what_fails(tmp_path: Path) -> None:
    proc, store, _ = _crawler(tmp_path, A, target=["ja"], fallback="off")
    _next(proc, store, A, A_PAGE)
    _next(proc, store, B, B_PAGE)
    assert _scores(store, B, C, D, E) == [0.9, 0.9, None, 0.9]


def test_an_english_seed_does_not_end_the_crawl(tmp_path: Path) -> None:
    """Issue 38 item 1: a seed page in English on .org whose links all fail P4's rule.

    The fallback scores, by hand: a URL naming the target (/ja/, index.ja.html) 0.75,
    one naming another language (/de/) 0, none on a foreign page 0.25."""
    seed, ja_dir, ja_file, de_dir, plain = (
        "http://hub.org/", "http://docs.org/ja/", "http://docs.org/index.ja.html",
        "http://docs.org/de/", "http://docs.org/about.html",
    )  # fmt: skip
    page = _page(EN, (ja_dir, "Japanese"), (ja_file, "Manual"), (de_dir, "German"), (plain, "About"))
    proc, store, _ = _crawler(tmp_path, seed, target=["ja"])
    _next(proc, store, seed, page)
    assert _scores(store, ja_dir, ja_file, de_dir, plain) == [0.75, 0.75, 0.0, 0.25]
    # P4's rule alone keeps none of them: the crawl would have ended here
    (tmp_path / "p4").mkdir()
    proc2, store2, _ = _crawler(tmp_path / "p4", seed, target=["ja"], fallback="off")
    _next(proc2, store2, seed, page)
    assert _scores(store2, ja_dir, ja_file, de_dir, plain) == [None, None, None, None]
    assert store2.pop(1) == []


def test_server_policy_rescores_a_host_by_hand(tmp_path: Path) -> None:
    """Server classes: N_r/N_a >= 0.5 -> 1, below -> 0, not visited -> unknown 0.5."""
    a1, a2, a3 = (f"http://a.org/{i}" for i in (1, 2, 3))
    x1, x5, x9 = (f"http://x.org/{i}" for i in (1, 5, 9))
    proc, store, strategy = _crawler(tmp_path, a1, target=["ja"], policy="server")
    # a.org/1 is Japanese: a.org N_r/N_a = 1/1 -> 1; x.org not visited -> 0.5
    _next(proc, store, a1, _page(JA, (a2, "次へ"), (x1, "日本語"), (x9, "日本語")))
    assert _scores(store, a2, x1, x9) == [1.0, 0.5, 0.5]
    _next(proc, store, a2, _page(JA))  # a.org 2/2: still 1, no host update
    # x.org/1 is English: x.org 0/1 -> 0, so the queued x.org/9 drops from 0.5 to 0
    _next(proc, store, x1, _page(EN, (a3, "日本語"), (x5, "日本語")))
    assert _scores(store, x9, a3, x5) == [0.0, 1.0, 0.0]
    assert proc.stats.counters["host_rescored"] >= 1
    assert strategy.places == {"a.org": [2, 2], "x.org": [0, 1]}
    assert proc.decisions is not None
    proc.decisions.sync()
    decisions = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert decisions[-1]["hosts"] == [["x.org", 0.0, "set"]]
    # the state survives a resume
    again = LanguageStrategy(None, target=["ja"], policy="server")
    again.load_state(json.loads(json.dumps(strategy.state_dict())))
    assert again.places == strategy.places
    assert again.counters() == strategy.counters()


def test_directory_policy_rescores_a_directory_by_hand(tmp_path: Path) -> None:
    root = "https://h.org/docs/"
    seed, a, z, c, b = (root + p for p in ("ja/index.html", "ja/mod/a.html", "ja/mod/z.html", "ja/c.html", "en/b.html"))
    y, x = root + "ja/mod/y.html", root + "ja/x.html"
    proc, store, _ = _crawler(tmp_path, seed, target=["ja"], policy="directory")
    # the seed (ja) makes docs/ja/ a target directory: ja/mod/ (not visited) takes the class
    # of its nearest visited ancestor ja/ -> 1; en/ and docs/ are not visited -> 0.5
    _next(proc, store, seed, _page(JA, (a, "モジュール"), (z, "モジュール"), (c, "設定"), (b, "英語")))
    assert _scores(store, a, z, c, b) == [1.0, 1.0, 1.0, 0.5]
    # ja/mod/a.html is English: ja/mod/ becomes 0/1 -> 0; the queued ja/mod/z.html drops to 0,
    # ja/c.html (another directory) keeps 1; a's links: ja/mod/y.html 0, ja/x.html 1
    _next(proc, store, a, _page(EN, (y, "日本語"), (x, "日本語")))
    assert _scores(store, z, c, b, y, x) == [0.0, 1.0, 0.5, 0.0, 1.0]
    assert [q.url for q in store.pop(3)] == [c, x, b]


def test_measured_kinds_weigh_the_prior_by_hand() -> None:
    """With prior_pages = k: a link's prior weighed with its kind's measured target share,
    (N_r + k * prior) / (N_a + k), at least hub_weight * (hubs + k / 2) / (N_a + k); a kind
    not measured takes at least ``probe`` until a page of its host and URL language is."""
    from focuscrawl.types import Merge

    s = LanguageStrategy(None, target=["ja"], prior_pages=2, hub_weight=1.0, probe=0.3, explore="fixed")
    ja, de = "http://a.org/ja/x.html", "http://a.org/de/x.html"
    assert kind_of(ja) == "http://a.org/ja/ #ja"
    assert s._measured(ja, 0.75, "") == (0.75, Merge.SET, "")  # not measured: the prior
    assert s._measured(de, 0.0, "")[0] == 0.3  # not measured, de on a.org not probed: the probe
    s.kinds.probed.add("a.org #de")
    assert s._measured("http://a.org/de/y/z.html", 0.0, "")[0] == 0.0  # probed once per host and language
    s.kinds.counts["http://a.org/ja/ #ja"] = [0.5, 3, 0]  # 3 pages, target share 0.5 in all, no hub
    assert s._measured(ja, 0.75, "")[0] == pytest.approx((0.5 + 2 * 0.75) / (3 + 2))  # 0.4
    s.kinds.counts["http://a.org/ja/ #ja"] = [0.5, 3, 3]  # each of them linked to a new target URL elsewhere
    assert s._measured(ja, 0.75, "")[0] == pytest.approx((3 + 1) / (3 + 2))  # the hub's 0.8
    off = LanguageStrategy(None, target=["ja"], prior_pages=0)  # the prior, kept at its best
    assert off._measured(de, 0.0, "") == (0.0, Merge.MAX, "")


@pytest.mark.parametrize(("link_classes", "expected"), [(False, (0.75, 0.625)), (True, (2.5 / 3, 1.25 / 3))],
                         ids=["kind", "kind-and-class"])  # fmt: skip
def test_link_classes_measure_a_kind_per_prior_by_hand(link_classes: bool, expected: tuple[float, float]) -> None:
    """With link_classes, a kind's URLs are measured apart by the prior their link was
    given (its own evidence: an anchor in the target language 1.0, in another 0.75), the
    class's share weighed with the kind's, as k pages: an untranslated page behind an
    English anchor in a ``ja`` directory lowers the English anchors' links, not all."""
    s = LanguageStrategy(None, target=["ja"], prior_pages=2, link_classes=link_classes)
    a, b, c, d = (f"http://a.org/ja/{n}.html" for n in "abcd")
    s._measured(a, 1.0, "")
    s._measured(b, 0.75, "")
    s.kinds.observe(a, 1.0, [], s.targets)  # behind a Japanese anchor: Japanese
    s.kinds.observe(b, 0.0, [], s.targets)  # behind an English one: English
    # the kind: (1 + 2 * prior) / (2 + 2): 0.75 and 0.625; its classes @1 [1, 1] and
    # @0.75 [0, 1]: (1 + 2 * 0.75) / (1 + 2) and (0 + 2 * 0.625) / (1 + 2)
    assert (s._measured(c, 1.0, "")[0], s._measured(d, 0.75, "")[0]) == pytest.approx(expected)


def test_a_kinds_dead_links_count_as_pages_not_in_the_language_by_hand(tmp_path: Path) -> None:
    """Under the measured kinds a URL its server answers with a client error counts as a
    page of its kind with no target-language text, so a directory of dead links sinks
    (before, a failure was never measured: 1,516 of a crawl's 2,000 URLs went to such
    links on docweb-third). No answer, and 429 (try later), count for nothing.

    By hand, k = 2, hub_weight 1: the seed's links to ``docs.org/ja/`` fail P4's rule
    (English anchors, .org) and take the fallback's 0.75 (their URL names ja); its link to
    ``x/more.html`` the fallback's 0.25 (no language in the URL, on a foreign page; its
    kind not measured and its host probed by the seed). After
    a's 404 the kind is [N_r, N_a, hubs] = [0, 1, 0]: (0 + 2 * 0.75) / (1 + 2) = 0.5, above
    the hub floor (0 + 2 / 2) / (1 + 2); after b's 410 [0, 2, 0]: 1.5 / 4 = 0.375. c's
    timeout and d's 429 leave it so: a new link of the kind on ``more.html`` takes 0.375
    (with either counted 1.5 / 5 = 0.3, with both 0.25)."""
    seed, more = "http://hub.org/", "http://hub.org/x/more.html"
    a, b, c, d, h = (f"http://docs.org/ja/{n}.html" for n in "abcdh")
    page = _page(EN, *((u, f"Manual {u[-6]}") for u in (a, b, c, d)), (more, "More"))
    proc, store, _ = _crawler(tmp_path, seed, target=["ja"], prior_pages=2, hub_weight=1.0, probe=0.3, explore="fixed")
    _next(proc, store, seed, page)
    assert _scores(store, a, b, c, d, more) == [0.75, 0.75, 0.75, 0.75, 0.25]

    def answer(url: str, result: FetchResult) -> None:
        (queued,) = store.pop(1)
        assert queued.url == url
        proc.record(InFlight(queued), result)

    answer(a, FetchResult(a, a, 404, body=b"Not Found", content_type="text/html"))
    assert _scores(store, b, c, d) == pytest.approx([0.5, 0.5, 0.5])
    answer(b, FetchResult(b, b, 410, body=b"Gone", content_type="text/html"))
    assert _scores(store, c, d) == pytest.approx([0.375, 0.375])
    answer(c, FetchResult(c, c, 0, error="timeout"))
    answer(d, FetchResult(d, d, 429, body=b"", content_type="text/html"))
    _next(proc, store, more, _page(EN, (h, "Manual h")))
    assert _scores(store, h) == pytest.approx([0.375])


class _AllQueued:
    def state(self, url: str) -> URLState:
        return URLState.QUEUED


@pytest.mark.parametrize(("siblings", "expected"), [(False, 0.25), (True, 2 / 3)], ids=["alone", "siblings"])
def test_siblings_measure_a_directory_not_fetched_yet_by_hand(siblings: bool, expected: float) -> None:
    """With siblings, a kind not measured yet takes the measure of its sibling
    directories (its path with another last segment): one application's help page that
    links to a Korean translation makes the others' hubs too, and they are rescored."""
    s = LanguageStrategy(None, target=["ko"], prior_pages=2, hub_weight=1.0, siblings=siblings)
    a, b = "http://h.org/users/a/", "http://h.org/users/b/"
    s._measured(a, 0.25, "")
    s._measured(b, 0.25, "")
    kind = s.kinds.observe(a, 0.0, [Link("http://h.org/users/a/stable/index.html.ko", "한국어", "")], s.targets)
    # a is a hub; its siblings [N_r, N_a, hubs] = [0, 1, 1]: at least hub_weight * (1 + 2 / 2) / (1 + 2)
    assert s._measured(b, 0.25, "")[0] == pytest.approx(expected)
    updates = s.kinds.rescore(kind, _AllQueued())  # type: ignore[arg-type]
    assert [(u.url, round(u.score, 4)) for u in updates] == [(a, 0.6667), *([(b, 0.6667)] if siblings else [])]


def test_directory_helpers() -> None:
    assert directory_of("https://h.org/a/b.html") == "https://h.org/a/"
    assert directory_of("https://h.org/a/") == "https://h.org/a/"
    assert ancestors("https://h.org/a/b/") == ["https://h.org/a/b/", "https://h.org/a/", "https://h.org/"]
    assert ancestors("https://h.org/") == ["https://h.org/"]


def test_parameters_are_checked() -> None:
    assert STRATEGIES.get("language") is LanguageStrategy
    with pytest.raises(ConfigError, match="target must name at least one language"):
        LanguageStrategy(None)
    with pytest.raises(ConfigError, match="policy must be one of rule, hard, soft, server, directory"):
        LanguageStrategy(None, target=["ja"], policy="medium")
    with pytest.raises(ConfigError, match="rule must be one of"):
        LanguageStrategy(None, target=["ja"], rule="url")
    with pytest.raises(ConfigError, match=r"min_share = 0\.0 must be in"):
        LanguageStrategy(None, target=["ja"], min_share=0)
    assert LanguageStrategy(None, target="ja,ko").targets == {"ja", "ko"}


# ------------------------------------------------------------ on the replay web
@pytest.fixture(scope="module")
def multilingual_replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayProcess]:
    archive = shared_file("multilingual-dev.warc.gz")
    with ReplayProcess([archive], log_path=tmp_path_factory.mktemp("replay") / "requests.tsv") as replay:
        yield replay


@pytest.mark.slow  # four crawls of the multilingual web
def test_korean_crawl_against_bfs_on_the_replay_web_and_in_simulation(multilingual_replay: ReplayProcess, tmp_path: Path) -> None:
    """P4's rule from the Korean manual (the hosts are .org: only Korean anchors pass) against
    the control crawl from the same seed, 100 pages each, judged by the archive's labels."""
    from focuscrawl.api import crawl

    labels = load_labels(shared_file("multilingual-dev.labels.jsonl"))
    seed = "https://httpd.apache.org/docs/2.4/ko/index.html"
    korean: dict[str, int] = {}
    for strategy, params in (("bfs", {}), ("language", {"target": ["ko"], "policy": "rule"})):
        stats = crawl(
            [seed], tmp_path / strategy, strategy=strategy, max_pages=100, delay=0.0,
            proxy=multilingual_replay.proxy_url, proxy_ca=multilingual_replay.ca_cert_path,
            strategy_params=params,
        )  # fmt: skip
        assert stats.fetched == 100
        pages = [json.loads(line) for line in (tmp_path / strategy / "pages.jsonl").read_text().splitlines()]
        korean[strategy] = sum(labels[p["url"]]["lang_detected"] == "ko" for p in pages if p["url"] in labels)
    # measured: 62 Korean pages of 100 focused, 49 of 100 breadth-first
    assert korean["language"] >= korean["bfs"] + 8
    run = json.loads((tmp_path / "language" / "run.json").read_text())
    assert run["strategy_params"]["target"] == ["ko"]
    # the strategy's own page counts (cld2), kept in its committed state, cover every parsed page
    store = open_frontier(Settings(), tmp_path / "language" / "crawl.db")
    try:
        state = json.loads(store.get_meta("engine") or "{}")["strategy"]
    finally:
        store.close()
    assert sum(state["langs"].values()) == run["summary"]["pages"]
    assert abs(state["langs"]["ko"] - korean["language"]) <= 5
    # simulated over the archive (virtual time, no sockets): the same pages in the same order
    crawl([seed], tmp_path / "sim", strategy="language", max_pages=100,
          archives=[shared_file("multilingual-dev.warc.gz")], strategy_params={"target": ["ko"]})  # fmt: skip
    live = (tmp_path / "language" / "pages.jsonl").read_text().splitlines()
    simulated = (tmp_path / "sim" / "pages.jsonl").read_text().splitlines()
    assert [json.loads(line)["url"] for line in simulated] == [json.loads(line)["url"] for line in live]


@pytest.mark.slow  # three crawls of 160 URLs of docweb-dev
def test_measured_kinds_resume_as_the_uninterrupted_crawl(tmp_path: Path) -> None:
    """Stopped (as by Ctrl-C) after 60 pages and resumed, a crawl with measured kinds
    fetches the pages of the uninterrupted one with the same scores: the per-kind counts,
    the URLs' priors and the probed hosts are its resume state (they started empty)."""
    from focuscrawl.api import open_crawl
    from tests.stopping import run_stopped_after

    archive = shared_file("docweb-dev.warc.gz")
    params = {"target": ["ja"], "prior_pages": 2, "hub_weight": 1.0, "explore": "thompson"}
    overrides = {"crawl": {"strategy": "language", "max_pages": 160, "schedule": "ordered",
                           "patience": 0.7, "strategy_params": params}}  # fmt: skip
    runs = {}
    for name, stop in (("whole", 10**6), ("stopped", 60)):
        out = tmp_path / name
        run_stopped_after(open_crawl(out, ["http://docs-hub.example/"], overrides=overrides, archives=[archive]), stop)
        if name == "stopped":
            assert json.loads((out / "run.json").read_text())["finished"] is False
            run_stopped_after(open_crawl(out, resume=True, archives=[archive]), 10**6)
        runs[name] = [(p["url"], p["score"]) for p in map(json.loads, (out / "pages.jsonl").read_text().splitlines())]
    assert len(runs["whole"]) == 160
    assert runs["stopped"] == runs["whole"]


def test_thompson_probe_draws_from_the_priors_beta_posterior() -> None:
    """``explore = "thompson"``: a kind not measured is probed at least at a draw from
    Beta(k * prior + 1/2, k * (1 - prior) + 1/2), a function of the seed and the kind
    (the same crawl at every run); the mean of Beta(1/2, 5/2) is 1/6, of Beta(3/2, 3/2) 1/2."""
    from focuscrawl.strategies.language_kinds import MeasuredKinds

    kinds = MeasuredKinds(2.0, 1.0, 0.3, "thompson", seed=0)
    draws = [kinds.draw(f"http://a.org/{i}/ #de", 0.0) for i in range(4000)]
    assert sum(draws) / len(draws) == pytest.approx(1 / 6, abs=0.01)
    halves = [kinds.draw(f"http://a.org/{i}/ #", 0.5) for i in range(4000)]
    assert sum(halves) / len(halves) == pytest.approx(0.5, abs=0.01)
    again = MeasuredKinds(2.0, 1.0, 0.3, "thompson", seed=0)
    assert again.draw("http://a.org/7/ #de", 0.0) == draws[7]
    other = MeasuredKinds(2.0, 1.0, 0.3, "thompson", seed=1)
    assert other.draw("http://a.org/7/ #de", 0.0) != draws[7]
    # the score of a kind not measured, on a host and language not probed: max(prior, draw)
    s = LanguageStrategy(None, target=["ja"], prior_pages=2, explore="thompson")
    url = "http://a.org/x/de/p.html"
    assert s._measured(url, 0.0, "")[0] == s.kinds.draw("http://a.org/x/de/ #de", 0.0)
    assert s._measured("http://a.org/x/ja/p.html", 1.0, "")[0] == 1.0
    with pytest.raises(ConfigError, match="explore must be one of fixed, thompson"):
        LanguageStrategy(None, target=["ja"], explore="ucb")
