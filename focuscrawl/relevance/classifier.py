"""Text classifiers of P1 (SVM, naive Bayes, neural net, 2-of-3 majority) and P3's SVM-RBF.

P1 ("Techniques for content analysis"): pages are tokenised, stop words removed
and words stemmed (snowball, :func:`focuscrawl.relevance.text.tokenize`); the
vocabulary of the training set is cut to the best ``k_best`` = 2000 terms by the
chi² test, and texts become TF-IDF vectors of eq. 4 with the training set as
the document collection E. The classifier's probability Pr(class=+1 | x) is the
similarity sim() of a page, or of a link context (the T-word window around a
link), and eq. 9 mixes both into the score of a link.

``algorithm`` picks the judge:

* ``svm-linear``  SVC with a linear kernel (P1: "first degree polynomial"),
  probabilities by Platt scaling (sigmoid fitted on 5-fold cross-validation);
* ``svm-rbf``     SVC with an RBF kernel (the P3 baseline), Platt-scaled;
* ``naive-bayes`` multinomial naive Bayes (P1's NB used kernel density
  estimates; the multinomial model is the usual text variant);
* ``neural-net``  one hidden layer of 4 units, SGD with learning rate 0.3,
  at most 500 epochs, 30 % of the training set held out for early stopping (P1);
* ``majority``    P1's judge for the harvest rate: a page is relevant when at least
  2 of {svm-linear, naive-bayes, neural-net} say so (each: probability >= 0.5);
  its ``score`` is the mean of the three probabilities, so that it can still rank.

Saved models: the fitted scikit-learn objects are pickled (``classifier.pkl``),
the only practical format for them; unpickling runs code, so load only models
you made, with the scikit-learn version recorded in ``classifier.json``.
"""

from __future__ import annotations

import json
import pickle
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning

from focuscrawl.exceptions import ModelError
from focuscrawl.metrics import auc
from focuscrawl.params import params_table
from focuscrawl.relevance.base import register_model
from focuscrawl.relevance.calibration import (
    check_objective,
    check_prior,
    choose_threshold,
    out_of_fold,
    shift_prior,
)
from focuscrawl.relevance.features import TermFeatures
from focuscrawl.relevance.text import checked_words_language
from focuscrawl.relevance.training import (
    ALGORITHMS,
    DEFAULT_MAX_NEG,
    DEFAULT_MAX_POS,
    MAJORITY_JUDGES,
    Analyzer,
    Eq4Tfidf,
    TrainingPages,
    make_classifier,
    page_text,
    training_texts,
)
from focuscrawl.types import Page

__all__ = [
    "ALGORITHMS",
    "MAJORITY_JUDGES",
    "Analyzer",
    "ClassifierModel",
    "ClassifierParams",
    "Eq4Tfidf",
    "link_score",
    "make_classifier",
]

PARAMS_FILE = "classifier.json"
PICKLE_FILE = "classifier.pkl"


def link_score(page_score: float, context_score: float, beta: float = 0.25) -> float:
    """Eq. 9 of P1: score = β·page_score + (1 − β)·context_score (P1: β = 0.25).

    >>> link_score(0.8, 0.4)
    0.5
    """
    return beta * page_score + (1.0 - beta) * context_score


def _members(algorithm: str) -> tuple[str, ...]:
    return MAJORITY_JUDGES if algorithm == "majority" else (algorithm,)


@dataclass(frozen=True)
class ClassifierParams:
    """A classifier's ``[model]`` table: a saved model, or the training pages and settings."""

    algorithm: str = "svm-linear"  # svm-linear, svm-rbf, naive-bayes, neural-net, majority
    threshold: float | None = None  # None: chosen by ``calibration`` at ``prior``
    beta: float | None = None  # eq. 9 weight of the page score (None: P1's 0.25, or the saved model's)
    k_best: int = 2000  # chi² vocabulary size (P1)
    lang: str = "en"  # stop words and stemmer
    norm: str | None = "l2"
    seed: int = 0  # the draw of the training pages, the classifiers' own randomness
    prior: float | None = None  # expected share of relevant pages (None: the labels')
    calibration: str = "f1"  # threshold objective by cross-validation (or "none")
    cv_folds: int = 5
    model_dir: Path | None = None  # a saved model instead of training
    archive: Path | None = None  # the pages to train on
    labels: Path | None = None  # with positive (and negative) label filters
    positive: tuple[str, ...] = ()  # e.g. type=course
    negative: tuple[str, ...] = ()  # default: every page not positive
    pos_urls: Path | None = None  # or two URL lists
    neg_urls: Path | None = None
    max_pos: int = DEFAULT_MAX_POS  # 0: all (P1: 75)
    max_neg: int = DEFAULT_MAX_NEG  # 0: all (P1: 150)


