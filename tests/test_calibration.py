"""Decisions at the real class ratio: eq. C1 prior shift, eq. C2/C3 operating points,
thresholds chosen on out-of-fold scores, and the classifier and ``model eval`` using them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from focuscrawl.commands.model.subcommands import main as model_main
from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.relevance.base import load_model, save_model
from focuscrawl.relevance.calibration import (
    choose_threshold,
    operating_points,
    out_of_fold,
    shift_prior,
)
from focuscrawl.relevance.classifier import ClassifierModel
from tests.conftest import TESTWEB

WEBKB = TESTWEB / "webkb.warc.gz"
WEBKB_LABELS = TESTWEB / "webkb.labels.jsonl"


def test_prior_shift_by_hand() -> None:
    # p = 0.5 under prior 1/3 -> odds 1:1 become (0.1/(1/3)) : (0.9/(2/3)) = 0.3 : 1.35
    assert shift_prior(np.array([0.5]), 1 / 3, 0.1)[0] == pytest.approx(0.3 / 1.65)
    # p = 0.9 under 0.5 -> prior 0.2: 0.4*0.9 / (0.4*0.9 + 1.6*0.1) = 0.36 / 0.52
    assert shift_prior(np.array([0.9]), 0.5, 0.2)[0] == pytest.approx(0.36 / 0.52)
    # the ends stay put, the same prior is a no-op, and the order of pages is kept
    p = np.array([0.0, 0.2, 0.7, 1.0])
    q = shift_prior(p, 0.4, 0.05)
    assert (q[0], q[-1]) == (0.0, 1.0)
    assert list(np.argsort(q)) == [0, 1, 2, 3]
    assert list(shift_prior(p, 0.4, 0.4)) == list(p)


def test_operating_points_at_a_prior_by_hand() -> None:
    pos, neg = [0.9, 0.6], [0.6, 0.2, 0.1, 0.05]
    points = operating_points(pos, neg, prior=0.1)
    cuts = [round(op.threshold, 6) for op in points]
    assert cuts[1:] == [0.75, 0.4, 0.15, 0.075, 0.05]
    assert points[0].threshold > 0.9  # above every score: nothing judged relevant
    at_075 = points[1]  # TPR 1/2, FPR 0 -> precision 1
    assert (at_075.tpr, at_075.fpr, at_075.precision) == (0.5, 0.0, 1.0)
    at_04 = points[2]  # TPR 1, FPR 1/4: precision = 0.1 / (0.1 + 0.9 * 0.25) = 0.1 / 0.325
    assert at_04.precision == pytest.approx(0.1 / 0.325)
    assert at_04.accuracy == pytest.approx(0.1 + 0.9 * 0.75)
    assert points[0].tpr == points[0].fpr == 0.0


def test_choose_threshold_depends_on_the_prior() -> None:
    pos, neg = [0.9, 0.6], [0.6, 0.2, 0.1, 0.05]
    # balanced: t=0.4 gives P 0.8, R 1 (F1 0.889) beats t=0.75 (P 1, R 0.5, F1 0.667)
    assert choose_threshold(pos, neg, 0.5).threshold == pytest.approx(0.4)
    # rare positives: t=0.4 gives P 0.1/0.325 = 0.31 (F1 0.47) < t=0.75's 0.667
    assert choose_threshold(pos, neg, 0.1).threshold == pytest.approx(0.75)
    assert choose_threshold(pos, neg, 0.1, "accuracy").threshold == pytest.approx(0.75)
    # precision >= 0.3 reachable with recall 1 at t=0.4
    assert choose_threshold(pos, neg, 0.1, "precision:0.3").threshold == pytest.approx(0.4)
    with pytest.raises(ModelError, match="unknown calibration"):
        choose_threshold(pos, neg, 0.1, "precision:2")
    with pytest.raises(ModelError, match="positive and negative"):
        choose_threshold([], neg, 0.1)


def test_out_of_fold_scores_come_from_models_that_never_saw_the_text() -> None:
    seen: list[set[str]] = []

    def fit(pos: Sequence[str], neg: Sequence[str]):  # type: ignore[no-untyped-def]
        train = {*pos, *neg}
        seen.append(train)

        def score(texts: Sequence[str]) -> Mapping[str, np.ndarray]:
            assert not train & set(texts)
            return {
                "in": np.array([float(t in train) for t in texts]),
                "len": np.array([float(len(t)) for t in texts]),
            }

        return score

    pos, neg = ["a", "bb", "ccc"], ["dddd", "eeeee", "ffffff"]
    oof = out_of_fold(fit, pos, neg, folds=3, seed=1)
    assert len(seen) == 3
    assert all(len(s) == 4 for s in seen)
    assert list(oof["in"]) == [0.0] * 6
    assert list(oof["len"]) == [1, 2, 3, 4, 5, 6]  # each text scored once, in place


POS = ["course homework syllabus lecture", "lecture notes homework exam", "syllabus exam grading course",
       "homework due lecture", "course lecture exam", "syllabus homework course notes"]  # fmt: skip
NEG = ["my research on compilers", "home page of a student", "research group projects",
       "faculty member compilers", "student hobbies and photos", "department news research",
       "project members and papers", "photos of my cat", "research interests databases",
       "publications and talks", "group seminar research", "student research projects"]  # fmt: skip


def test_classifier_calibrates_on_its_training_texts_only() -> None:
    model = ClassifierModel(algorithm="naive-bayes", prior=0.05, cv_folds=3).train(POS, NEG)
    report = model.info["calibration"]
    assert (report["folds"], report["objective"], report["prior"]) == (3, "f1", 0.05)
    assert model.info["train_prior"] == pytest.approx(6 / 18)
    assert 0.0 < model.threshold < 1.0
    # scores are prior-shifted: the same model without the prior gives eq. C1's inverse
    plain = ClassifierModel(algorithm="naive-bayes", calibration="none").train(POS, NEG)
    raw = plain.score_text("course homework")
    expected = shift_prior(np.array([raw]), 6 / 18, 0.05)[0]
    assert model.score_text("course homework") == pytest.approx(expected)
    assert plain.threshold == 0.5
    assert "calibration" not in plain.info


def test_majority_gets_member_thresholds_and_keeps_them_through_save(tmp_path: Path) -> None:
    model = ClassifierModel(algorithm="majority", prior=0.1, cv_folds=3).train(POS, NEG)
    assert set(model.member_thresholds) == {"svm-linear", "naive-bayes", "neural-net"}
    save_model(model, tmp_path)
    loaded = load_model(tmp_path)
    assert isinstance(loaded, ClassifierModel)
    assert loaded.member_thresholds == model.member_thresholds
    assert (loaded.prior, loaded.threshold) == (0.1, model.threshold)
    texts = [*POS, *NEG, "lecture"]
    assert loaded.predict_texts(texts) == model.predict_texts(texts)
    # the vote uses each member's own threshold
    probs = model.probabilities(texts)
    votes = [
        sum(int(probs[a][i] >= t) for a, t in model.member_thresholds.items())
        for i in range(len(texts))
    ]
    assert model.votes_texts(texts) == votes


def test_too_few_texts_keep_the_given_threshold() -> None:
    model = ClassifierModel(algorithm="naive-bayes", threshold=0.3).train(POS[:3], NEG[:3])
    assert model.info["calibration"].startswith("skipped")
    assert model.threshold == 0.3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prior": 1.0}, "prior"),
        ({"calibration": "auc"}, "unknown calibration"),
        ({"cv_folds": 1}, "cv_folds"),
    ],
)
def test_bad_calibration_parameters(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        ClassifierModel(**kwargs)  # type: ignore[arg-type]


def test_cli_train_and_eval_at_the_real_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not WEBKB.exists():
        pytest.skip("shared test web not found")
    out = tmp_path / "m"
    model_main(["train", "classifier", "--archive", str(WEBKB), "--labels", str(WEBKB_LABELS),
                "--positive", "type=course", "--negative", "university=cornell",
                "--max-pos", "12", "--max-neg", "24", "--algorithm", "naive-bayes", "--out", str(out)])  # fmt: skip
    params = json.loads((out / "classifier.json").read_text())
    labels = [json.loads(line) for line in WEBKB_LABELS.read_text().splitlines()]
    cornell = [lab for lab in labels if lab["university"] == "cornell"]
    n_pos = sum(lab["type"] == "course" for lab in labels)
    n_neg = sum(lab["type"] != "course" for lab in cornell)
    assert params["prior"] == pytest.approx(n_pos / (n_pos + n_neg))  # the labelled share
    assert params["info"]["calibration"]["folds"] == 5
    train_urls = (out / "train-urls.txt").read_text().split()
    assert len(train_urls) == 36
    capsys.readouterr()
    model_main(["eval", str(out), "--archive", str(WEBKB), "--labels", str(WEBKB_LABELS),
                "--field", "type", "--value", "course", "--where", "university=cornell",
                "--thresholds", "0.5"])  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    fields = dict(f.split("=") for f in lines[0].split() if "=" in f and "(" not in f[:2])
    trained_cornell = sum(1 for u in train_urls if u in {lab["url"] for lab in cornell})
    # one Cornell record is text/plain (gear.mae.cornell.edu/xujun/cccf/cccf.html/): not a page
    assert int(fields["n"]) == len(cornell) - trained_cornell - 1
    assert f"{trained_cornell} training pages left out" in lines[0]
    assert 0.5 < float(fields["auc"]) <= 1.0
    assert not math.isnan(float(fields["f1"]))
    assert lines[1].startswith("  score >= 0.5: accuracy=")


def test_model_eval_on_one_class_and_on_a_value_no_label_has(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before (b44): pages of one class printed "auc=0.0000" (the ROC area is undefined
    # there, and 0 reads as a model that ranks every page backwards); --value cours (a
    # typo) judged every page irrelevant and printed figures of nothing
    from focuscrawl.replay.archive import iter_responses

    model = tmp_path / "m"
    model_main(["train", "keyword", "--keywords", "cat,cats", "--out", str(model)])
    urls = sorted({r.url for r in iter_responses(sample_archive) if r.status == 200 and "html" in r.content_type})[:4]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"url": u, "kind": "x"}) + "\n" for u in urls))
    capsys.readouterr()
    model_main(["eval", str(model), "--archive", str(sample_archive), "--labels", str(labels),
                "--field", "kind", "--value", "x"])  # fmt: skip
    line = capsys.readouterr().out.splitlines()[0]
    assert "relevant=4 (1.0000)" in line
    assert "auc=n/a (one class only)" in line
    with pytest.raises(ConfigError, match=r"^no label has kind=y \(values: x\)$"):
        model_main(["eval", str(model), "--archive", str(sample_archive), "--labels", str(labels),
                    "--field", "kind", "--value", "y"])  # fmt: skip


def test_model_eval_limit_is_a_seeded_sample_keeping_the_class_ratio(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before (c49): --limit N judged the first N labelled pages in the archive's order:
    # here the first four are all "yes", so it printed relevant=4 (1.0000) for a
    # collection that is half "no"
    from focuscrawl.replay.archive import iter_responses

    model = tmp_path / "m"
    model_main(["train", "keyword", "--keywords", "cat,cats", "--out", str(model)])
    ordered = list(dict.fromkeys(r.url for r in iter_responses(sample_archive)
                                 if r.status == 200 and "html" in r.content_type))[:8]  # fmt: skip
    assert len(ordered) == 8
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"url": u, "kind": "yes" if i < 4 else "no"}) + "\n"
                              for i, u in enumerate(ordered)))  # fmt: skip
    argv = ["eval", str(model), "--archive", str(sample_archive), "--labels", str(labels),
            "--field", "kind", "--value", "yes", "--limit", "4"]  # fmt: skip
    capsys.readouterr()
    model_main(argv)
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("n=4 relevant=2 (0.5000) "), first
    model_main(argv)
    assert capsys.readouterr().out.splitlines()[0] == first  # the same sample again
