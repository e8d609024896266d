"""The learning strategy (issue 28): the examples a hand-built web makes, with the
rewards and priors computed here by hand; link-context's score before the model has
learnt, then the prior plus the weighted correction; updates at the stated points; a
rescore that reaches the frontier; the same crawl twice in the ordered schedule; a
model that resumes exactly, from a state much smaller than its dense weights."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from focuscrawl.api import crawl, open_crawl
from focuscrawl.crawler.recorder import Recorder
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.relevance.keyword import KeywordModel
from focuscrawl.relevance.online_link import N_FEATURES, OnlineLinkModel, link_tokens
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import STRATEGIES, client_error
from focuscrawl.strategies.learning import LearningStrategy
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Link, Merge, Page, QueuedURL, URLState
from focuscrawl.urls import Scope
from tests.stopping import run_stopped_after

from .conftest import shared_file

S, A, B, C, D = (f"http://w.org/{name}" for name in ("s", "a", "b", "c", "d"))
# the web: S links to A ("cat") and B ("car"); A to C ("kitten"); C to D ("lion")
LINKS = {S: [Link(A, "cat", "a cat"), Link(B, "car", "a car")], A: [Link(C, "kitten", "kitten")],
         C: [Link(D, "lion", "lion")], B: [], D: []}  # fmt: skip
PARENT = {S: None, A: S, B: S, C: A, D: C}
DEPTH = {S: 0, A: 1, B: 1, C: 2, D: 3}
# the page model scores a context 1 if it holds the word "cat", else 0 ("kitten" is not
# "cat"); so with beta 0.25 the priors (eq. 9) are S->A 0.25 * r(S) + 0.75, S->B
# 0.25 * r(S), A->C 0.25 * r(A), C->D 0.25 * r(C)
CAT = KeywordModel(["cat"])
CAT_PAGE = "http://schools-wikipedia.org/wp/c/Cat.htm"


def _strategy(**params: object) -> tuple[LearningStrategy, MemoryFrontier]:
    strategy = LearningStrategy(CAT, **params)
    store = MemoryFrontier()
    strategy.attach(FrontierView(store), random.Random(0))
    return strategy, store


def _visit(strategy: LearningStrategy, url: str, relevance: float) -> object:
    queued = QueuedURL(url, 1.0, DEPTH[url], "w.org", PARENT[url])
    return strategy.on_page(Page(url, links=list(LINKS[url])), relevance, queued)


def _columns(url: str, parent: str, relevance_of_parent: float, inlinks: int) -> list[int]:
    """The hashed link from ``parent`` to ``url``, as the parent's page gave it."""
    link = next(link for link in LINKS[parent] if link.url == url)
    tokens = link_tokens(
        link.url, link.anchor, link.context, relevance_of_parent, DEPTH[url], inlinks
    )
    return sorted(OnlineLinkModel.columns(tokens).tolist())


def test_the_strategy_is_registered() -> None:
    assert STRATEGIES.get("learning") is LearningStrategy


def test_the_examples_a_small_web_makes() -> None:
    """Rewards by hand (gamma 0.5, hops 2, relevant from 0.5), each with its link's prior:
    A (0.9): its link S->A, 0.9 (prior 0.025 + 0.75 = 0.775); S is a seed: nothing more.
    B (0.2): its link S->B, 0.2 (prior 0.025); not relevant: no ancestor rewarded.
    C (0.8): A->C 0.8 (prior 0.225); hop 1: S->A 0.5 * 0.8 = 0.4.
    D (1.0): C->D 1.0 (prior 0.2); hop 1: A->C 0.5; hop 2: S->A 0.25.
    In-link counts: S (0.1) is not relevant, so S->A and S->B have none; A (0.9) and
    C (0.8) are, so A->C and C->D have one each."""
    strategy, _ = _strategy(update_every=1000, hops=2, gamma=0.5, hop_reward="all")
    relevance = {S: 0.1, A: 0.9, B: 0.2, C: 0.8, D: 1.0}
    for url in (S, A, B, C, D):
        _visit(strategy, url, relevance[url])
    got = [
        (sorted(e.columns.tolist()), round(e.reward, 9), round(e.prior, 9))
        for e in strategy.pending
    ]
    sa, sb, ac, cd = (
        _columns(A, S, 0.1, 0),
        _columns(B, S, 0.1, 0),
        _columns(C, A, 0.9, 1),
        _columns(D, C, 0.8, 1),
    )
    assert got == [
        (sa, 0.9, 0.775), (sb, 0.2, 0.025), (ac, 0.8, 0.225), (sa, 0.4, 0.775),
        (cd, 1.0, 0.2), (ac, 0.5, 0.225), (sa, 0.25, 0.775),
    ]  # fmt: skip


