"""P3 in crawls: the SVM-RBF baseline, genre relevance gating OPIC, and whole crawls of
the WebKB web through the replay server and in simulation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.demo import WEBKB_SEEDS
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.strategies.genre import SITE_DEPTH, GenreSvmStrategy
from tests.genre_web import (
    COSINE,
    WEB,
    A,
    P,
    U,
    V,
    W,
    X,
    processor,
    queued_scores,
    visit,
)

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
    proc = processor(tmp_path, store, opic, [s0], filters=build_filters([{"name": "relevance-gate"}]))
    assert [visit(proc, store, web) for _ in range(3)] == [s0, P, q]
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
    proc = processor(tmp_path, store, GenreSvmStrategy(svm, queue="traditional"), [A])
    for _ in range(3):
        visit(proc, store, WEB)  # A, P, then U (the first of U, V, W, all with P's score)
    s_u = store.value(U, "relevance")  # the classifier's score of U (Figure 2.3)
    s_p = store.value(P, "relevance")
    assert s_u is not None
    assert s_p is not None
    assert s_u > 0.5 > s_p
    assert queued_scores(store) == pytest.approx(
        {V: s_p, W: s_p, X: s_u}
    )  # siblings keep P's score


def test_genre_svm_sibling_queue_changes_siblings_of_a_relevant_page(
    tmp_path: Path, svm: RelevanceModel
) -> None:
    store = MemoryFrontier()
    proc = processor(tmp_path, store, GenreSvmStrategy(svm, queue="sibling"), [A])
    for _ in range(3):
        visit(proc, store, WEB)  # A, P (0), U: judged relevant by the classifier
    s_u = store.value(U, "relevance")
    assert s_u is not None
    assert s_u >= svm.threshold
    assert queued_scores(store) == pytest.approx({V: s_u, W: s_u, X: 0.0})


# -- end to end on the WebKB replay web -----------------------------------------------------

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
    from focuscrawl.crawler.run import DB_NAME
    from focuscrawl.frontier.indexed import IndexedFrontier

    run = tmp_path / "run"
    crawl(WEBKB_SEEDS, run, strategy="genre", strategy_params={"policy": "FS-2", "max_site_depth": 2},
          model=COURSE_TOPIC, max_pages=200, delay=0.0, proxy=webkb_replay.proxy_url)  # fmt: skip
    pages = [json.loads(x) for x in (run / "pages.jsonl").read_text().splitlines()]
    assert len(pages) == 200
    page = {p["url"]: p for p in pages}
    # S scored anew from the archive by a model built here (not the crawl's logged score)
    from focuscrawl.relevance.examples import iter_archive_pages
    from tests.conftest import shared_file

    judge = CosineModel(**{k: v for k, v in COURSE_TOPIC.items() if k != "name"})
    fresh = {
        p.url: judge.score(p) for p in iter_archive_pages(shared_file("webkb.warc.gz"), set(page), only_ok=True)
    }  # fmt: skip
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
                assert value == pytest.approx(fresh[d["url"]], abs=1e-6)
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
    # S of each page scored anew from the archive by a model built here, not read from the
    # crawl's own log: the children's scores must follow it
    from focuscrawl.relevance.examples import iter_archive_pages

    judge = CosineModel(**{k: v for k, v in COURSE_TOPIC.items() if k != "name"})
    fresh = {p.url: judge.score(p) for p in iter_archive_pages(archive, set(pages), only_ok=True)}
    children = 0
    for line in (run / "decisions.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d["event"] != "page":
            continue
        s = fresh[d["url"]]
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
