"""How the text classifiers are fitted, and on which labelled pages.

The pieces of the model (:mod:`focuscrawl.relevance.classifier`): the analyzer
(tokens, stop words, snowball stems), the eq. 4 TF-IDF weights and the
scikit-learn classifier of each algorithm; then the training pages.

P1 trains each topic classifier on 75 positive pages and twice as many negative
ones, drawn at random; the pages left over are kept for testing. Here the
pages come from a WARC archive, chosen either by a label file with filters such
as ``type=course`` / ``type!=course`` or by plain URL lists, and each becomes the
text a model sees: ``title + visible text`` of the parsed :class:`Page`.

Label filters such as ``type=course`` are those of :mod:`focuscrawl.relevance.examples`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.naive_bayes import MultinomialNB
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import normalize
from sklearn.svm import SVC

from focuscrawl.exceptions import ArchiveError, ModelError
from focuscrawl.metrics import BinaryScores
from focuscrawl.relevance.examples import all_match, iter_archive_pages, parse_filter
from focuscrawl.relevance.text import stem, tokenize
from focuscrawl.replay.archive import load_labels
from focuscrawl.types import Page
from focuscrawl.urls import read_url_lines

# P1, section "Experiments": 75 positive examples, twice as many negative ones.
DEFAULT_MAX_POS = 75
DEFAULT_MAX_NEG = 150

_OPERATORS = ("!=", "^=", "=")  # longest first: "a!=b" must not split at "="


ALGORITHMS = ("svm-linear", "svm-rbf", "naive-bayes", "neural-net", "majority")
MAJORITY_JUDGES = ("svm-linear", "naive-bayes", "neural-net")  # P1, "Metrics"


@lru_cache(maxsize=500_000)
def _stem_word(word: str, lang: str) -> str:
    return stem([word], lang)[0]


class Analyzer:
    """Text -> stemmed tokens without stop words, for CountVectorizer (a class so it pickles).

    Same tokens as ``tokenize(text, lang=lang, stem=True)``, but each distinct word
    is stemmed once per process: the pure-Python snowball stemmer costs ~50 µs a
    word and made up 95 % of the scoring time, while pages repeat their words.
    """

    def __init__(self, lang: str = "en") -> None:
        self.lang = lang

    def __call__(self, text: str) -> list[str]:
        return [_stem_word(w, self.lang) for w in tokenize(text, lang=self.lang, stem=False)]


class Eq4Tfidf(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Term counts -> TF-IDF weights of eq. 4: w_ip = f_ip · ln(|E| / f_di).

    scikit-learn's TfidfTransformer cannot give eq. 4: with ``smooth_idf=False``
    its idf is ln(|E|/f_di) + 1 (the +1 keeps terms found in every document),
    with ``smooth_idf=True`` ln((1+|E|)/(1+f_di)) + 1. Here f_ip is the raw count
    (``sublinear_tf=False`` in scikit-learn's terms) and the idf has no +1, so a
    term in every training page weighs 0, as in the paper. ``norm="l2"`` then
    scales each vector to unit length (P1 does not say; unscaled vectors let long
    pages dominate the SVM margin), ``norm=None`` leaves eq. 4 as is.
    """

    def __init__(self, norm: str | None = "l2") -> None:
        self.norm = norm

    def fit(self, X: Any, y: Any = None) -> Eq4Tfidf:
        counts = sparse.csr_matrix(X)
        n_docs = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        # every term comes from the training vocabulary, so df >= 1 there
        self.idf_ = np.log(n_docs / np.maximum(df, 1.0))
        return self

    def transform(self, X: Any) -> Any:
        weights = sparse.csr_matrix(X, dtype=np.float64) @ sparse.diags(self.idf_)
        return normalize(weights, norm=self.norm, copy=False) if self.norm else weights