def test_an_ancestor_is_rewarded_only_above_its_own_page() -> None:
    """hop_reward "max" (the default): with A judged 0.3, C (0.8) makes S->A an example
    of 0.5 * 0.8 = 0.4 (more than A's 0.3); D (1.0) rewards A->C 0.5 (not more than C's
    0.8) and S->A 0.25 (not more than 0.3): no examples."""
    strategy, _ = _strategy(update_every=1000, hops=2, gamma=0.5)
    relevance = {S: 0.1, A: 0.3, C: 0.8, D: 1.0}
    for url in (S, A, C, D):
        _visit(strategy, url, relevance[url])
    sa, ac, cd = _columns(A, S, 0.1, 0), _columns(C, A, 0.3, 0), _columns(D, C, 0.8, 1)
    got = [(sorted(e.columns.tolist()), round(e.reward, 9)) for e in strategy.pending]
    assert got == [(sa, 0.3), (ac, 0.8), (sa, 0.4), (cd, 1.0)]


def test_link_context_scores_until_the_model_has_learnt() -> None:
    """The warm start: before the first update a link's score is eq. 9 itself
    (0.25 * 0.1 + 0.75 * 1 for "a cat", 0.25 * 0.1 for "a car")."""
    strategy, _ = _strategy(update_every=1000)
    decision = _visit(strategy, S, 0.1)
    scores = [round(link.score, 9) for link in decision.links]  # type: ignore[attr-defined]
    assert scores == [0.775, 0.025]
    assert not strategy.active


@pytest.mark.parametrize(("min_examples", "weight"), [(8, 0.5), (2, 1.0), (0, 1.0)],
                         ids=["half-learnt", "learnt", "no-ramp"])  # fmt: skip
def test_the_correction_is_weighted_by_the_examples_learnt(
    min_examples: int, weight: float
) -> None:
    """After one update from 4 examples (S->A; S->B, A->C, S->A by hop), w is
    4 / min_examples (at most 1) and a link scores prior + w * the model's prediction."""
    strategy, _ = _strategy(update_every=4, min_examples=min_examples, hop_reward="all")
    for url, r in ((S, 0.1), (A, 0.9), (B, 0.2), (C, 0.8)):
        _visit(strategy, url, r)
    assert strategy.link_model.examples == 4
    assert strategy.learner.weight == weight
    row = OnlineLinkModel.columns(link_tokens(D, "lion", "lion", 0.8, 3, 1))
    correction = strategy.link_model.predict([row])[0]
    assert correction != 0.0
    decision = _visit(strategy, C, 0.8)  # C again: its link to D, prior 0.25 * 0.8
    (link,) = decision.links  # type: ignore[attr-defined]
    assert link.score == pytest.approx(max(0.0, 0.2 + weight * correction))


def test_hops_bound_the_rewards() -> None:
    strategy, _ = _strategy(update_every=1000, hops=1, gamma=0.5, hop_reward="all")
    for url, r in ((S, 0.1), (A, 0.9), (C, 0.8), (D, 1.0)):
        _visit(strategy, url, r)
    rewards = [round(e.reward, 9) for e in strategy.pending]
    assert rewards == [0.9, 0.8, 0.4, 1.0, 0.5]  # D's reward stops one hop up


