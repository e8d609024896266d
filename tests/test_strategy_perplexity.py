"""P2's perplexity buckets: tiers and priorities by hand on a tiny graph, end to end
on the replay web, and the bounds changed through the control channel while a crawl runs."""

from __future__ import annotations

import json
import math
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.control import wait_for_ack, write_request
from focuscrawl.crawler.recorder import Recorder
from focuscrawl.crawler.window import InFlight
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.relevance.language import LanguageModel
from focuscrawl.relevance.ngram_lm import PerplexityModel
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import STRATEGIES
from focuscrawl.strategies.perplexity import HIGH, MEDIUM, NORMAL, SEED, PerplexityStrategy, bucket
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import FetchResult
from focuscrawl.urls import Scope
from tests.conftest import shared_file

A, B, C, D, E, F, G = (f"http://{h}.org/" for h in "abcdefg")

# A unigram model written by hand: p(cat) = 1/2, p(dog) = 1/4, p(</s>) = p(<unk>) = 1/8.
# PP = 2^H with H = −(1/|X|) Σ log2 p(x) (P2, eq. 1) over the page's words plus one
# </s>: log2 p = −1 for cat, −2 for dog, −3 for </s> and for an unknown word.
# PP_max = 1/p(<unk>) = 8.
ARPA = f"""
\\data\\
ngram 1=5

\\1-grams:
{math.log10(1 / 8)!r}\t<unk>
-99\t<s>
{math.log10(1 / 8)!r}\t</s>
{math.log10(1 / 2)!r}\tcat
{math.log10(1 / 4)!r}\tdog

\\end\\
"""


@pytest.fixture
def model(tmp_path: Path) -> PerplexityModel:
    path = tmp_path / "m.arpa"
    path.write_text(ARPA, encoding="utf-8")
    return PerplexityModel.from_arpa(path, boilerplate=False)  # the page's visible text as is


def _page(text: str, *links: tuple[str, str]) -> bytes:
    anchors = "".join(f' <a href="{url}">{anchor}</a>' for url, anchor in links)
    return f"<html><body><p>{text}</p>{anchors}</body></html>".encode()


def _result(url: str, body: bytes) -> FetchResult:
    return FetchResult(
        url=url, final_url=url, status=200, body=body, content_type="text/html",
        charset="utf-8", headers={"Content-Type": "text/html"},
    )  # fmt: skip


def _processor(tmp_path: Path, store: MemoryFrontier, strategy: PerplexityStrategy) -> Recorder:
    settings = Settings()
    store.ensure_columns(("relevance", *strategy.columns))
    strategy.attach(FrontierView(store), random.Random(0))
    return Recorder(
        settings, queue=store, columns=store, graph=store, strategy=strategy, model=strategy.model, filters=[],
        scope=Scope.for_seeds(settings.scope, [A]), stats=CrawlStats(),
        warc=WarcOutput(tmp_path / "c.warc.gz"), pages=JsonlOutput(tmp_path / "pages.jsonl"),
        decisions=JsonlOutput(tmp_path / "decisions.jsonl"),
    )  # fmt: skip


def _next(proc: Recorder, store: MemoryFrontier, expected: str, body: bytes) -> None:
    """Pop one URL as the engine does (the strategy hears of the list), check it, record its page."""
    (queued,) = store.pop(1)
    assert queued.url == expected
    proc.apply(proc.strategy.on_fetch_list([queued]), None)
    proc.record(InFlight(queued), _result(queued.url, body))


def _row(store: MemoryFrontier, url: str) -> tuple[Any, ...]:  # compared with pytest.approx
    row = store.get(url)
    assert row is not None
    return row.tier, row.score, store.value(url, "parent_pp")


