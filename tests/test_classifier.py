"""Text classifiers of P1 / P3: eq. 4 TF-IDF, chi² selection, the 2-of-3 vote, eq. 9, WebKB."""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from focuscrawl.commands.model.train import trainer
from focuscrawl.exceptions import FocuscrawlError, ModelError
from focuscrawl.relevance.base import RelevanceModel, build_model, judge, load_model, save_model
from focuscrawl.relevance.classifier import (
    ALGORITHMS,
    Analyzer,
    ClassifierModel,
    link_score,
)
from focuscrawl.relevance.training import (
    evaluate,
    load_texts,
    page_text,
    parse_filter,
    split_labels,
)
from focuscrawl.replay.archive import load_labels
from focuscrawl.types import Page
from tests.conftest import TESTWEB

WEBKB = TESTWEB / "webkb.warc.gz"
WEBKB_LABELS = TESTWEB / "webkb.labels.jsonl"


# -- eq. 4 and chi² on hand-made texts ---------------------------------------

# "cat", "dog", "fish", "bird" are their own snowball stems and no stop words.
POS = ["cat cat dog", "cat fish"]
NEG = ["dog fish", "bird fish"]


def test_analyzer_stems_and_drops_stop_words() -> None:
    assert Analyzer("en")("The courses and the Courses of running") == ["cours", "cours", "run"]


def test_eq4_weights_match_hand_computation() -> None:
    model = ClassifierModel(algorithm="naive-bayes", norm=None).train(POS, NEG)
    assert model.features.terms == ["bird", "cat", "dog", "fish"]
    # |E| = 4 training pages; f_d: cat 2, dog 2, fish 3, bird 1
    x = model.features.vectorize(["cat cat dog fish"]).toarray()[0]
    expected = [0.0, 2 * math.log(4 / 2), 1 * math.log(4 / 2), 1 * math.log(4 / 3)]
    assert x == pytest.approx(expected)
    # the batch-free fast path gives what the scikit-learn Pipeline gives
    assert model.features is not None
    via_pipeline = model.features.pipeline.transform(["cat cat dog fish"]).toarray()[0]
    assert via_pipeline == pytest.approx(expected)


def test_eq4_l2_norm_scales_to_unit_length() -> None:
    raw = ClassifierModel(algorithm="naive-bayes", norm=None).train(POS, NEG)
    unit = ClassifierModel(algorithm="naive-bayes").train(POS, NEG)
    x_raw = raw.features.vectorize(["cat dog bird"]).toarray()[0]
    x_unit = unit.features.vectorize(["cat dog bird"]).toarray()[0]
    assert x_unit == pytest.approx(x_raw / np.linalg.norm(x_raw))


def test_term_in_every_training_page_weighs_zero() -> None:
    model = ClassifierModel(algorithm="naive-bayes", norm=None).train(
        ["web cat", "web cat"], ["web dog", "web bird"]
    )
    x = model.features.vectorize(["web web web"]).toarray()[0]
    assert x.tolist() == [0.0] * len(model.features.terms)  # ln(4/4) = 0


def test_chi2_keeps_the_discriminative_term() -> None:
    pos = ["course syllabus", "course homework"]
    neg = ["syllabus research", "homework research"]
    model = ClassifierModel(algorithm="naive-bayes", k_best=2).train(pos, neg)
    assert sorted(model.features.terms) == ["cours", "research"]
    assert model.features is not None
    select = model.features.pipeline.named_steps["chi2"]
    vocabulary = list(model.features.pipeline.named_steps["counts"].get_feature_names_out())
    # "cours": 2 occurrences, all in the positive class; expected 1 and 1 (half the
    # pages each): chi² = (2-1)²/1 + (0-1)²/1 = 2. "syllabus": 1 and 1 -> 0.
    assert select.scores_[vocabulary.index("cours")] == pytest.approx(2.0)
    assert select.scores_[vocabulary.index("syllabus")] == pytest.approx(0.0)


def test_k_best_larger_than_vocabulary_keeps_everything() -> None:
    model = ClassifierModel(algorithm="naive-bayes", k_best=2000).train(POS, NEG)
    assert model.info["terms"] == model.info["vocabulary"] == 4