def test_the_model_is_updated_every_n_pages() -> None:
    strategy, _ = _strategy(update_every=2, hop_reward="all")
    versions = []
    for url, r in ((S, 0.1), (A, 0.9), (B, 0.2), (C, 0.8)):
        _visit(strategy, url, r)
        versions.append(strategy.link_model.version)
    assert versions == [0, 1, 1, 2]
    assert strategy.link_model.examples == 4  # S->A; then S->B, A->C, S->A (hop)
    assert strategy.pending == []


def test_a_rescore_reaches_the_frontier(tmp_path: Path) -> None:
    """Once the model scores links, an update rescores the queued URLs, through the
    recorder, into the frontier: their stored scores are the model's."""
    strategy, store = _strategy(update_every=1, min_examples=1)
    settings = Settings()
    proc = Recorder(
        settings, queue=store, columns=store, graph=store, strategy=strategy, model=None, filters=[],
        scope=Scope.for_seeds(settings.scope, [S]), stats=CrawlStats(),
        warc=WarcOutput(tmp_path / "c.warc.gz"), pages=JsonlOutput(tmp_path / "p.jsonl"),
        decisions=None,
    )  # fmt: skip
    proc.add_seeds([S])
    for url, r in ((S, 0.1), (A, 0.9)):
        queued = QueuedURL(url, 1.0, DEPTH[url], "w.org", PARENT[url])
        if store.state(url) is not None:
            store.mark(url, URLState.FETCHED)
        proc.apply(_visit(strategy, url, r), queued)  # type: ignore[arg-type]
    assert strategy.active
    queued_b = store.get(B)
    assert queued_b is not None
    assert store.state(B) == URLState.QUEUED
    # B's link: prior 0.25 * 0.1 (no "cat" in "a car"), corrected with the full weight
    # (min_examples 1) by the model's prediction for its tokens
    correction = strategy.link_model.predict(
        [OnlineLinkModel.columns(link_tokens(B, "car", "a car", 0.1, 1, 0))]
    )[0]
    assert queued_b.score == pytest.approx(max(0.0, 0.025 + correction))


def test_the_resumed_model_scores_as_before() -> None:
    """Weights rounded to float32 at every update are saved exactly: the model loaded
    from the (JSON) state predicts bit for bit what the one saved does, with the
    examples not learnt yet."""
    strategy, _ = _strategy(update_every=3, hop_reward="all")
    for url, r in ((S, 0.1), (A, 0.9), (B, 0.2), (C, 0.8)):
        _visit(strategy, url, r)
    state = json.loads(json.dumps(strategy.state_dict()))
    again, _ = _strategy(update_every=3, hop_reward="all")
    again.load_state(state)
    rows = [OnlineLinkModel.columns(link_tokens(u, "cat", "a cat", 0.5, 1)) for u in (A, B, D)]
    assert again.link_model.version == strategy.link_model.version == 1
    assert again.link_model.predict(rows) == strategy.link_model.predict(rows)
    assert [(e.columns.tolist(), e.reward, e.prior) for e in again.pending] == [
        (e.columns.tolist(), e.reward, e.prior) for e in strategy.pending
    ]
    assert len(again.pending) == 2  # C's: A->C 0.8, S->A 0.4 by hop, after the update
    # the same next update of both (the SGD's step count and intercept came back too)
    for s in (strategy, again):
        s.link_model.update(rows, [1.0, 0.0, 0.5])
    assert again.link_model.predict(rows) == strategy.link_model.predict(rows)


def test_the_state_is_much_smaller_than_the_dense_weights() -> None:
    """Only the columns examples touched are non-zero: zlib keeps the state a small
    fraction of the 2^15 float32 weights (131 KB raw, 175 KB in base64)."""
    strategy, _ = _strategy(update_every=1)
    for url, r in ((S, 0.1), (A, 0.9), (B, 0.2), (C, 0.8), (D, 1.0)):
        _visit(strategy, url, r)
    size = len(json.dumps(strategy.state_dict()))
    assert strategy.link_model.ready
    assert size < N_FEATURES * 4 // 20