def test_buckets_priorities_and_discard_by_hand(tmp_path: Path, model: PerplexityModel) -> None:
    strategy = PerplexityStrategy(model, high=3.0, medium=4.5, discard=6.0)
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, strategy)
    proc.add_seeds([A])
    # A: "cat cat cat" + anchors "cat" (B) and "dog" (C) -> cat×4, dog, </s>:
    # H = (4·1 + 2 + 3)/6 = 1.5, PP = 2^1.5 = 2.828 <= high 3 -> HIGH, score 1/PP
    _next(proc, store, A, _page("cat cat cat", (B, "cat"), (C, "dog")))
    pp_a = 2**1.5
    assert _row(store, A)[0] == SEED  # the first fetch list lifted the seed above every bucket
    for url in (B, C):
        tier, score, parent_pp = _row(store, url)
        assert (tier, score, parent_pp) == (HIGH, pytest.approx(1 / pp_a), pytest.approx(pp_a, rel=1e-9))
    # B: "dog dog" + anchors "dog" (D), "dog" (C) -> dog×4, </s>: H = (8 + 3)/5 = 2.2,
    # PP = 2^2.2 = 4.595 > medium 4.5 -> NORMAL. C keeps its better parent A (HIGH, 1/2.828).
    _next(proc, store, B, _page("dog dog", (D, "dog"), (C, "dog")))
    pp_b = 2**2.2
    assert _row(store, D) == (NORMAL, pytest.approx(1 / pp_b), pytest.approx(pp_b, rel=1e-9))
    assert _row(store, C) == (HIGH, pytest.approx(1 / pp_a), pytest.approx(pp_a, rel=1e-9))
    # C: "zebra" + anchor "zebra" (E) -> <unk>×2, </s>: H = 9/3 = 3, PP = 8 = PP_max (score 0:
    # recomputed by the model) > discard 6 -> E is not queued at all
    _next(proc, store, C, _page("zebra", (E, "zebra")))
    assert store.state(E) is None
    # D: "cat" + anchors "cat" (F), "dog" (G) -> cat×2, dog, </s>: H = (2 + 2 + 3)/4 = 1.75,
    # PP = 2^1.75 = 3.364: 3 < PP <= 4.5 -> MEDIUM
    _next(proc, store, D, _page("cat", (F, "cat"), (G, "dog")))
    pp_d = 2**1.75
    for url in (F, G):
        assert _row(store, url) == (MEDIUM, pytest.approx(1 / pp_d), pytest.approx(pp_d, rel=1e-9))
    assert strategy.counters() == {"pp_HIGH": 1, "pp_MEDIUM": 1, "pp_NORMAL": 1, "pp_discarded": 1}
    assert proc.decisions is not None
    proc.decisions.sync()
    decisions = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    discarded = next(d for d in decisions if d.get("url") == C)
    assert discarded["reason"] == "PP 8 > discard 6: 1 links dropped"
    assert "links" not in discarded

    # the bounds move while the crawl runs: high 3 -> 3.5 puts PP 3.364 into HIGH
    decision = strategy.set_params({"high": 3.5})
    assert sorted(decision.tiers) == [(F, HIGH), (G, HIGH)]
    proc.apply(decision, None)
    assert [_row(store, u)[0] for u in (F, G)] == [HIGH, HIGH]
    # ... and medium 3.2 (high 3) moves them to NORMAL; nothing else is queued
    decision = strategy.set_params({"high": 3.0, "medium": 3.2})
    assert sorted(decision.tiers) == [(F, NORMAL), (G, NORMAL)]
    proc.apply(decision, None)
    assert strategy.set_params({"discard": 5.0}).tiers == []  # applies to later documents only


def test_bounds_move_queued_urls_back_and_forth(tmp_path: Path, model: PerplexityModel) -> None:
    """Each change re-tiers from the stored parent PP; a lower tier waits for the higher one."""
    strategy = PerplexityStrategy(model, high=3.0, medium=4.5, discard=6.0)
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, strategy)
    proc.add_seeds([A])
    # A: "dog" + anchors "cat" (B), "cat" (C): cat×2, dog, </s> -> PP 2^1.75 = 3.364, MEDIUM
    _next(proc, store, A, _page("dog", (B, "cat"), (C, "cat")))
    # B: "dog dog dog" + "dog" (D): dog×4, </s> -> PP 2^2.2 = 4.595, NORMAL
    _next(proc, store, B, _page("dog dog dog", (D, "dog")))
    # medium 3 and high 1: C (3.364) drops to NORMAL too; C's score 1/3.364 beats D's 1/4.595
    proc.apply(strategy.set_params({"high": 1.0, "medium": 3.0}), None)
    rows: list[Any] = [_row(store, u)[:2] for u in (C, D)]
    assert rows == [
        (NORMAL, pytest.approx(2**-1.75)), (NORMAL, pytest.approx(2**-2.2)),
    ]  # fmt: skip
    # now high 4.6 lifts both C and D into HIGH ...
    proc.apply(strategy.set_params({"high": 4.6, "medium": 5.0}), None)
    assert [_row(store, u)[0] for u in (C, D)] == [HIGH, HIGH]
    # ... and high 4: C back in HIGH, D in MEDIUM
    proc.apply(strategy.set_params({"high": 4.0}), None)
    assert [_row(store, u)[0] for u in (C, D)] == [HIGH, MEDIUM]
    assert [q.url for q in store.pop(2)] == [C]  # tier-strict: D (MEDIUM) is not taken with C
    assert [q.url for q in store.pop(2)] == [D]