# -- the 2-of-3 vote and eq. 9 with fixed probabilities -----------------------


class FixedProba:
    """A stand-in classifier: the same Pr(relevant) for every text."""

    def __init__(self, p: float) -> None:
        self.p = p

    def predict_proba(self, x: Any) -> np.ndarray:
        return np.tile([1.0 - self.p, self.p], (x.shape[0], 1))


def _stubbed(algorithm: str, *probs: float) -> ClassifierModel:
    model = ClassifierModel(algorithm=algorithm).train(POS, NEG)
    model.classifiers = {
        name: FixedProba(p) for name, p in zip(model.classifiers, probs, strict=True)
    }
    return model


@pytest.mark.parametrize(
    ("probs", "votes", "relevant"),
    [
        ((0.9, 0.6, 0.1), 2, True),
        ((0.9, 0.4, 0.2), 1, False),
        ((0.5, 0.5, 0.0), 2, True),
        ((0.1, 0.2, 0.3), 0, False),
        ((0.7, 0.8, 0.9), 3, True),
    ],
    ids=["two-of-three", "one-of-three", "at-threshold", "none", "all"],
)
def test_majority_vote(probs: tuple[float, float, float], votes: int, relevant: bool) -> None:
    model = _stubbed("majority", *probs)
    assert list(model.classifiers) == ["svm-linear", "naive-bayes", "neural-net"]
    page = Page(url="http://a.test/", title="x", text="cat")
    assert model.votes_texts([page_text(page)]) == [votes]
    assert model.score(page) == pytest.approx(sum(probs) / 3)
    assert judge(model, page) == (pytest.approx(sum(probs) / 3), relevant)


def test_single_algorithm_judges_by_threshold() -> None:
    model = _stubbed("svm-linear", 0.45)
    page = Page(url="http://a.test/", text="cat")
    assert model.votes_texts([page_text(page)]) == [0]
    assert judge(model, page) == (pytest.approx(0.45), False)
    model.threshold = 0.4
    assert judge(model, page) == (pytest.approx(0.45), True)


def test_eq9_by_hand() -> None:
    assert link_score(0.8, 0.4) == pytest.approx(0.25 * 0.8 + 0.75 * 0.4)
    assert link_score(0.8, 0.4, beta=1.0) == pytest.approx(0.8)
    model = _stubbed("svm-rbf", 0.6)
    assert link_score(0.2, model.score_text("cat dog"), model.beta) == pytest.approx(0.25 * 0.2 + 0.75 * 0.6)