_DEFAULTS = params_table(ClassifierParams)
_SAVED_CHANGEABLE = frozenset({"threshold", "beta", "model_dir"})


@register_model("classifier")
@dataclass
class ClassifierModel:
    """A trained text classifier; ``score`` = Pr(relevant | page) (P1's sim)."""

    name: ClassVar[str] = "classifier"
    Params: ClassVar[type[ClassifierParams]] = ClassifierParams
    algorithm: str = "svm-linear"
    threshold: float = 0.5
    beta: float = 0.25  # eq. 9 weight of the page score (P1)
    k_best: int = 2000  # chi² vocabulary size (P1)
    lang: str = "en"
    norm: str | None = "l2"
    seed: int = 0
    prior: float | None = (
        None  # expected share of relevant pages where it judges (None: training share)
    )
    calibration: str = "f1"  # threshold objective at the prior, by cross-validation (or "none")
    cv_folds: int = 5
    member_thresholds: dict[str, float] = field(default_factory=dict)  # majority: vote thresholds
    features: TermFeatures | None = field(default=None, repr=False)  # eq. 4 vectors of texts
    classifiers: dict[str, Any] = field(default_factory=dict, repr=False)
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ModelError(
                f"unknown classifier algorithm {self.algorithm!r} (one of: {', '.join(ALGORITHMS)})"
            )
        if not 0.0 <= self.beta <= 1.0:
            raise ModelError(f"classifier beta must be in [0, 1], not {self.beta}")
        if self.k_best < 1:
            raise ModelError(f"classifier k_best must be >= 1, not {self.k_best}")
        check_prior(self.prior)
        check_objective(self.calibration)
        self.lang = checked_words_language(self.lang, "classifier")
        if self.cv_folds < 2:
            raise ModelError(f"classifier cv_folds must be >= 2, not {self.cv_folds}")
        self.train_urls: list[str] = []  # pages it was trained on (``model eval`` leaves them out)

    # -- training -------------------------------------------------------------
    def _fit(
        self, pos_texts: Sequence[str], neg_texts: Sequence[str]
    ) -> tuple[TermFeatures, dict[str, Any], int]:
        """Vocabulary, chi² selection, eq. 4 weights and the member classifier(s)."""
        y = np.array([1] * len(pos_texts) + [0] * len(neg_texts))
        features, x, vocabulary = TermFeatures.fit(
            [*pos_texts, *neg_texts], y, lang=self.lang, k_best=self.k_best, norm=self.norm
        )
        classifiers: dict[str, Any] = {}
        for algorithm in _members(self.algorithm):
            clf = make_classifier(algorithm, self.seed, min(len(pos_texts), len(neg_texts)))
            with warnings.catch_warnings():
                # 500 epochs is P1's cap; stopping there is the setting, not a failure
                warnings.simplefilter("ignore", ConvergenceWarning)
                clf.fit(x, y)
            classifiers[algorithm] = clf
        return features, classifiers, vocabulary

    def train(self, pos_texts: Sequence[str], neg_texts: Sequence[str]) -> ClassifierModel:
        """Fit vocabulary, chi² selection, eq. 4 weights and the classifier(s), then
        calibrate the decision for ``prior`` by cross-validation (:meth:`calibrate`); returns self."""
        if len(pos_texts) < 2 or len(neg_texts) < 2:
            # the calibration folds and the net's validation split need two of each
            raise ModelError("classifier training needs at least 2 positive and 2 negative texts")
        self.features, self.classifiers, vocabulary = self._fit(pos_texts, neg_texts)
        self.member_thresholds = {}
        self.info = {
            "n_pos": len(pos_texts),
            "n_neg": len(neg_texts),
            "vocabulary": vocabulary,
            "terms": len(self.features.terms),
            "train_prior": len(pos_texts) / (len(pos_texts) + len(neg_texts)),
        }
        if self.calibration != "none":
            self.calibrate(pos_texts, neg_texts)
        return self

    def calibrate(self, pos_texts: Sequence[str], neg_texts: Sequence[str]) -> None:
        """Thresholds for ``prior`` from out-of-fold scores of the training texts (eq. C1–C3).

        Each of ``cv_folds`` stratified folds is scored by a model fitted on the
        other folds from scratch (vocabulary and chi² too), so that no score
        comes from a model that saw its page. ``threshold`` is chosen on the
        (prior-shifted) mean score, and for ``majority`` each member's vote
        threshold on its own score. Too few texts (a class smaller than
        2·folds): thresholds stay as they are, and ``info["calibration"]`` says so.
        """
        folds = min(self.cv_folds, len(pos_texts) // 2, len(neg_texts) // 2)
        if folds < 2:
            self.info["calibration"] = "skipped: too few training texts"
            return
        oof = out_of_fold(self._fit_scorer, pos_texts, neg_texts, folds, self.seed)
        n_pos = len(pos_texts)
        prior = self.effective_prior
        report: dict[str, Any] = {"folds": folds, "objective": self.calibration, "prior": prior}
        shifted = {a: self._shift(p) for a, p in oof.items()}
        if self.algorithm == "majority":
            for a, p in shifted.items():
                op = choose_threshold(p[:n_pos], p[n_pos:], prior, self.calibration)
                self.member_thresholds[a] = op.threshold
        mean = np.mean(list(shifted.values()), axis=0)
        op = choose_threshold(mean[:n_pos], mean[n_pos:], prior, self.calibration)
        self.threshold = op.threshold
        report["cv"] = {k: round(v, 4) for k, v in op.as_dict().items()}
        report["cv"]["auc"] = round(
            auc(list(mean), [True] * n_pos + [False] * (len(mean) - n_pos)), 4
        )
        self.info["calibration"] = report

    def _fit_scorer(
        self, pos_texts: Sequence[str], neg_texts: Sequence[str]
    ) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
        """Fit a fresh copy on one fold's training part; returns its probability function."""
        fold = ClassifierModel(
            algorithm=self.algorithm, k_best=self.k_best, lang=self.lang, norm=self.norm,
            seed=self.seed, calibration="none",
        )  # fmt: skip
        fold.features, fold.classifiers, _ = fold._fit(pos_texts, neg_texts)
        return fold.probabilities

    @property
    def effective_prior(self) -> float:
        """The base rate the decisions are made for: ``prior``, else the training share."""
        if self.prior is not None:
            return self.prior
        return float(self.info.get("train_prior", 0.5))

    def _shift(self, p: np.ndarray) -> np.ndarray:
        """Eq. C1 from the training share to ``prior`` (no-op without a prior)."""
        train_prior = self.info.get("train_prior")
        if self.prior is None or train_prior is None:
            return p
        return shift_prior(p, float(train_prior), self.prior)

    def _check_trained(self) -> None:
        if self.features is None or not self.classifiers:
            raise ModelError("classifier model is not trained (train it or load a saved one)")

    # -- scoring --------------------------------------------------------------
    def probabilities(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Pr(relevant | text) of each member classifier at the base rate ``prior`` (eq. C1)."""
        self._check_trained()
        assert self.features is not None
        x = self.features.vectorize(texts)
        return {a: self._shift(clf.predict_proba(x)[:, 1]) for a, clf in self.classifiers.items()}

    def _votes(self, probs: Mapping[str, np.ndarray]) -> np.ndarray:
        """Members saying "relevant": probability >= the member's calibrated threshold (0.5 if none)."""
        votes = [p >= self.member_thresholds.get(a, 0.5) for a, p in probs.items()]
        return np.asarray(np.sum(votes, axis=0))

    def score_texts(self, texts: Sequence[str]) -> list[float]:
        """Scores of many texts at once (one vectorisation: much faster than a loop)."""
        if not texts:
            return []
        probs = np.mean(list(self.probabilities(texts).values()), axis=0)
        return [float(p) for p in np.clip(probs, 0.0, 1.0)]

    def votes_texts(self, texts: Sequence[str]) -> list[int]:
        """How many member classifiers find each text relevant (each at its own threshold)."""
        if not texts:
            return []
        return [int(v) for v in self._votes(self.probabilities(texts))]

    def predict_texts(self, texts: Sequence[str]) -> list[bool]:
        """The binary judgement: the 2-of-3 vote for ``majority``, else score >= threshold."""
        if self.algorithm == "majority":
            need = len(MAJORITY_JUDGES) // 2 + 1
            return [v >= need for v in self.votes_texts(texts)]
        return [s >= self.threshold for s in self.score_texts(texts)]

    def score_text(self, text: str) -> float:
        return self.score_texts([text])[0]

    def score(self, page: Page) -> float:
        return self.score_text(page_text(page))

    def judge(self, page: Page) -> tuple[float, bool]:
        """``(score(page), relevant)`` from one vectorisation and one set of
        probabilities (the engine judges every fetched page this way)."""
        probs = self.probabilities([page_text(page)])
        score = float(np.clip(np.mean([p[0] for p in probs.values()]), 0.0, 1.0))
        if self.algorithm == "majority":
            return score, int(self._votes(probs)[0]) >= len(MAJORITY_JUDGES) // 2 + 1
        return score, score >= self.threshold

    # -- persistence ----------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm, "threshold": self.threshold, "beta": self.beta,
            "k_best": self.k_best, "lang": self.lang, "norm": self.norm, "seed": self.seed,
            "prior": self.prior, "calibration": self.calibration, "cv_folds": self.cv_folds,
            "member_thresholds": self.member_thresholds,
        }  # fmt: skip

    def save(self, directory: Path) -> None:
        self._check_trained()
        data = {**self.params(), "info": self.info, "sklearn": sklearn.__version__}
        (directory / PARAMS_FILE).write_text(json.dumps(data, indent=2), encoding="utf-8")
        with open(directory / PICKLE_FILE, "wb") as fh:
            assert self.features is not None
            pickle.dump({"features": self.features.pipeline, "classifiers": self.classifiers}, fh)

    @classmethod
    def load(cls, directory: Path) -> ClassifierModel:
        try:
            data = json.loads((Path(directory) / PARAMS_FILE).read_text(encoding="utf-8"))
            with open(Path(directory) / PICKLE_FILE, "rb") as fh:
                fitted = pickle.load(fh)
        except (OSError, ValueError, pickle.UnpicklingError, AttributeError, EOFError) as exc:
            raise ModelError(f"{directory}: not a saved classifier model ({exc})") from None
        info = data.pop("info", {})
        data.pop("sklearn", None)
        model = cls(**data, info=info)
        model.features = TermFeatures(fitted["features"])
        model.classifiers = fitted["classifiers"]
        return model

    # -- configuration --------------------------------------------------------
    @classmethod
    def from_params(cls, p: ClassifierParams) -> ClassifierModel:
        """A saved model (``model_dir``, with ``threshold`` and ``beta`` changeable), or
        one trained now on the labelled pages of ``archive``."""
        if p.model_dir is not None:
            fixed = [k for k, v in params_table(p).items() if k not in _SAVED_CHANGEABLE and v != _DEFAULTS[k]]
            if fixed:  # the fitted objects (and thresholds calibrated for a prior) depend on these
                raise ModelError(f"classifier model_dir: cannot override {', '.join(sorted(fixed))}")
            model = cls.load(p.model_dir)
            model.threshold = model.threshold if p.threshold is None else p.threshold
            model.beta = model.beta if p.beta is None else p.beta
            return model
        if p.archive is None:
            raise ModelError("classifier model needs 'model_dir' or training data ('archive', ...)")
        data = training_texts(TrainingPages(
            p.archive, p.labels, p.positive, p.negative, p.pos_urls, p.neg_urls,
            max_pos=p.max_pos, max_neg=p.max_neg, seed=p.seed,
        ))  # fmt: skip
        model = cls(
            algorithm=p.algorithm, beta=0.25 if p.beta is None else p.beta, k_best=p.k_best, lang=p.lang, norm=p.norm,
            seed=p.seed, prior=p.prior if p.prior is not None else data.prior, cv_folds=p.cv_folds,
            # a threshold given by hand is kept as given
            calibration="none" if p.threshold is not None else p.calibration,
            threshold=0.5 if p.threshold is None else p.threshold,
        )  # fmt: skip
        model.train(data.pos, data.neg)
        model.train_urls = data.urls
        return model