def test_the_ordered_schedule_gives_the_same_crawl_twice(tmp_path: Path) -> None:
    archive = shared_file("wikispeedia.warc.gz")
    model = {"name": "keyword", "keywords": ["mammal", "mammals", "species", "carnivore"]}
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        crawl(["http://schools-wikipedia.org/wp/c/Cat.htm"], out, strategy="learning", model=model,
              max_pages=150, archives=[archive], strategy_params={"update_every": 10, "min_examples": 20})  # fmt: skip
        runs.append(
            [json.loads(line)["url"] for line in (out / "pages.jsonl").read_text().splitlines()]
        )
        summary = json.loads((out / "run.json").read_text())["summary"]
        assert summary["counters"]["link_model_version"] >= 10
    assert runs[0] == runs[1]
    reasons = (tmp_path / "a" / "decisions.jsonl").read_text()
    assert "online link model v" in reasons  # provenance: the version and the top tokens


def test_parameters_are_checked() -> None:
    with pytest.raises(ConfigError):
        LearningStrategy(CAT, gamma=2.0)
    assert LearningStrategy.merge is Merge.MAX


@pytest.mark.parametrize("strategy", ["link-context", "otie"])
def test_the_online_score_serves_otie_and_link_context(tmp_path: Path, strategy: str) -> None:
    """``link_model = "online"``: the learnt score replaces the context score of eq. 9
    (and so eq. 7's predicted similarity in OTIE) once the model has learnt enough."""
    archive = shared_file("wikispeedia.warc.gz")
    model = {"name": "keyword", "keywords": ["mammal", "mammals", "species", "carnivore"]}
    out = tmp_path / strategy
    crawl(["http://schools-wikipedia.org/wp/c/Cat.htm"], out, strategy=strategy, model=model,
          max_pages=200, archives=[archive], strategy_params={"link_model": "online"})  # fmt: skip
    counters = json.loads((out / "run.json").read_text())["summary"]["counters"]
    assert counters["link_model_version"] >= 5
    if strategy == "link-context":  # its reasons name the prior and the correction
        assert "online link model v" in (out / "decisions.jsonl").read_text()
    with pytest.raises(ConfigError):
        STRATEGIES.get(strategy)(None, link_model="learnt")


def test_a_stopped_crawl_resumes_with_its_link_model(tmp_path: Path) -> None:
    """Stopped (as by Ctrl-C) after 60 pages and resumed: the first links scored after
    the resume are corrected by the model version the stop left (from the resume
    state), not scored as by a model that has learnt nothing."""
    archive = shared_file("wikispeedia.warc.gz")
    model = {"name": "keyword", "keywords": ["mammal", "mammals", "species", "carnivore"]}
    out = tmp_path / "run"
    overrides = {"crawl": {"strategy": "learning", "max_pages": 120, "schedule": "ordered",
                           "strategy_params": {"update_every": 10, "min_examples": 20}}}  # fmt: skip
    crawler = open_crawl(out, [CAT_PAGE], overrides=overrides, model=model, archives=[archive])
    run_stopped_after(crawler, 60)
    stopped = json.loads((out / "run.json").read_text())
    assert stopped["finished"] is False
    version = stopped["summary"]["counters"]["link_model_version"]
    assert version >= 3
    lines = (out / "decisions.jsonl").read_text().splitlines()
    crawl([], out, resume=True, archives=[archive])
    after = [
        json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()[len(lines) :]
    ]
    first_page = next(d for d in after if d.get("event") == "page")
    reasons = {reason for _, _, reason in first_page["links"]}
    assert reasons
    assert all(f"online link model v{version}:" in r for r in reasons)
    summary = json.loads((out / "run.json").read_text())["summary"]
    assert summary["counters"]["link_model_version"] > version


