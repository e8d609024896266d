"""P3 FCrawl (Algorithm 2) and its queue policies, checked by hand on a tiny web.

Pages are fabricated fetch results processed by the real ResultProcessor over a
MemoryFrontier, judged by the real cosine model, so each FinalSimilarity S is a
number computed by hand below and each score in the frontier follows from the
policy's rule (section 4.4 of the thesis).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.processing import InFlight, ResultProcessor
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import STRATEGIES, Strategy
from focuscrawl.strategies.genre import SITE_DEPTH, GenreStrategy, GenreSvmStrategy
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import FetchResult, URLState
from focuscrawl.urls import Scope

# One genre term, one content term and one URL term, each a set of a single term:
# the cosine of eq. 3.1 of a one-term set is 1 if the page has the term, else 0,
# whatever the term weighting. With GW = CW = 1, GCW = 9, UW = 1 (steps 7 and 9):
#   S = (9 · (g + c) / 2 + 1 · u) / 10
# "syllabus database" -> (9 · 1 + 0) / 10 = 0.9;  "database" -> 9 · 0.5 / 10 = 0.45
# "course" only in the URL -> 1 / 10 = 0.1;      neither -> 0.
COSINE: dict[str, Any] = {
    "genre_terms": ["syllabus"], "content_terms": ["database"], "url_terms": ["course"],
    "gw": 1.0, "cw": 1.0, "gcw": 9.0, "uw": 1.0,
}  # fmt: skip

A, P, U, V, W = (
    "http://a.org/",
    "http://a.org/p",
    "http://a.org/u",
    "http://a.org/course/v",
    "http://a.org/w",
)
X, Y, Z = "http://a.org/x", "http://a.org/y", "http://a.org/z"

# A (seed) -> P -> U, V, W (siblings); U -> X, V -> Y, W -> Z
WEB: dict[str, tuple[str, list[str]]] = {
    A: ("welcome", [P]),  # S = 0
    P: ("index", [U, V, W]),  # S = 0
    U: ("syllabus database", [X]),  # S = 0.9
    V: ("notes", [Y]),  # S = 0.1 (the URL term "course")
    W: ("database", [Z]),  # S = 0.45
    X: ("end", []),  # S = 0
    Y: ("end", []),
    Z: ("end", []),
}


def _html(text: str, hrefs: list[str]) -> bytes:
    links = "".join(f'<a href="{h}">go</a> ' for h in hrefs)
    return f"<html><body><p>{text}</p>{links}</body></html>".encode()


def _result(url: str, text: str, hrefs: list[str]) -> FetchResult:
    return FetchResult(
        url=url, final_url=url, status=200, body=_html(text, hrefs),
        content_type="text/html", charset="utf-8", headers={"Content-Type": "text/html"},
    )  # fmt: skip


def _processor(
    tmp_path: Path, store: MemoryFrontier, strategy: Strategy, seeds: list[str]
) -> ResultProcessor:
    settings = Settings()
    tmp_path.mkdir(parents=True, exist_ok=True)
    store.ensure_columns(("relevance", *strategy.columns))
    strategy.attach(FrontierView(store), random.Random(0))
    proc = ResultProcessor(
        settings, frontier=store, strategy=strategy, model=strategy.model, filters=[],
        scope=Scope.for_seeds(settings.scope, seeds), stats=CrawlStats(),
        warc=WarcOutput(tmp_path / "c.warc.gz"), pages=JsonlOutput(tmp_path / "pages.jsonl"),
        decisions=JsonlOutput(tmp_path / "decisions.jsonl"),
    )  # fmt: skip
    proc.add_seeds(seeds)
    return proc


def _visit(
    proc: ResultProcessor, store: MemoryFrontier, web: dict[str, tuple[str, list[str]]]
) -> str:
    """Pop the best URL (RemoveURL, step 3), fetch it from ``web`` and process it."""
    (queued,) = store.pop(1)
    text, hrefs = web[queued.url]
    proc.record(InFlight(queued), _result(queued.url, text, hrefs))
    return queued.url


def _decisions(proc: ResultProcessor, run: Path) -> list[dict[str, Any]]:
    assert proc.decisions is not None
    proc.decisions.close()
    return [json.loads(x) for x in (run / "decisions.jsonl").read_text().splitlines()]


def _queued(store: MemoryFrontier) -> dict[str, float]:
    return {row.url: round(row.score, 9) for row in store.iter_urls(URLState.QUEUED)}


def _genre(**params: Any) -> GenreStrategy:
    return GenreStrategy(CosineModel(**COSINE), **params)


def test_the_cosine_model_gives_the_hand_computed_similarities() -> None:
    from focuscrawl.parse.html import page_from_fetch

    model = CosineModel(**COSINE)
    scores = {url: model.score(page_from_fetch(_result(url, *WEB[url]))) for url in (A, U, V, W)}
    assert scores == pytest.approx({A: 0.0, U: 0.9, V: 0.1, W: 0.45})


# Each policy, five pages: (URL popped, queued scores after processing it).
# Ties pop in discovery order (P, then U, V, W, then X, Y, Z as found).
STEPS: dict[str, list[tuple[str, dict[str, float]]]] = {
    # FS-2 (Algorithm 2): siblings := S if S >= 0.20; children inserted with 0
    "FS-2": [
        (A, {P: 0}),  # seed: no ChangeScores; P inserted with 0 (step 12)
        (P, {U: 0, V: 0, W: 0}),  # S = 0 < 0.20: nothing changes
        (U, {V: 0.9, W: 0.9, X: 0}),  # S = 0.9 >= 0.20: siblings V, W := 0.9
        (V, {W: 0.9, X: 0, Y: 0}),  # S = 0.1 < 0.20: W keeps 0.9
        (W, {X: 0, Y: 0, Z: 0}),  # S = 0.45, but its siblings U, V are visited
    ],
    # FS-1: siblings := S whatever S; ChangeScores *sets*, so a sibling can go down
    "FS-1": [
        (A, {P: 0}),
        (P, {U: 0, V: 0, W: 0}),  # S = 0: U's siblings... P's siblings: none (A has one child)
        (U, {V: 0.9, W: 0.9, X: 0}),
        (V, {W: 0.1, X: 0, Y: 0}),  # S = 0.1: W := 0.1 (lowered from 0.9)
        (W, {X: 0, Y: 0, Z: 0}),  # W (0.1) is the best; its siblings are visited
    ],
    # PFS-1: children and siblings := S whatever S
    "PFS-1": [
        (A, {P: 0}),  # children := S = 0
        (P, {U: 0, V: 0, W: 0}),
        (U, {V: 0.9, W: 0.9, X: 0.9}),  # X := 0.9 (child), V, W := 0.9 (siblings)
        (V, {W: 0.1, X: 0.9, Y: 0.1}),  # V first of the 0.9 ties; S = 0.1: Y := 0.1, W := 0.1
        (X, {W: 0.1, Y: 0.1}),  # X: S = 0, no links, no siblings (U's only child)
    ],
    # PFS-2: children and siblings := S if S >= 0.20, else children inserted with 0
    "PFS-2": [
        (A, {P: 0}),  # seed with S = 0 < 0.20: P inserted with 0
        (P, {U: 0, V: 0, W: 0}),
        (U, {V: 0.9, W: 0.9, X: 0.9}),
        (V, {W: 0.9, X: 0.9, Y: 0}),  # S = 0.1 < 0.20: Y with 0, W unchanged
        (W, {X: 0.9, Y: 0, Z: 0.45}),  # W before X (discovered first); Z := S = 0.45
    ],
    # PS (traditional): children := S, siblings never change
    "PS": [
        (A, {P: 0}),
        (P, {U: 0, V: 0, W: 0}),
        (U, {V: 0, W: 0, X: 0.9}),  # only U's child X gets 0.9
        (X, {V: 0, W: 0}),  # X (0.9) next; no links
        (V, {W: 0, Y: 0.1}),  # Y := 0.1
    ],
}


@pytest.mark.parametrize("policy", list(STEPS))
def test_each_queue_policy_changes_scores_as_the_thesis_defines(
    tmp_path: Path, policy: str
) -> None:
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, _genre(policy=policy), [A])
    for url, expected in STEPS[policy]:
        assert _visit(proc, store, WEB) == url
        assert _queued(store) == pytest.approx(expected), f"after {url}"


def test_the_change_threshold_is_inclusive_and_a_parameter(tmp_path: Path) -> None:
    # Algorithm 2, step 11: FinalSimilarity >= ChangeThreshold. With 0.45, W's S = 0.45
    # counts; with 0.5, U's S = 0.9 still does, V's 0.1 does not.
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, _genre(policy="PFS-2", change_threshold=0.45), [A])
    for _ in range(4):
        _visit(proc, store, WEB)  # A, P, U, V: as PFS-2 above
    assert _queued(store) == pytest.approx({W: 0.9, X: 0.9, Y: 0})
    assert _visit(proc, store, WEB) == W
    assert _queued(store)[Z] == pytest.approx(0.45)  # 0.45 >= 0.45
    store = MemoryFrontier()
    proc = _processor(tmp_path / "b", store, _genre(policy="PFS-2", change_threshold=0.5), [A])
    for _ in range(5):
        _visit(proc, store, WEB)
    assert _queued(store)[Z] == 0.0  # 0.45 < 0.5: Z inserted with 0


def test_a_seed_never_changes_its_siblings(tmp_path: Path) -> None:
    # Seeds A and B; A links to B (already a seed) and C, so A is B's parent and C its sibling.
    # B's S = 0.9 would set C to 0.9 under FS-1, but step 11 applies to non-seed URLs only.
    b, c = "http://b.org/", "http://a.org/c"
    web = {A: ("welcome", [b, c]), b: ("syllabus database", []), c: ("end", [])}
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, _genre(policy="FS-1"), [A, b])
    assert _visit(proc, store, web) == A
    assert store.parents(b) == [A]
    assert _visit(proc, store, web) == b
    assert _queued(store) == {c: 0.0}


def test_the_all_parents_option_reaches_siblings_under_a_second_parent(tmp_path: Path) -> None:
    # A -> P, Q; P -> U; Q -> U, R. U's first parent is P (no other child), its second Q.
    q, r = "http://a.org/q", "http://a.org/r"
    web = {A: ("welcome", [P, q]), P: ("index", [U]), q: ("index", [U, r]), U: ("syllabus database", []),
           r: ("end", [])}  # fmt: skip
    for option, expected in (("first-parent", 0.0), ("all-parents", 0.9)):
        store = MemoryFrontier()
        proc = _processor(tmp_path / option, store, _genre(policy="FS-1", siblings_of=option), [A])
        assert [_visit(proc, store, web) for _ in range(4)] == [A, P, q, U]
        assert _queued(store) == {r: pytest.approx(expected)}  # 0.9 = U's S, via Q


def test_site_depth_and_width_limits(tmp_path: Path) -> None:
    # max_site_depth = 1, max_links = 3.
    # A (a.org, entry: depth 0) -> B (a.org: 1), E (e.org: 0)
    # B -> C, F, A, H: only the first three are followed (H dropped: width);
    #      C would be 2 hops into a.org (dropped: depth); F (f.org) 0; A known
    # E -> C, E2: C is new again, now entered from e.org (0); E2 = 1 hop into e.org
    # F -> E2, F2: E2 reached from f.org is 0 hops deep (shorter path wins); F2: 1
    b, c, e, e2, f, f2, h = ("http://a.org/b", "http://a.org/c", "http://e.org/", "http://e.org/2",
                             "http://f.org/", "http://f.org/2", "http://h.org/")  # fmt: skip
    web = {A: ("a", [b, e]), b: ("b", [c, f, A, h]), e: ("e", [c, e2]), f: ("f", [e2, f2])}
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, _genre(max_site_depth=1, max_links=3), [A])
    assert [_visit(proc, store, web) for _ in range(3)] == [A, b, e]
    assert store.state(h) is None  # beyond the first 3 links of B
    assert store.state(c) == URLState.QUEUED  # dropped as B's link, added as E's
    depths = {u: store.value(u, SITE_DEPTH) for u in (A, b, e, c, e2, f)}
    assert depths == {A: 0.0, b: 1.0, e: 0.0, c: 0.0, e2: 1.0, f: 0.0}
    assert _visit(proc, store, web) == f
    assert store.value(e2, SITE_DEPTH) == 0.0
    assert store.value(f2, SITE_DEPTH) == 1.0
    lines = _decisions(proc, tmp_path)
    page_b = next(x for x in lines if x.get("url") == b)
    assert "1 beyond the first 3 links" in page_b["reason"]
    assert "1 deeper than 1 in their site" in page_b["reason"]


def test_every_link_and_update_says_why(tmp_path: Path) -> None:
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, _genre(policy="PFS-2"), [A])
    for _ in range(3):
        _visit(proc, store, WEB)
    lines = _decisions(proc, tmp_path)
    page_u = next(x for x in lines if x.get("url") == U)
    assert page_u["links"][0][:3] == [
        X,
        pytest.approx(0.9),
        "PFS-2 child: S=0.9 (≥ change threshold 0.2)",
    ]
    updates = page_u["updates"]  # [url, value, reason, merge(, column)]
    assert [X, 3, "site depth 2 + 1", "set", SITE_DEPTH] in updates  # A 0 -> P 1 -> U 2 -> X 3
    assert {u[0]: u[2] for u in updates if len(u) == 4} == {
        V: f"ChangeScores PFS-2: sibling of {U} via {P}, S=0.9 (≥ change threshold 0.2)",
        W: f"ChangeScores PFS-2: sibling of {U} via {P}, S=0.9 (≥ change threshold 0.2)",
    }
    assert all(link[2] for x in lines for link in x.get("links", []))


def test_similarity_threshold_sets_the_judgement(tmp_path: Path) -> None:
    # step 10: W (S = 0.45) is relevant at 0.4, not at the model's default 0.47
    for threshold, expected in ((None, False), (0.4, True)):
        store = MemoryFrontier()
        run = tmp_path / str(threshold)
        proc = _processor(run, store, _genre(policy="FS-2", similarity_threshold=threshold), [A])
        for _ in range(5):
            _visit(proc, store, WEB)
        proc.pages.close()
        records = {
            r["url"]: r for r in map(json.loads, (run / "pages.jsonl").read_text().splitlines())
        }
        assert records[W]["relevant"] is expected
        assert records[U]["relevant"] is True  # 0.9


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"policy": "XS"}, "policy = 'XS' must be one of PS, FS-1, FS-2, PFS-1, PFS-2"),
        ({"change_threshold": 1.5}, "change_threshold = 1.5 must be in"),
        ({"max_site_depth": -2}, "max_site_depth = -2"),
        ({"max_links": -1}, "max_links = -1"),
        ({"site": "page"}, "site = 'page'"),
        ({"treshold": 0.3}, "unknown parameter 'treshold'"),
    ],
)
def test_bad_parameters_are_one_line_errors(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="strategy 'genre'") as info:
        _genre(**params)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_similarity_threshold_changes_while_the_crawl_runs() -> None:
    strategy = _genre()
    assert strategy.model is not None
    assert strategy.model.threshold == 0.47  # the cosine model's default
    assert strategy.set_params({"similarity_threshold": 0.3}).is_empty()
    assert strategy.model.threshold == 0.3
    with pytest.raises(ConfigError, match=r"similarity_threshold = 2\.0 must be in"):
        strategy.set_params({"similarity_threshold": 2})


def test_policy_names_are_case_insensitive_and_registered() -> None:
    assert _genre(policy="pfs-1").params["policy"] == "PFS-1"
    assert STRATEGIES.get("genre") is GenreStrategy
    assert STRATEGIES.get("genre-svm") is GenreSvmStrategy


# -- genre relevance inside another strategy (issue 7, item 9) ------------------------------


def test_genre_relevance_gates_opic(tmp_path: Path) -> None:
    """OPIC's cash with the cosine model's judgement as a hard focus (the relevance gate).

    Seed S0 (S = 0.9, relevant at the model's 0.47) -> P (0.45, not relevant), Q (0.9);
    P -> R; Q -> R, T. The gate drops P's link, so R is found only through Q.
    OPIC with the virtual page (g = what every known page got from it):
      S0: 1 over 2 links + virtual: P, Q 1/3; g = (1/3) / 3 known = 1/9
          cash S0 1/9, P 4/9, Q 4/9
      P:  4/9 all to the virtual page (no link kept); g += (4/9) / 3 = 4/27 -> 7/27
          cash S0 7/27, P 4/27, Q 16/27
      Q:  16/27 over R, T + virtual: 16/81 each; g += (16/81) / 5 known = 16/405
          cash S0 121/405, P 76/405, Q 16/405, R 96/405, T 96/405 (sum 405/405)
    """
    from focuscrawl.strategies.filters import build_filters
    from focuscrawl.strategies.opic import OpicStrategy

    s0, q, r, t = "http://a.org/s", "http://a.org/q", "http://a.org/r", "http://a.org/t"
    web = {
        s0: ("syllabus database", [P, q]),
        P: ("database", [r]),
        q: ("syllabus database", [r, t]),
    }
    store = MemoryFrontier()
    opic = OpicStrategy(CosineModel(**COSINE))
    proc = _processor(tmp_path, store, opic, [s0])
    proc.filters = build_filters([{"name": "relevance-gate"}])
    assert [_visit(proc, store, web) for _ in range(3)] == [s0, P, q]
    cash = {u: opic.cash(u) for u in (s0, P, q, r, t)}
    assert cash == pytest.approx(
        {s0: 121 / 405, P: 76 / 405, q: 16 / 405, r: 96 / 405, t: 96 / 405}
    )
    assert sum(cash.values()) == pytest.approx(1.0)
    assert proc.stats.counters["link_rejected_relevance-gate"] == 1


# -- the SVM-RBF baseline (section 4.1.2) ---------------------------------------------------


@pytest.fixture(scope="module")
def svm() -> RelevanceModel:
    from focuscrawl.relevance.classifier import ClassifierModel

    pos = [f"syllabus database lecture homework {i}" for i in range(12)]
    neg = [f"weather garden travel photos {i}" for i in range(12)]
    return ClassifierModel(algorithm="svm-rbf").train(pos, neg)


def test_genre_svm_needs_the_svm_rbf_classifier() -> None:
    with pytest.raises(
        ConfigError, match="needs the classifier model with algorithm svm-rbf, not cosine"
    ):
        GenreSvmStrategy(CosineModel(**COSINE))
    with pytest.raises(ConfigError, match="queue = 'fifo' must be one of traditional, sibling"):
        GenreSvmStrategy(None, queue="fifo")


def test_genre_svm_traditional_queue_gives_children_the_page_score(
    tmp_path: Path, svm: RelevanceModel
) -> None:
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, GenreSvmStrategy(svm, queue="traditional"), [A])
    for _ in range(3):
        _visit(proc, store, WEB)  # A, P, then U (the first of U, V, W, all with P's score)
    s_u = store.value(U, "relevance")  # the classifier's score of U (Figure 2.3)
    s_p = store.value(P, "relevance")
    assert s_u is not None
    assert s_p is not None
    assert s_u > 0.5 > s_p
    assert _queued(store) == pytest.approx({V: s_p, W: s_p, X: s_u})  # siblings keep P's score


def test_genre_svm_sibling_queue_changes_siblings_of_a_relevant_page(
    tmp_path: Path, svm: RelevanceModel
) -> None:
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, GenreSvmStrategy(svm, queue="sibling"), [A])
    for _ in range(3):
        _visit(proc, store, WEB)  # A, P (0), U: judged relevant by the classifier
    s_u = store.value(U, "relevance")
    assert s_u is not None
    assert s_u >= svm.threshold
    assert _queued(store) == pytest.approx({V: s_u, W: s_u, X: 0.0})


# -- end to end on the WebKB replay web -----------------------------------------------------

WEBKB_SEEDS = [f"http://www.cs.{u}.edu/" for u in ("cornell", "utexas", "washington", "wisc")]
# Table 4.2's course-syllabus genre terms (part) and a few computer-science subjects
COURSE_TOPIC: dict[str, Any] = {
    "name": "cosine",
    "genre_terms": ["syllabus", "course", "instructor", "prerequisites", "grading", "exams",
                    "textbooks", "homework", "lecture"],
    "content_terms": ["programming", "algorithms", "operating systems", "compilers", "databases"],
    "threshold": 0.3,
}  # fmt: skip


def test_genre_crawls_the_webkb_replay_web(webkb_replay: Any, tmp_path: Path) -> None:
    from focuscrawl.api import crawl
    from focuscrawl.engine import DB_NAME
    from focuscrawl.frontier.indexed import IndexedFrontier

    run = tmp_path / "run"
    crawl(WEBKB_SEEDS, run, strategy="genre", strategy_params={"policy": "FS-2", "max_site_depth": 2},
          model=COURSE_TOPIC, max_pages=200, delay=0.0, proxy=webkb_replay.proxy_url)  # fmt: skip
    pages = [json.loads(x) for x in (run / "pages.jsonl").read_text().splitlines()]
    assert len(pages) == 200
    page = {p["url"]: p for p in pages}
    changed = 0
    store = IndexedFrontier(run / DB_NAME)
    try:
        store.ensure_columns((SITE_DEPTH,))
        for line in (run / "decisions.jsonl").read_text().splitlines():
            d = json.loads(line)
            for url, value, reason, merge, *column in d.get("updates", []):
                if column:
                    assert column == [SITE_DEPTH]
                    assert value <= 2  # no link is kept deeper than max_site_depth in its site
                    continue
                # Algorithm 2, step 11: a non-seed page with S >= 0.20 sets its siblings to S
                changed += 1
                current = page[d["url"]]
                assert reason.startswith(f"ChangeScores FS-2: sibling of {d['url']} via ")
                assert merge == "set"
                assert value == pytest.approx(current["relevance"], abs=1e-6)
                assert value >= 0.2
                assert current["depth"] > 0  # not a seed
                assert current["parent"] in store.parents(url)  # a sibling: same parent
        assert max(store.value(p["url"], SITE_DEPTH) or 0.0 for p in pages) <= 2
    finally:
        store.close()
    assert changed > 0
    summary = json.loads((run / "run.json").read_text())
    assert summary["strategy"] == "genre"
    assert summary["strategy_params"]["policy"] == "FS-2"


def test_genre_in_simulation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``focuscrawl simulate`` over the WebKB archive with PFS-2: every out-link of a page with
    S >= 0.20 enters with S (or keeps its score if visited), every other one with 0."""
    from focuscrawl.cli import main as cli_main
    from tests.conftest import shared_file

    archive = shared_file("webkb.warc.gz")
    topic = tmp_path / "topic.toml"
    topic.write_text(
        "[model]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in COURSE_TOPIC.items()), "utf-8"
    )
    run = tmp_path / "run"
    code = cli_main([
        "simulate", "--archive", str(archive), "--seeds", *WEBKB_SEEDS, "--out", str(run),
        "--config", str(topic), "--strategy", "genre", "--strategy-param", "policy=PFS-2",
        "--max-pages", "150", "--quiet",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    pages = {p["url"]: p for p in map(json.loads, (run / "pages.jsonl").read_text().splitlines())}
    assert len(pages) == 150
    children = 0
    for line in (run / "decisions.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d["event"] != "page":
            continue
        s = d.get("relevance", 0.0)
        for url, score, reason, *_ in d.get("links", []):
            if reason == "child already visited":
                continue
            if s >= 0.2:
                children += 1
                assert score == pytest.approx(s, abs=1e-6), url
                assert reason.startswith("PFS-2 child: ")
            else:
                assert (score, reason) == (0.0, "step 12 InsertURL(link, 0)")
    assert children > 0
