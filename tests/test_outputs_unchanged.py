"""A restructuring changes no output: every strategy, in the ordered schedule, on WebKB
and on Wikispeedia, writes ``pages.jsonl`` and ``decisions.jsonl`` byte for byte as the
code did before it (issue 35).

The digests in ``tests/data/outputs_recorded.json`` were recorded from the code before
the restructuring, by this file itself::

    FOCUSCRAWL_RECORD_OUTPUTS=1 python3 -m pytest -q tests/test_outputs_unchanged.py

Recording again is for a change that *means* to change what a crawl writes, and its
commit says so. Only ``fetched_at`` is masked: a simulated crawl's clock starts at the
wall clock's time. Everything else in each line counts, order included.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.api import crawl
from focuscrawl.demo import COURSE_KEYWORDS, WEBKB_SEEDS
from tests.conftest import TESTWEB

RECORDED = Path(__file__).parent / "data" / "outputs_recorded.json"
RECORD = os.environ.get("FOCUSCRAWL_RECORD_OUTPUTS", "") == "1"
BUDGET = 300

WEBS: dict[str, dict[str, Any]] = {
    "webkb": {
        "archive": TESTWEB / "webkb.warc.gz",
        "labels": TESTWEB / "webkb.labels.jsonl",
        "keywords": list(COURSE_KEYWORDS),
        "positive": ["type=course"],
        "oracle": ["type=course"],
    },
    "wikispeedia": {
        "archive": TESTWEB / "wikispeedia.warc.gz",
        "labels": TESTWEB / "wikispeedia.labels.jsonl",
        "keywords": ["music", "musician", "album", "song", "band", "composer", "opera"],
        "positive": ["categories^=subject.Music"],
        "oracle": ["categories^=subject.Music"],
    },
}


def _seeds(web: str) -> list[str]:
    if web == "webkb":
        return list(WEBKB_SEEDS)
    # five pages of the topic's category, the first in the label file's order
    out = []
    with open(WEBS[web]["labels"], encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if any(c.startswith("subject.Music") for c in row.get("categories", ())):
                out.append(row["url"])
            if len(out) == 5:
                break
    return out


def _cases(web: str) -> dict[str, dict[str, Any]]:
    """Strategy label -> crawl keyword arguments (strategy, model, its parameters)."""
    w = WEBS[web]
    keyword = {"name": "keyword", "keywords": w["keywords"]}
    classifier = {
        "name": "classifier", "algorithm": "svm-rbf", "archive": str(w["archive"]),
        "labels": str(w["labels"]), "positive": w["positive"], "max_pos": 20, "max_neg": 40, "seed": 0,
    }  # fmt: skip
    cosine = {"name": "cosine", "genre_terms": ["course", "syllabus", "lecture notes"],
              "content_terms": w["keywords"], "threshold": 0.2}  # fmt: skip
    return {
        "bfs": {"strategy": "bfs"},
        "opic": {"strategy": "opic"},
        "opic-no-virtual": {"strategy": "opic", "strategy_params": {"virtual_page": False}},
        "best-first": {"strategy": "best-first", "model": keyword},
        "best-n-first": {"strategy": "best-first", "model": keyword, "fetch_list_size": 50},
        "link-context": {"strategy": "link-context", "model": keyword, "fetch_list_size": 50},
        "otie": {"strategy": "otie", "model": keyword, "fetch_list_size": 50},
        "learning": {"strategy": "learning", "model": keyword},
        "commd": {"strategy": "commd", "model": {"name": "comments"}},
        "opic-commd": {"strategy": "opic-commd", "model": {"name": "comments"}},
        "genre": {"strategy": "genre", "model": cosine},
        "genre-svm": {"strategy": "genre-svm", "model": classifier, "strategy_params": {"queue": "sibling"}},
        "language": {"strategy": "language", "strategy_params": {"target": ["en"], "policy": "soft"}},
        "perplexity": {"strategy": "perplexity",
                       "model": {"name": "perplexity", "texts": [str(TESTWEB / "cat-en.txt")], "order": 3}},
        "oracle": {"strategy": "oracle",
                   "strategy_params": {"labels": str(w["labels"]), "relevant": w["oracle"]}},
        "bfs-filtered": {"strategy": "bfs", "filters": [{"name": "relevance-gate", "min_relevance": 0.1}],
                         "model": keyword},
    }  # fmt: skip


CASES = [(web, label) for web in WEBS for label in _cases(web)]


def _digest(path: Path, mask: tuple[str, ...] = ()) -> dict[str, Any]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as fh:
        for raw in fh:
            if mask:
                row = json.loads(raw)
                for key in mask:
                    if key in row:
                        row[key] = None
                raw = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
            h.update(raw)
            n += 1
    return {"lines": n, "sha256": h.hexdigest()}


def _outputs(tmp: Path, web: str, label: str) -> dict[str, Any]:
    kw = dict(_cases(web)[label])
    params = kw.pop("strategy_params", None)
    if params:
        kw["strategy_params"] = params
    crawl(_seeds(web), tmp / "run", archives=[WEBS[web]["archive"]], max_pages=BUDGET,
          schedule="ordered", seed=0, **kw)  # fmt: skip
    return {
        "pages": _digest(tmp / "run" / "pages.jsonl", mask=("fetched_at",)),
        "decisions": _digest(tmp / "run" / "decisions.jsonl"),
    }


@pytest.mark.slow
@pytest.mark.parametrize(("web", "label"), CASES, ids=[f"{w}-{s}" for w, s in CASES])
def test_outputs_are_byte_for_byte_as_recorded(tmp_path: Path, web: str, label: str) -> None:
    if not WEBS[web]["archive"].exists():
        pytest.skip("the shared test web (../shared/testweb) is absent")
    got = _outputs(tmp_path, web, label)
    key = f"{web}/{label}"
    if RECORD:
        recorded = json.loads(RECORDED.read_text()) if RECORDED.exists() else {}
        recorded[key] = got
        RECORDED.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
        return
    recorded = json.loads(RECORDED.read_text())
    assert key in recorded, f"{key}: nothing recorded (record with FOCUSCRAWL_RECORD_OUTPUTS=1)"
    assert got == recorded[key]
    assert got["pages"]["lines"] > 0