# -- bad input ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"algorithm": "svm-poly"}, "unknown classifier algorithm"),
        ({"beta": 1.5}, "beta"),
        ({"k_best": 0}, "k_best"),
    ],
    ids=["algorithm", "beta", "k-best"],
)
def test_bad_parameters(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        ClassifierModel(**kwargs)


def test_untrained_and_empty_training_raise_model_error(tmp_path: Path) -> None:
    model = ClassifierModel()
    with pytest.raises(ModelError, match="not trained"):
        model.score_text("cat")
    with pytest.raises(ModelError, match="at least 2 positive and 2 negative"):
        model.train(["cat"], ["dog", "fish"])
    with pytest.raises(ModelError, match="no words"):
        model.train(["the and", "a"], ["of to", "it"])
    with pytest.raises(ModelError, match="not a saved classifier"):
        ClassifierModel.load(tmp_path)


@pytest.mark.parametrize(
    ("expr", "label", "expected"),
    [
        ("type=course", {"type": "course"}, True),
        ("type=course", {"type": "faculty"}, False),
        ("type!=course", {"type": "faculty"}, True),
        ("type!=course", {}, True),
        ("categories=a.b", {"categories": ["a.b", "c"]}, True),
        ("categories^=subject.Sci", {"categories": ["subject.Science.X"]}, True),
        ("categories^=subject.Sci", {"categories": []}, False),
    ],
    ids=["eq", "eq-miss", "ne", "ne-absent", "list-eq", "list-prefix", "list-empty"],
)
def test_label_filters(expr: str, label: dict[str, Any], expected: bool) -> None:
    assert parse_filter(expr).matches(label) is expected


def test_bad_filter() -> None:
    with pytest.raises(ModelError, match="bad label filter"):
        parse_filter("type")


def test_split_labels_draws_fixed_sizes_and_keeps_the_rest() -> None:
    labels = {
        f"u{i}": {"type": "course" if i < 10 else ("other" if i < 25 else "staff")}
        for i in range(30)
    }
    split = split_labels(labels, ["type=course"], ["type=other"], max_pos=4, max_neg=6, seed=3)
    assert len(split.train_pos) == 4
    assert len(split.test_pos) == 6
    assert len(split.train_neg) == 6
    assert len(split.test_neg) == 9  # 15 "other" pages, staff pages excluded
    assert not set(split.train_pos) & set(split.test_pos)
    again = split_labels(labels, ["type=course"], ["type=other"], max_pos=4, max_neg=6, seed=3)
    assert again == split


# -- real WebKB pages: course vs. every other page -----------------------------


@pytest.fixture(scope="module")
def webkb() -> dict[str, list[str]]:
    if not WEBKB.exists():
        pytest.skip("shared test web not found")
    # P1: 75 positive and 150 negative training pages; the rest is held out
    split = split_labels(load_labels(WEBKB_LABELS), ["type=course"], seed=0)
    rng = random.Random(1)
    test_pos = rng.sample(split.test_pos, 150)
    test_neg = rng.sample(split.test_neg, 300)
    texts = load_texts(WEBKB, [*split.train_pos, *split.train_neg, *test_pos, *test_neg])
    return {
        "train_pos": [texts[u] for u in split.train_pos if u in texts],
        "train_neg": [texts[u] for u in split.train_neg if u in texts],
        "test_pos": [texts[u] for u in test_pos if u in texts],
        "test_neg": [texts[u] for u in test_neg if u in texts],
    }


@pytest.fixture(scope="module")
def trained(webkb: dict[str, list[str]]) -> dict[str, ClassifierModel]:
    return {
        a: ClassifierModel(algorithm=a).train(webkb["train_pos"], webkb["train_neg"])
        for a in ALGORITHMS
    }


# Measured on this split (accuracy / precision / recall): svm-linear .882/.809/.847,
# svm-rbf .882/.801/.860, naive-bayes .851/.849/.673, neural-net .838/.867/.607,
# majority .860/.854/.700. The bounds leave room for other library versions (the
# SGD-trained net moves by a few points with rounding), while a constant judge
# scores accuracy 0.67 (all negative) or precision 0.33 (all positive).
BOUNDS = {
    "svm-linear": (0.82, 0.72, 0.70),
    "svm-rbf": (0.82, 0.72, 0.70),
    "naive-bayes": (0.78, 0.72, 0.50),
    "neural-net": (0.78, 0.70, 0.50),
    "majority": (0.80, 0.72, 0.55),
}


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=ALGORITHMS)
def test_webkb_held_out_quality(
    algorithm: str, webkb: dict[str, list[str]], trained: dict[str, ClassifierModel]
) -> None:
    assert len(webkb["train_pos"]) == 75
    assert len(webkb["train_neg"]) == 150
    model = trained[algorithm]
    assert model.info["terms"] == 2000
    quality = evaluate(model.predict_texts, webkb["test_pos"], webkb["test_neg"])
    accuracy, precision, recall = BOUNDS[algorithm]
    assert quality.accuracy >= accuracy
    assert quality.precision >= precision
    assert quality.recall >= recall


def test_webkb_course_terms_selected(trained: dict[str, ClassifierModel]) -> None:
    terms = set(trained["svm-linear"].features.terms)
    assert {"cours", "homework", "lectur", "syllabus"} <= terms