def test_every_seed_goes_before_the_buckets(tmp_path: Path, model: PerplexityModel) -> None:
    strategy = PerplexityStrategy(model, high=3.0, medium=4.5, discard=6.0)
    store = MemoryFrontier()
    proc = _processor(tmp_path, store, strategy)
    proc.add_seeds([A, B])
    # A's links are HIGH (PP 2^1.5, as above), but the second seed B still comes first
    _next(proc, store, A, _page("cat cat cat", (C, "cat"), (D, "dog")))
    assert _row(store, C)[0] == HIGH
    assert _row(store, B)[0] == SEED
    assert [q.url for q in store.pop(3)] == [B]
    assert strategy.state_dict()["seeds"] == []  # tiered once, then forgotten


def test_parameters_and_model_are_checked(model: PerplexityModel) -> None:
    assert STRATEGIES.get("perplexity") is PerplexityStrategy
    with pytest.raises(ConfigError, match="high = 10 must be <= medium = 5"):
        PerplexityStrategy(model, high=10, medium=5)
    with pytest.raises(ConfigError, match=r"discard = 0\.5 must be a perplexity >= 1"):
        PerplexityStrategy(model, discard=0.5)
    with pytest.raises(ConfigError, match="unknown parameter 'low'"):
        PerplexityStrategy(model, low=3)
    with pytest.raises(ConfigError, match="needs the perplexity model"):
        PerplexityStrategy(LanguageModel(["ja"]))
    strategy = PerplexityStrategy(model)
    with pytest.raises(ConfigError, match="must be <= medium"):
        strategy.set_params({"high": 1e6})
    # a model without held-out texts: P2's numbers
    assert strategy.params == {"high": 1000.0, "medium": 10000.0, "discard": 1e5, "bounds": "model"}
    assert [bucket(pp, 3.0, 4.5) for pp in (1.0, 3.0, 3.01, 4.5, 4.51)] == [HIGH, HIGH, MEDIUM, MEDIUM, NORMAL]


# ---------------------------------------------------------------- on the replay web
CAT = "http://schools-wikipedia.org/wp/c/Cat.htm"


@pytest.fixture(scope="module")
def wiki_replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayProcess]:
    archive = shared_file("wikispeedia.warc.gz")
    with ReplayProcess([archive], log_path=tmp_path_factory.mktemp("replay") / "requests.tsv") as replay:
        yield replay


def _config(tmp_path: Path, replay: ReplayProcess | None, *, max_pages: int, delay: float) -> Path:
    """A topic TOML: the cat article as the domain (P2's first experiment), one URL in flight;
    through the replay server, or (``replay`` None) for a simulation over the archive."""
    texts = shared_file("cat-en.txt")
    proxy = "" if replay is None else f'proxy = "{replay.proxy_url}"\nallow_private = ["127.0.0.1"]'
    path = tmp_path / "cat.toml"
    path.write_text(f"""
seeds = ["{CAT}"]
[crawl]
strategy = "perplexity"
max_pages = {max_pages}
window = 1
[crawl.strategy_params]
high = 800.0
medium = 1000.0
discard = 1500.0
[fetch]
delay = {delay}
{proxy}
[model]
name = "perplexity"
texts = ["{texts}"]
""", encoding="utf-8")  # fmt: skip
    return path


