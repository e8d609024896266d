"""A strategy's state is a dataclass (:class:`~focuscrawl.strategies.base.StrategyState`):
its JSON form round-trips, and it is byte for byte what the code before the dataclasses
committed, so a crawl saved by that code resumes (issue 35).

The digests in ``tests/data/strategy_states_recorded.json`` were recorded from the code
before the state dataclasses (every state ``state_dict`` returned at every commit of a
short ordered crawl on WebKB, committing every 20 results and never by the clock, as
``json.dumps`` writes it into the crawl DB), by this file itself::

    FOCUSCRAWL_RECORD_STATES=1 python3 -m pytest -q tests/test_strategy_state.py --full

Recording again is for a change that *means* to change the resume state, and its
commit says how an older crawl still resumes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.api import crawl
from focuscrawl.demo import COURSE_KEYWORDS, WEBKB_SEEDS
from focuscrawl.relevance.online_link import LinkModelState
from focuscrawl.strategies.base import STRATEGIES, Strategy, StrategyState
from focuscrawl.strategies.comments import CommdState, OpicCommdState
from focuscrawl.strategies.language import LanguageState
from focuscrawl.strategies.learner_state import LearnerState, PendingExamples
from focuscrawl.strategies.link_context import LinkContextState
from focuscrawl.strategies.opic import OpicState
from focuscrawl.strategies.oracle import OracleState
from focuscrawl.strategies.otie import OtieState
from focuscrawl.strategies.perplexity import PerplexityState
from tests.conftest import TESTWEB

RECORDED = Path(__file__).parent / "data" / "strategy_states_recorded.json"
RECORD = os.environ.get("FOCUSCRAWL_RECORD_STATES", "") == "1"
ARCHIVE = TESTWEB / "webkb.warc.gz"
LABELS = TESTWEB / "webkb.labels.jsonl"
BUDGET = 150

_LEARNER = LearnerState(
    pages=30,
    model=LinkModelState(version=2, examples=41, positives=7, coef="eJwDAAAAAAE=", intercept=-0.25, t=42.0),
    pending=PendingExamples(columns="eJwDAAAAAAE=", lengths=[3, 2], rewards=[0.5, 0.0], priors=[0.25, 0.125]),
)

# one state of every kind, its fields away from their defaults
STATES: dict[str, StrategyState] = {
    "opic": OpicState(g=0.125),
    "opic-commd": OpicCommdState(undistributed=0.375, relevant=3),
    "commd": CommdState(salt=12345, layer=2),
    "language": LanguageState(langs={"en": 4, "ja": 1}, places={"http://a.org/": [3, 5]}),
    "perplexity": PerplexityState(seeds=["http://a.org/"], seeds_tiered=True, pages={"high": 2, "discarded": 1}),
    "oracle": OracleState(found=["http://a.org/1", "http://a.org/2"]),
    "otie": OtieState(lists=4, learner=_LEARNER),
    "otie-fixed": OtieState(lists=4),
    "link-context": LinkContextState(learner=_LEARNER),
    "link-context-fixed": LinkContextState(),
    "learning": _LEARNER,
    "link-model-unready": LinkModelState(version=0, examples=0, positives=0),
}


@pytest.mark.parametrize("state", list(STATES.values()), ids=list(STATES))
def test_a_state_round_trips_through_json(state: StrategyState) -> None:
    text = json.dumps(state.to_json())
    again = type(state).from_json(json.loads(text))
    assert again == state
    assert json.dumps(again.to_json()) == text


@pytest.mark.parametrize("state", list(STATES.values()), ids=list(STATES))
def test_an_empty_state_reads_as_the_defaults(state: StrategyState) -> None:
    """A crawl saved before a key existed (or by a strategy with nothing yet) resumes."""
    assert type(state).from_json({}) == type(state)()


def test_the_json_keys_are_those_the_resume_state_always_had() -> None:
    """Written keys and their order, by hand from the code before the dataclasses."""
    assert list(OpicState(0.5).to_json()) == ["g"]
    assert list(OpicCommdState(0.5, 1).to_json()) == ["undistributed", "relevant"]
    assert list(CommdState(3, 1).to_json()) == ["salt", "layer"]
    assert list(LanguageState().to_json()) == ["langs", "places"]
    assert list(PerplexityState().to_json()) == ["seeds", "seeds_tiered", "pages"]
    assert list(OracleState().to_json()) == ["found"]
    assert list(OtieState(2).to_json()) == ["lists"]
    assert list(OtieState(2, _LEARNER).to_json()) == ["lists", "learner"]
    assert LinkContextState().to_json() == {}
    assert list(_LEARNER.to_json()) == ["pages", "model", "pending"]
    assert list(_LEARNER.to_json()["pending"]) == ["columns", "lengths", "rewards", "priors"]
    assert list(_LEARNER.model.to_json()) == ["version", "examples", "positives", "coef", "intercept", "t"]
    assert list(LinkModelState(0, 0, 0).to_json()) == ["version", "examples", "positives"]


def test_workers_merge_opic_commd_layers_as_sums() -> None:
    """Eq. 4 over all workers' pages: R_k and the relevant pages add up."""
    merged = OpicCommdState.merge([OpicCommdState(0.25, 1), OpicCommdState(0.5, 2)])
    assert merged == OpicCommdState(0.75, 3)