# The 4 examples of S (0.1), A (0.9), B (0.2), C (0.8) with hop_reward "all", as
# (reward, eq. 9 prior): S->A (0.9, 0.775), S->B (0.2, 0.025), A->C (0.8, 0.225) and
# S->A by hop (0.4, 0.775); their targets (reward - prior) 0.125, 0.175, 0.575, -0.375,
# whose squared sum 0.015625 + 0.030625 + 0.330625 + 0.140625 = 0.5175 is what a
# correction of 0 (the rate 0, or a model not learnt yet) errs by.
def test_the_prequential_loss_of_the_first_update() -> None:
    """Before the first update no candidate has learnt: every loss is 0.5175, the tie
    goes to the first listed, and only the candidates with a rate learnt."""
    strategy, _ = _strategy(update_every=4, hop_reward="all", rates=(0.0, 0.05, 0.2))
    for url, r in ((S, 0.1), (A, 0.9), (B, 0.2), (C, 0.8)):
        _visit(strategy, url, r)
    learner = strategy.learner
    assert learner.losses == pytest.approx([0.5175] * 3)
    assert learner.best == 0
    assert not strategy.active  # the rate 0: link-context's eq. 9 alone
    assert [m.examples for m in learner.models] == [0, 4, 4]
    decision = _visit(strategy, S, 0.1)  # S again: its links at their priors
    assert [round(link.score, 9) for link in decision.links] == [0.775, 0.025]  # type: ignore[attr-defined]


def test_the_least_prequential_loss_chooses_the_model() -> None:
    """At the second update each model first predicts the new examples: its loss grows
    by their squared error, the rate 0's by the squared targets; the least loss scores."""
    strategy, _ = _strategy(update_every=4, min_examples=1, hop_reward="all", rates=(0.0, 0.05, 0.2))
    for url, r in ((S, 0.1), (A, 0.9), (B, 0.2), (C, 0.8)):
        _visit(strategy, url, r)
    learner = strategy.learner
    # D (1.0) after C: C->D (1.0, 0.2) and by hop A->C (0.5, 0.225), S->A (0.25, 0.775)
    for url in (D, B, B, B):
        _visit(strategy, url, 1.0 if url == D else 0.2)
    rows = [e.columns for e in learner.pending] if learner.pending else []
    assert rows == []  # learnt at the 8th page
    targets = [0.8, 0.275, -0.525]
    assert learner.losses[0] == pytest.approx(0.5175 + sum(t * t for t in targets))
    assert learner.best == min(range(3), key=lambda k: (learner.losses[k], k))
    assert learner.model is learner.models[learner.best]


def test_the_candidates_resume_with_their_losses() -> None:
    strategy, _ = _strategy(update_every=3, hop_reward="all", rates=(0.05, 0.0))
    for url, r in ((S, 0.1), (A, 0.9), (B, 0.2), (C, 0.8), (D, 1.0), (B, 0.2)):
        _visit(strategy, url, r)
    state = json.loads(json.dumps(strategy.state_dict()))
    again, _ = _strategy(update_every=3, hop_reward="all", rates=(0.05, 0.0))
    again.load_state(state)
    assert again.learner.losses == strategy.learner.losses
    assert again.learner.best == strategy.learner.best
    rows = [OnlineLinkModel.columns(link_tokens(u, "cat", "a cat", 0.5, 1)) for u in (A, B, D)]
    for a, b in zip(again.learner.models, strategy.learner.models, strict=True):
        assert a.predict(rows) == b.predict(rows)