def make_classifier(algorithm: str, seed: int = 0, smallest_class: int = 5) -> Any:
    """An unfitted scikit-learn classifier for one of the single algorithms.

    ``smallest_class`` (pages in the rarer class) caps the calibration folds.
    """
    if algorithm in ("svm-linear", "svm-rbf"):
        # Platt scaling fitted on 5-fold out-of-fold decision values, then one SVC on
        # all the data (ensemble=False): what SVC(probability=True) did before 1.9
        # deprecated it. Unshuffled stratified folds: no randomness involved.
        kernel = "linear" if algorithm == "svm-linear" else "rbf"
        svc = SVC(kernel=kernel, C=1.0, gamma="scale", random_state=seed)
        folds = min(5, smallest_class)
        return CalibratedClassifierCV(svc, method="sigmoid", cv=folds, ensemble=False)
    if algorithm == "naive-bayes":
        return MultinomialNB(alpha=1.0)
    if algorithm == "neural-net":
        # P1: three-layer net, 4 hidden nodes, learning rate 0.3, <= 500 epochs,
        # 30 % of the training data set aside for validation; P1 gives no momentum,
        # 0.2 is Weka's default. The patience of 100
        # epochs lets the net leave its first plateau (validation accuracy = share
        # of negatives): with 20 it stopped there and called every page irrelevant.
        return MLPClassifier(
            hidden_layer_sizes=(4,), solver="sgd", learning_rate_init=0.3, momentum=0.2,
            max_iter=500, early_stopping=True, validation_fraction=0.3, n_iter_no_change=100,
            random_state=seed,
        )  # fmt: skip
    raise ModelError(
        f"unknown classifier algorithm {algorithm!r} (one of: {', '.join(ALGORITHMS)})"
    )


@dataclass(slots=True)
class LabelledSplit:
    """URLs drawn for training (at most ``max_pos`` / ``max_neg``) and the rest, held out."""

    train_pos: list[str] = field(default_factory=list)
    train_neg: list[str] = field(default_factory=list)
    test_pos: list[str] = field(default_factory=list)
    test_neg: list[str] = field(default_factory=list)


