"""P3 FCrawl (Algorithm 2) and its queue policies, checked by hand on a tiny web.

Pages are fabricated fetch results processed by the real Recorder over a
MemoryFrontier, judged by the real cosine model, so each FinalSimilarity S is a
number computed by hand below and each score in the frontier follows from the
policy's rule (section 4.4 of the thesis).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.strategies.base import STRATEGIES
from focuscrawl.strategies.genre import SITE_DEPTH, GenreStrategy, GenreSvmStrategy
from focuscrawl.types import URLState
from tests.genre_web import (
    COSINE,
    WEB,
    A,
    P,
    U,
    V,
    W,
    X,
    Y,
    Z,
    decisions,
    processor,
    queued_scores,
    result,
    visit,
)  # fmt: skip


def _genre(**params: Any) -> GenreStrategy:
    return GenreStrategy(CosineModel(**COSINE), **params)


def test_the_cosine_model_gives_the_hand_computed_similarities() -> None:
    from focuscrawl.parse.html import page_from_fetch

    model = CosineModel(**COSINE)
    scores = {url: model.score(page_from_fetch(result(url, *WEB[url]))) for url in (A, U, V, W)}
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
    proc = processor(tmp_path, store, _genre(policy=policy), [A])
    for url, expected in STEPS[policy]:
        assert visit(proc, store, WEB) == url
        assert queued_scores(store) == pytest.approx(expected), f"after {url}"


def test_the_change_threshold_is_inclusive_and_a_parameter(tmp_path: Path) -> None:
    # Algorithm 2, step 11: FinalSimilarity >= ChangeThreshold. With 0.45, W's S = 0.45
    # counts; with 0.5, U's S = 0.9 still does, V's 0.1 does not.
    store = MemoryFrontier()
    proc = processor(tmp_path, store, _genre(policy="PFS-2", change_threshold=0.45), [A])
    for _ in range(4):
        visit(proc, store, WEB)  # A, P, U, V: as PFS-2 above
    assert queued_scores(store) == pytest.approx({W: 0.9, X: 0.9, Y: 0})
    assert visit(proc, store, WEB) == W
    assert queued_scores(store)[Z] == pytest.approx(0.45)  # 0.45 >= 0.45
    store = MemoryFrontier()
    proc = processor(tmp_path / "b", store, _genre(policy="PFS-2", change_threshold=0.5), [A])
    for _ in range(5):
        visit(proc, store, WEB)
    assert queued_scores(store)[Z] == 0.0  # 0.45 < 0.5: Z inserted with 0


def test_a_seed_never_changes_its_siblings(tmp_path: Path) -> None:
    # Seeds A and B; A links to B (already a seed) and C, so A is B's parent and C its sibling.
    # B's S = 0.9 would set C to 0.9 under FS-1, but step 11 applies to non-seed URLs only.
    b, c = "http://b.org/", "http://a.org/c"
    web = {A: ("welcome", [b, c]), b: ("syllabus database", []), c: ("end", [])}
    store = MemoryFrontier()
    proc = processor(tmp_path, store, _genre(policy="FS-1"), [A, b])
    assert visit(proc, store, web) == A
    assert store.parents(b) == [A]
    assert visit(proc, store, web) == b
    assert queued_scores(store) == {c: 0.0}


def test_the_all_parents_option_reaches_siblings_under_a_second_parent(tmp_path: Path) -> None:
    # A -> P, Q; P -> U; Q -> U, R. U's first parent is P (no other child), its second Q.
    q, r = "http://a.org/q", "http://a.org/r"
    web = {A: ("welcome", [P, q]), P: ("index", [U]), q: ("index", [U, r]), U: ("syllabus database", []),
           r: ("end", [])}  # fmt: skip
    for option, expected in (("first-parent", 0.0), ("all-parents", 0.9)):
        store = MemoryFrontier()
        proc = processor(tmp_path / option, store, _genre(policy="FS-1", siblings_of=option), [A])
        assert [visit(proc, store, web) for _ in range(4)] == [A, P, q, U]
        assert queued_scores(store) == {r: pytest.approx(expected)}  # 0.9 = U's S, via Q


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
    proc = processor(tmp_path, store, _genre(max_site_depth=1, max_links=3), [A])
    assert [visit(proc, store, web) for _ in range(3)] == [A, b, e]
    assert store.state(h) is None  # beyond the first 3 links of B
    assert store.state(c) == URLState.QUEUED  # dropped as B's link, added as E's
    depths = {u: store.value(u, SITE_DEPTH) for u in (A, b, e, c, e2, f)}
    assert depths == {A: 0.0, b: 1.0, e: 0.0, c: 0.0, e2: 1.0, f: 0.0}
    assert visit(proc, store, web) == f
    assert store.value(e2, SITE_DEPTH) == 0.0
    assert store.value(f2, SITE_DEPTH) == 1.0
    lines = decisions(proc, tmp_path)
    page_b = next(x for x in lines if x.get("url") == b)
    assert "1 beyond the first 3 links" in page_b["reason"]
    assert "1 deeper than 1 in their site" in page_b["reason"]


def test_every_link_and_update_says_why(tmp_path: Path) -> None:
    store = MemoryFrontier()
    proc = processor(tmp_path, store, _genre(policy="PFS-2"), [A])
    for _ in range(3):
        visit(proc, store, WEB)
    lines = decisions(proc, tmp_path)
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
        proc = processor(run, store, _genre(policy="FS-2", similarity_threshold=threshold), [A])
        for _ in range(5):
            visit(proc, store, WEB)
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