def _replay_log(run: Path) -> list[tuple[str, dict[str, Any]]]:
    """The crawl's decision log with the pages it fetched, in order."""
    out: list[tuple[str, dict[str, Any]]] = []
    for line in (run / "decisions.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out.append((str(rec["event"]), rec))
    return out


def _check_order(
    run: Path, bounds: tuple[float, float], new_bounds: tuple[float, float] | None = None
) -> list[tuple[dict[str, Any], dict[str, int]]]:
    """Rebuild the queue from the decision log and check that each fetched page was, when it
    was taken (one URL in flight: after the previous result), a best queued URL by (tier, 1/PP).

    Returns each control event with the moves expected from the queue at that moment: every
    queued URL whose best parent's PP (1/score) is in another bucket under ``new_bounds``."""
    queue: dict[str, tuple[int, float]] = {}
    done: set[str] = set()
    controls: list[tuple[dict[str, Any], dict[str, int]]] = []
    first = True
    for event, rec in _replay_log(run):
        if event == "seeds":
            continue
        if event == "control":
            assert new_bounds is not None
            expected = {}
            for url, (_tier, score) in queue.items():
                new = bucket(1 / score, *new_bounds)
                if url not in done and bucket(1 / score, *bounds) != new:
                    expected[url] = new
            controls.append((rec, expected))
            for url, tier in rec.get("tiers", []):
                queue[url] = (tier, queue[url][1])
            continue
        url = rec["url"]
        if not first:
            best = max(v for u, v in queue.items() if u not in done)
            assert queue[url] == best, f"{url} {queue[url]} taken while {best} waited"
        first = False
        done.add(url)
        for link, score, _reason, *rest in rec.get("links", []):
            tier = rest[1] if rest else 0
            if link not in done:
                queue[link] = max(queue.get(link, (tier, score)), (tier, score))
    return controls


def test_crawl_on_the_replay_web_and_in_simulation(wiki_replay: ReplayProcess, tmp_path: Path) -> None:
    from focuscrawl.api import crawl

    config = _config(tmp_path, wiki_replay, max_pages=40, delay=0.0)
    stats = crawl([], tmp_path / "run", config=config)
    assert stats.fetched == 40
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["strategy"] == "perplexity"
    assert run["strategy_params"] == {"high": 800.0, "medium": 1000.0, "discard": 1500.0, "bounds": "model"}
    assert _check_order(tmp_path / "run", (800.0, 1000.0)) == []
    pages = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    assert pages[0]["url"] == CAT
    # every page after the seed came from a document under the discard bound: score 1/PP >= 1/1500
    assert all(p["score"] >= 1 / 1500 for p in pages[1:])
    # the same crawl simulated over the archive (virtual time, no sockets) takes the same URLs
    # in the same order, with the same priorities
    sim = crawl([], tmp_path / "sim", config=_config(tmp_path, None, max_pages=40, delay=1.0),
                archives=[shared_file("wikispeedia.warc.gz")])  # fmt: skip
    assert sim.fetched == 40
    simulated = [json.loads(line) for line in (tmp_path / "sim" / "pages.jsonl").read_text().splitlines()]
    assert [(p["url"], p["score"]) for p in simulated] == [(p["url"], p["score"]) for p in pages]


@pytest.mark.slow  # a live crawl slowed down to be changed while it runs
def test_bounds_change_while_the_crawl_runs(wiki_replay: ReplayProcess, tmp_path: Path) -> None:
    """`focuscrawl control RUN high=... medium=...` on a live crawl (its own process).
    The crawl is stopped by the test (SIGINT), not by its end: 90 pages 0.5 s apart
    outlast the two changes, however slowly a loaded machine starts the command."""
    config = _config(tmp_path, wiki_replay, max_pages=100, delay=0.5)
    run = tmp_path / "run"
    crawl = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl", "crawl", "--config", str(config), "--out", str(run)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        pages = run / "pages.jsonl"
        while crawl.poll() is None and (not pages.exists() or len(pages.read_bytes().splitlines()) < 10):
            time.sleep(0.05)
        assert crawl.poll() is None, crawl.stderr.read().decode() if crawl.stderr else ""
        answer = subprocess.run(
            [sys.executable, "-m", "focuscrawl", "control", str(run), "high=950", "medium=1200",
             "--timeout", "60"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert answer.returncode == 0, answer.stdout + answer.stderr
        assert "applied" in answer.stdout
        # a bad change is refused with the strategy's own message, the crawl goes on
        request = write_request(run, {"high": 5000.0})
        ack = wait_for_ack(run, request, timeout=60)
        assert ack is not None
        assert not ack["ok"]
        assert "must be <= medium" in ack["error"]
        assert crawl.poll() is None, "the crawl ended before the test stopped it"
        crawl.send_signal(signal.SIGINT)
        assert crawl.wait(timeout=120) == 130, crawl.stderr.read().decode() if crawl.stderr else ""
    finally:
        if crawl.poll() is None:
            crawl.kill()
            crawl.wait()
    info = json.loads((run / "run.json").read_text())
    assert [c["strategy"] for c in info["control"]] == [{"high": 950, "medium": 1200}]
    assert info["strategy_params"] == {"high": 950.0, "medium": 1200.0, "discard": 1500.0, "bounds": "model"}
    ((control, expected),) = _check_order(run, (800.0, 1000.0), (950.0, 1200.0))
    # the queued URLs whose best parent had 800 < PP <= 950 moved MEDIUM -> HIGH, and those
    # with 1000 < PP <= 1200 NORMAL -> MEDIUM; no other URL moved
    assert expected
    assert set(expected.values()) <= {HIGH, MEDIUM}
    assert dict(control["tiers"]) == expected