def _draw(urls: list[str], limit: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """A random sample of ``limit`` URLs (all when limit <= 0) and the remainder, both sorted."""
    urls = sorted(urls)  # the draw depends only on the seed, not on file order
    if limit <= 0 or limit >= len(urls):
        return urls, []
    chosen = set(rng.sample(urls, limit))
    return sorted(chosen), [u for u in urls if u not in chosen]


def split_labels(
    labels: Mapping[str, Mapping[str, Any]],
    positive: Sequence[str],
    negative: Sequence[str] = (),
    *,
    max_pos: int = DEFAULT_MAX_POS,
    max_neg: int = DEFAULT_MAX_NEG,
    seed: int = 0,
) -> LabelledSplit:
    """Positive pages match every ``positive`` filter; negative ones match every
    ``negative`` filter (default: all non-positive pages) and are never positive."""
    pos_filters = [parse_filter(e) for e in positive]
    neg_filters = [parse_filter(e) for e in negative]
    if not pos_filters:
        raise ModelError("give at least one positive filter such as type=course")
    pos = [u for u, lab in labels.items() if all_match(pos_filters, lab)]
    neg = [
        u
        for u, lab in labels.items()
        if not all_match(pos_filters, lab) and all_match(neg_filters, lab)
    ]
    rng = random.Random(seed)
    split = LabelledSplit()
    split.train_pos, split.test_pos = _draw(pos, max_pos, rng)
    split.train_neg, split.test_neg = _draw(neg, max_neg, rng)
    return split


def page_text(page: Page) -> str:
    """What the classifiers read of a page: its title, then its visible text."""
    return f"{page.title}\n{page.text}".strip()


def load_texts(archives: Path | str | Iterable[Path | str], urls: Iterable[str]) -> dict[str, str]:
    """``{url: page_text}`` for the wanted URLs found in the archives (one pass).

    URLs missing from the archives and pages without any text are left out:
    the caller sees it from the size of the result.
    """
    wanted = set(urls)
    texts: dict[str, str] = {}
    for page in iter_archive_pages(archives, wanted):
        if page.url in texts:
            continue
        text = page_text(page)
        if text:
            texts[page.url] = text
    return texts


@dataclass(slots=True)
class TrainingTexts:
    pos: list[str]
    neg: list[str]
    missing: int  # URLs asked for but absent from the archive or empty
    urls: list[str] = field(default_factory=list)  # the pages of pos and neg
    prior: float | None = None  # share of positives among all selected labelled pages


def texts_for(
    archive: Path | str, pos_urls: Sequence[str], neg_urls: Sequence[str]
) -> TrainingTexts:
    found = load_texts(archive, [*pos_urls, *neg_urls])
    pos = [found[u] for u in pos_urls if u in found]
    neg = [found[u] for u in neg_urls if u in found]
    urls = [u for u in [*pos_urls, *neg_urls] if u in found]
    return TrainingTexts(pos, neg, len(pos_urls) + len(neg_urls) - len(pos) - len(neg), urls)


@dataclass(frozen=True)
class TrainingPages:
    """Which labelled pages of an archive a classifier is trained on: those a label
    file's filters select (``positive`` such as ``type=course``; ``negative``, default
    every non-positive page), or those of two URL lists; at most ``max_pos`` and
    ``max_neg`` of them (0: all), drawn with ``seed``."""

    archive: Path
    labels: Path | None = None
    positive: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()
    pos_urls: Path | None = None
    neg_urls: Path | None = None
    max_pos: int = DEFAULT_MAX_POS
    max_neg: int = DEFAULT_MAX_NEG
    seed: int = 0


def training_texts(pages: TrainingPages) -> TrainingTexts:
    """Select and load the training pages."""
    prior: float | None = None
    if pages.pos_urls or pages.neg_urls:
        if not (pages.pos_urls and pages.neg_urls):
            raise ModelError("give both --pos-urls and --neg-urls")
        rng = random.Random(pages.seed)
        pos_urls, _ = _draw(read_url_lines(pages.pos_urls), pages.max_pos, rng)
        neg_urls, _ = _draw(read_url_lines(pages.neg_urls), pages.max_neg, rng)
    elif pages.labels:
        try:
            labels = load_labels(pages.labels)
        except OSError as exc:
            raise ModelError(f"{pages.labels}: cannot read labels ({exc.strerror})") from None
        split = split_labels(
            labels, pages.positive, pages.negative,
            max_pos=pages.max_pos, max_neg=pages.max_neg, seed=pages.seed,
        )  # fmt: skip
        pos_urls, neg_urls = split.train_pos, split.train_neg
        n_pos = len(split.train_pos) + len(split.test_pos)
        n_all = n_pos + len(split.train_neg) + len(split.test_neg)
        # the labelled collection's own class ratio: what a judge of its pages meets
        prior = n_pos / n_all if 0 < n_pos < n_all else None
    else:
        raise ModelError("give --labels with --positive, or --pos-urls and --neg-urls")
    try:
        data = texts_for(pages.archive, pos_urls, neg_urls)
    except ArchiveError as exc:
        raise ModelError(str(exc)) from None
    if not data.pos or not data.neg:
        raise ModelError(
            f"no training pages found: {len(data.pos)} positive, {len(data.neg)} negative"
        )
    data.prior = prior
    return data


def evaluate(
    predict: Callable[[Sequence[str]], Sequence[bool]],
    pos_texts: Sequence[str],
    neg_texts: Sequence[str],
) -> BinaryScores:
    """Confusion counts of ``predict`` on known positive and negative texts.

    >>> q = evaluate(lambda ts: ["x" in t for t in ts], ["x", "x", "y"], ["y", "x"])
    >>> (q.tp, q.fn, q.tn, q.fp), round(q.accuracy, 2), q.precision, round(q.recall, 2)
    ((2, 1, 1, 1), 0.6, 0.6666666666666666, 0.67)
    """
    on_pos = list(predict(pos_texts)) if pos_texts else []
    on_neg = list(predict(neg_texts)) if neg_texts else []
    tp = sum(on_pos)
    fp = sum(on_neg)
    return BinaryScores(tp=tp, fp=fp, tn=len(on_neg) - fp, fn=len(on_pos) - tp)