@pytest.mark.parametrize(
    ("prior_floor", "learnt", "scores"),
    [
        (0.0, 50, [0.0, 0.3, 0.5, 0.0]),  # issue 28: the floor is 0, two links tie there
        (0.5, 50, [0.4, 0.3, 0.5, 0.0]),  # 0.8 -> max(0.4, -0.2): half its prior, above 0.3
        (0.5, 25, [0.4, 0.35, 0.35, 0.0]),  # w = 0.5: 0.8 - 0.5, 0.4 - 0.05, 0.2 + 0.15
        (1.0, 50, [0.8, 0.4, 0.5, 0.0]),  # the correction may only raise a link
        (0.01, 50, [0.008, 0.3, 0.5, 0.0]),  # a tie-break: 0.8 -> 0.008, not 0
    ],
    ids=["floor-0", "half-prior", "half-weight", "raise-only", "tie-break"],
)
def test_the_correction_lowers_a_link_at_most_to_its_floor(
    prior_floor: float, learnt: int, scores: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """score = max(prior_floor * prior, prior + w * correction), by hand: priors 0.8, 0.4,
    0.2, 0.0 and corrections -1.0, -0.1, +0.3, -0.5, at w = learnt / 50."""
    strategy, _ = _strategy(prior_floor=prior_floor)
    model = strategy.link_model
    model.version, model.examples = 1, learnt
    monkeypatch.setattr(model, "predict", lambda rows: [-1.0, -0.1, 0.3, -0.5][: len(rows)])
    rows = [OnlineLinkModel.columns([f"a:{k}"]) for k in range(4)]
    got = strategy.learner.scores(rows, [0.8, 0.4, 0.2, 0.0])
    assert got == pytest.approx(scores)


def test_links_at_the_floor_keep_eq9s_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Corrections of -1 take priors 0.9, 0.6 and 0.3 to 0, a tie, at prior_floor 0; at
    0.01 they sit at 0.009, 0.006 and 0.003, in eq. 9's order, below a link at 0.05."""
    rows = [OnlineLinkModel.columns([f"a:{k}"]) for k in range(4)]
    priors = [0.9, 0.6, 0.3, 0.05]
    got = {}
    for floor in (0.0, 0.01):
        strategy, _ = _strategy(prior_floor=floor)
        model = strategy.link_model
        model.version, model.examples = 1, 50
        monkeypatch.setattr(model, "predict", lambda rows: [-1.0, -1.0, -1.0, 0.0][: len(rows)])
        got[floor] = strategy.learner.scores(rows, priors)
    assert got[0.0] == pytest.approx([0.0, 0.0, 0.0, 0.05])
    assert got[0.01] == pytest.approx([0.009, 0.006, 0.003, 0.05])


def test_the_prior_floor_is_a_share() -> None:
    with pytest.raises(ConfigError):
        LearningStrategy(CAT, prior_floor=1.5)


@pytest.mark.parametrize(("kind_pages", "expected"), [(0, [0.775, 0.025]), (2, [0.55, 0.05])], ids=["off", "k2"])
def test_kind_pages_weigh_a_score_with_its_kinds_measured_relevance(kind_pages: float, expected: list[float]) -> None:
    """With kind_pages = k a link's score is weighed with the mean relevance measured on
    its kind's pages (a directory and its URLs' language): S (relevance 0.1) is the one
    page of http://w.org/, so "a cat" (0.775) scores (0.1 + 2 * 0.775) / (1 + 2)."""
    strategy, _ = _strategy(update_every=1000, kind_pages=kind_pages)
    decision = _visit(strategy, S, 0.1)
    assert [round(link.score, 9) for link in decision.links] == expected  # type: ignore[attr-defined]


# the hub web: S links to H ("cat list"), a page of little relevance whose links find
# X, Y, Z and W, each for the first time; X links to Y again (Y was H's discovery)
H, X, Y, Z, W = (f"http://w.org/{name}" for name in ("h", "x", "y", "z", "w"))
HUB_LINKS = {S: [Link(H, "cat list", "cat list")],
             H: [Link(X, "x", "x"), Link(Y, "y", "y"), Link(Z, "z", "z"), Link(W, "w", "w"), Link(S, "s", "s")],
             X: [Link(Y, "y", "y")], Y: [], Z: [], W: []}  # fmt: skip
HUB_PARENT = {S: None, H: S, X: H, Y: H, Z: H, W: H}


def _hub_rewards(**params: object) -> list[tuple[float, float]]:
    strategy, _ = _strategy(update_every=1000, hops=0, **params)
    relevance = {S: 0.1, H: 0.2, X: 0.9, Y: 0.8, Z: 0.3, W: 1.0}
    for url in (S, H, X, Y, Z, W):
        queued = QueuedURL(url, 1.0, 0 if url == S else 1, "w.org", HUB_PARENT[url])
        strategy.on_page(Page(url, links=list(HUB_LINKS[url])), relevance[url], queued)
    return [(round(e.reward, 9), round(e.prior, 9)) for e in strategy.pending]


@pytest.mark.parametrize(("hub_reward", "expected"), [
    # by hand, hops 0 (no ancestors' rewards), relevant from 0.5. Own links: S->H 0.2
    # (prior 0.25 * 0.1 + 0.75 = 0.775), H->X 0.9, H->Z 0.3, H->W 1.0 (priors 0.25 * 0.2
    # = 0.05), Y 0.8 by X's link, its best (0.25 * 0.9 = 0.225). H discovered X, Y, Z and
    # W (X's link to Y came later: Y stays H's discovery), so each
    # relevant one of them (X, Y, W; not Z) rewards S->H min(1, 0.2 + h * N(H)):
    # h 0.25: 0.45, 0.7, 0.95;  h 0.5: 0.7, 1.0, then nothing (not above 1)
    (0.25, [(0.2, 0.775), (0.9, 0.05), (0.45, 0.775), (0.8, 0.225), (0.7, 0.775), (0.3, 0.05),
            (1.0, 0.05), (0.95, 0.775)]),
    (0.5, [(0.2, 0.775), (0.9, 0.05), (0.7, 0.775), (0.8, 0.225), (1.0, 0.775), (0.3, 0.05),
           (1.0, 0.05)]),
    (0.0, [(0.2, 0.775), (0.9, 0.05), (0.8, 0.225), (0.3, 0.05), (1.0, 0.05)]),
], ids=["h=0.25", "h=0.5", "off"])  # fmt: skip
def test_the_hub_reward_of_a_small_web(hub_reward: float, expected: list[tuple[float, float]]) -> None:
    assert _hub_rewards(hub_reward=hub_reward) == expected


def test_the_hub_reward_is_checked() -> None:
    with pytest.raises(ConfigError):
        LearningStrategy(CAT, hub_reward=-0.1)


@pytest.mark.parametrize(
    ("reason", "dead"),
    [("status-404", True), ("status-410", True), ("status-403", True), ("status-400", True),
     ("status-408", False), ("status-429", False), ("status-500", False), ("status-301", False),
     ("timeout", False), ("robots", False), ("status-", False), ("status-4x4", False)],
)  # fmt: skip
def test_which_failures_are_client_errors(reason: str, dead: bool) -> None:
    assert client_error(reason) is dead


def test_a_dead_link_is_an_example_of_reward_0_with_learn_failures() -> None:
    """S (0.1) links to A ("a cat") and B ("a car"). B answers 404: with
    ``learn_failures`` its link S->B becomes an example of reward 0 with its prior
    0.25 * 0.1 + 0.75 * 0 = 0.025, as a page of B judged 0 would make; a 429 or a timeout
    of A teaches nothing (try later, no answer), and A fetched later is an example as usual
    (0.9, prior 0.025 + 0.75 = 0.775). Off (the default) a 404 teaches nothing."""
    strategy, _ = _strategy(update_every=1000, learn_failures=True)
    _visit(strategy, S, 0.1)
    for reason in ("status-429", "timeout"):
        assert strategy.on_failure(QueuedURL(A, 1.0, 1, "w.org", S), reason).updates == []
    assert strategy.pending == []
    strategy.on_failure(QueuedURL(B, 1.0, 1, "w.org", S), "status-404")
    _visit(strategy, A, 0.9)
    got = [(sorted(e.columns.tolist()), e.reward, round(e.prior, 9)) for e in strategy.pending]
    assert got == [(_columns(B, S, 0.1, 0), 0.0, 0.025), (_columns(A, S, 0.1, 0), 0.9, 0.775)]

    default, _ = _strategy(update_every=1000)
    _visit(default, S, 0.1)
    default.on_failure(QueuedURL(B, 1.0, 1, "w.org", S), "status-404")
    assert default.pending == []
