"""Every registered model, configured from a topic TOML file, judges a real crawl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.api import crawl
from focuscrawl.relevance.base import MODELS
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS, labels_path_for

CAT_TEXT = (
    "The cat is a small domesticated carnivorous mammal with soft fur and whiskers.\n"
    "Kittens sleep a lot and play with toys when they are awake and curious.\n"
    "A cat purrs when it is content and grooms its fur with its rough tongue.\n"
    "Many people keep cats as pets because cats are clean and independent animals.\n"
)

TOPICS = {
    "keyword": 'name = "keyword"\nkeywords = ["cat", "kitten"]\n',
    "cosine": 'name = "cosine"\ngenre_terms = ["cat care", "breed"]\ncontent_terms = ["cat", "kitten", "fur"]\nthreshold = 0.2\n',
    "classifier": 'name = "classifier"\nalgorithm = "naive-bayes"\narchive = "{archive}"\nlabels = "{labels}"\npositive = ["relevant=true"]\nmax_pos = 10\nmax_neg = 20\n',
    "comments": 'name = "comments"\n',
    "language": 'name = "language"\ntarget = ["ko", "ja"]\n',
    "perplexity": 'name = "perplexity"\ntexts = ["{texts}"]\norder = 3\n',
}


def test_every_registered_model_has_a_topic_case() -> None:
    assert set(MODELS.names()) == set(TOPICS)


@pytest.mark.parametrize("name", sorted(TOPICS))
def test_model_from_topic_file_judges_a_crawl(name: str, sample_replay: ReplayProcess, tmp_path: Path) -> None:
    archive = Path(sample_replay.archives[0])
    texts = tmp_path / "cats.txt"
    texts.write_text(CAT_TEXT, encoding="utf-8")
    topic = tmp_path / "topic.toml"
    table = TOPICS[name].format(archive=archive, labels=labels_path_for(archive), texts=texts)
    topic.write_text("[crawl]\nstrategy = \"best-first\"\n[model]\n" + table, encoding="utf-8")
    stats = crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="best-first", max_pages=15,
                  config=topic, proxy=sample_replay.proxy_url, delay=0.0)  # fmt: skip
    pages = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    judged = [p for p in pages if p["relevance"] is not None]
    assert stats.judged == len(judged) > 0
    assert all(0.0 <= p["relevance"] <= 1.0 for p in judged)
    assert all(isinstance(p["relevant"], bool) for p in judged)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["settings"]["model"]["name"] == name