# -- byte for byte as the code before the dataclasses committed ------------------------------

_keyword = {"name": "keyword", "keywords": list(COURSE_KEYWORDS)}
CRAWLS: dict[str, dict[str, Any]] = {
    "bfs": {"strategy": "bfs"},
    "opic": {"strategy": "opic"},
    "opic-commd": {"strategy": "opic-commd", "model": {"name": "comments"}},
    "commd": {"strategy": "commd", "model": {"name": "comments"}},
    "language": {"strategy": "language", "strategy_params": {"target": ["en"], "policy": "soft"}},
    "language-directory": {"strategy": "language", "strategy_params": {"target": ["en"], "policy": "directory"}},
    "perplexity": {"strategy": "perplexity",
                   "model": {"name": "perplexity", "texts": [str(TESTWEB / "cat-en.txt")], "order": 3}},
    "oracle": {"strategy": "oracle", "strategy_params": {"labels": str(LABELS), "relevant": ["type=course"]}},
    "otie": {"strategy": "otie", "model": _keyword},
    "otie-online": {"strategy": "otie", "model": _keyword, "strategy_params": {"link_model": "online"}},
    "link-context-online": {"strategy": "link-context", "model": _keyword,
                            "strategy_params": {"link_model": "online"}},
    "learning": {"strategy": "learning", "model": _keyword, "strategy_params": {"update_every": 10}},
}  # fmt: skip

# the state class each strategy's state_dict writes (and a resume reads)
STATE_OF: dict[str, Callable[[Mapping[str, Any]], StrategyState] | None] = {
    "bfs": None,
    "opic": OpicState.from_json,
    "opic-commd": OpicCommdState.from_json,
    "commd": CommdState.from_json,
    "language": LanguageState.from_json,
    "perplexity": PerplexityState.from_json,
    "oracle": OracleState.from_json,
    "otie": OtieState.from_json,
    "link-context": LinkContextState.from_json,
    "learning": LearnerState.from_json,
}


def _committed_states(tmp: Path, label: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every strategy state the crawl commits, as the crawl DB holds it (``json.dumps``)."""
    kw = dict(CRAWLS[label])
    cls: type[Strategy] = STRATEGIES.get(kw["strategy"])
    original = cls.state_dict
    seen: list[str] = []

    def recording(self: Strategy) -> dict[str, Any]:
        state = original(self)
        seen.append(json.dumps(state))
        return state

    monkeypatch.setattr(cls, "state_dict", recording)
    crawl(list(WEBKB_SEEDS), tmp / "run", archives=[ARCHIVE], max_pages=BUDGET, schedule="ordered",
          seed=0, commit_every=20, commit_seconds=0, **kw)  # fmt: skip
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("label", list(CRAWLS))
def test_the_committed_state_is_byte_for_byte_as_recorded(
    tmp_path: Path, label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not ARCHIVE.exists():
        pytest.skip("the shared test web (../shared/testweb) is absent")
    states = _committed_states(tmp_path, label, monkeypatch)
    digest = hashlib.sha256("\n".join(states).encode()).hexdigest()
    got = {"commits": len(states), "sha256": digest, "last_bytes": len(states[-1]) if states else 0}
    if RECORD:
        recorded = json.loads(RECORDED.read_text()) if RECORDED.exists() else {}
        recorded[label] = got
        RECORDED.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
        return
    recorded = json.loads(RECORDED.read_text())
    assert label in recorded, f"{label}: nothing recorded (record with FOCUSCRAWL_RECORD_STATES=1)"
    assert got == recorded[label]
    assert len(states) > 2
    # what the old code wrote, the new code reads back whole: an old crawl resumes
    read = STATE_OF[CRAWLS[label]["strategy"]]
    for text in states:
        if read is None:
            assert text == "{}"
        else:
            assert json.dumps(read(json.loads(text)).to_json()) == text
