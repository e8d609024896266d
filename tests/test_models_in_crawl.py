"""Every registered model, configured from a topic TOML file, judges a real crawl."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.api import crawl
from focuscrawl.cli import main
from focuscrawl.parse.html import page_from_bytes
from focuscrawl.relevance.base import MODELS, build_model, judge, save_model
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
    # models that other test modules register for themselves ("test-...") are not the package's
    assert {name for name in MODELS.names() if not name.startswith("test-")} == set(TOPICS)


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
    assert stats.relevant == sum(p["relevant"] for p in judged)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["settings"]["model"]["name"] == name
    # the same model built here, outside the crawl, judges every archived page as the
    # crawl recorded it: the crawl applied this model, with this configuration
    model = build_model(tomllib.loads(table), tmp_path)
    bodies = _warc_bodies(tmp_path / "run")
    for record in judged:
        body, content_type = bodies[record["final_url"] or record["url"]]
        page = page_from_bytes(record["final_url"] or record["url"], body, content_type)
        score, relevant = judge(model, page)
        assert record["relevance"] == round(score, 6), record["url"]
        assert record["relevant"] == relevant, record["url"]


def _warc_bodies(run: Path) -> dict[str, tuple[bytes, str]]:
    out = {}
    with open(run / "corpus.warc.gz", "rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                content_type = rec.http_headers.get_header("Content-Type") or "text/html"
                out[rec.rec_headers.get_header("WARC-Target-URI")] = (rec.content_stream().read(), content_type)
    return out


@pytest.mark.parametrize(
    ("table", "message"),
    [
        pytest.param('name = "keyword"\nkeywords = ["cat"]\ntreshold = 0.5\n', "keyword model: unknown parameter 'treshold' (known: keywords, threshold)", id="keyword-typo"),
        pytest.param('name = "comments"\nuse_id = true\n', "comments model: unknown parameter 'use_id' (known: ", id="comments-typo"),
        pytest.param('name = "language"\ntarget = ["ja"]\nbackend = "cld2"\nprobabilty = true\n', "language model: unknown parameter 'probabilty' (known: anchor_candidates, backend, ", id="language-typo"),
    ],
)
def test_unknown_model_parameters_are_refused(
    table: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = tmp_path / "topic.toml"
    topic.write_text("[model]\n" + table, encoding="utf-8")
    code = main(["crawl", "--seeds", "http://a.example/", "--out", str(tmp_path / "run"),
                 "--config", str(topic), "--strategy", "best-first", "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_model_param_on_a_saved_model(
    sample_replay: ReplayProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "model"
    # "zebra" is on no page: cat pages score 3/4 at most
    save_model(build_model({"name": "keyword", "keywords": ["cat", "kitten", "purr", "zebra"]}), saved)
    argv = ["crawl", "--seeds", *SAMPLE_SEEDS, "--model", str(saved), "--strategy", "best-first",
            "--proxy", sample_replay.proxy_url, "--delay", "0", "--max-pages", "12", "--quiet"]  # fmt: skip
    # a parameter the saved model cannot take: refused, not ignored
    assert main([*argv, "--out", str(tmp_path / "bad"), "--model-param", "keywords=dog"]) == 2
    assert "cannot change the saved model" in capsys.readouterr().err
    # the threshold is applied: no page reaches 0.9, though the saved threshold (1e-9)
    # would call the cat pages relevant
    assert main([*argv, "--out", str(tmp_path / "run"), "--model-param", "threshold=0.9"]) == 0
    lines = (tmp_path / "run" / "pages.jsonl").read_text().splitlines()
    judged = [p for p in map(json.loads, lines) if p["relevance"] is not None]
    assert any(p["relevance"] == 0.75 for p in judged)
    assert not any(p["relevant"] for p in judged)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["settings"]["model"]["threshold"] == 0.9  # and kept for --resume