def test_save_load_roundtrip_gives_identical_scores(
    tmp_path: Path, webkb: dict[str, list[str]], trained: dict[str, ClassifierModel]
) -> None:
    model = trained["majority"]
    model.threshold = 0.4
    save_model(model, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "classifier.json",
        "classifier.pkl",
        "model.json",
    ]
    loaded = load_model(tmp_path)
    assert isinstance(loaded, ClassifierModel)
    assert isinstance(loaded, RelevanceModel)
    assert loaded.params() == model.params()
    texts = webkb["test_pos"][:20] + webkb["test_neg"][:20]
    assert loaded.score_texts(texts) == model.score_texts(texts)
    assert loaded.votes_texts(texts) == model.votes_texts(texts)


def _train_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    trainer("classifier").add_arguments(parser)
    return parser


def test_cli_train_from_labels() -> None:
    if not WEBKB.exists():
        pytest.skip("shared test web not found")
    args = _train_parser().parse_args(
        ["--archive", str(WEBKB), "--labels", str(WEBKB_LABELS), "--positive", "type=course",
         "--negative", "type=student", "--max-pos", "10", "--max-neg", "20",
         "--algorithm", "naive-bayes", "--beta", "0.5"]
    )  # fmt: skip
    model = trainer("classifier").train(args)
    assert isinstance(model, ClassifierModel)
    assert (model.algorithm, model.beta) == ("naive-bayes", 0.5)
    assert (model.info["n_pos"], model.info["n_neg"]) == (10, 20)


def test_cli_train_from_url_files_and_config(tmp_path: Path) -> None:
    if not WEBKB.exists():
        pytest.skip("shared test web not found")
    split = split_labels(load_labels(WEBKB_LABELS), ["type=course"], max_pos=8, max_neg=16, seed=5)
    (tmp_path / "pos.txt").write_text("# course pages\n" + "\n".join(split.train_pos) + "\n")
    (tmp_path / "neg.txt").write_text("\n".join([*split.train_neg, "http://missing.test/"]))
    args = _train_parser().parse_args(
        ["--archive", str(WEBKB), "--pos-urls", str(tmp_path / "pos.txt"),
         "--neg-urls", str(tmp_path / "neg.txt"), "--max-neg", "0", "--algorithm", "svm-rbf"]
    )  # fmt: skip
    model = trainer("classifier").train(args)
    assert isinstance(model, ClassifierModel)
    assert (model.info["n_pos"], model.info["n_neg"]) == (8, 16)  # the missing URL is skipped
    text = "Course homework: lecture notes and the syllabus of CS 415"

    save_model(model, tmp_path / "saved")
    from_dir = build_model({"name": "classifier", "model_dir": "saved", "beta": 0.1}, tmp_path)
    assert isinstance(from_dir, ClassifierModel)
    assert from_dir.beta == 0.1
    assert from_dir.score_text(text) == model.score_text(text)

    cfg = {"name": "classifier", "archive": str(WEBKB), "pos_urls": "pos.txt",
           "neg_urls": "neg.txt", "max_neg": 0, "algorithm": "svm-rbf"}  # fmt: skip
    fresh = build_model(cfg, tmp_path)
    assert isinstance(fresh, ClassifierModel)
    assert fresh.score_text(text) == pytest.approx(model.score_text(text))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pos-urls", "x.txt"], "both --pos-urls and --neg-urls"),
        ([], "give --labels"),
        (["--labels", "nowhere.jsonl", "--positive", "type=course"], "cannot read labels"),
    ],
    ids=["one-url-file", "no-source", "missing-labels"],
)
def test_cli_bad_training_input(argv: list[str], message: str) -> None:
    args = _train_parser().parse_args(["--archive", str(WEBKB), *argv])
    with pytest.raises(ModelError, match=message):
        trainer("classifier").train(args)


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"kernel": "rbf"}, "classifier model: unknown parameter 'kernel' \\(known: algorithm, archive, beta, "),
        ({"model_dir": "saved", "algorithm": "svm-rbf"}, "cannot override algorithm"),
        ({"algorithm": "svm-rbf"}, "needs 'model_dir' or training data"),
    ],
    ids=["unknown-key", "override-fitted", "no-source"],
)
def test_bad_config(cfg: dict[str, Any], message: str) -> None:
    with pytest.raises(FocuscrawlError, match=message):
        build_model({"name": "classifier", **cfg}, Path("."))
