"""An online link model: it learns, while the crawl runs, which links lead to relevant pages.

What a link is known by when it is found (the features): its anchor words, the
words of its context window (P1's T words), the tokens of its URL (host, path
and query words), the parent page's relevance as the crawl's page model judged
it, the link's depth, and how many relevant pages already link to its URL. The
labels come from the crawl itself: when a page is judged, the link that led to it
gets its relevance as a reward, and the links that led to its ancestors within
``hops`` links get ``gamma ** h`` times it (Chakrabarti et al.'s "apprentice",
WWW 2002; ACHE's adaptive link classifier, Barbosa & Freire, WWW 2007).

The model is a linear regression on hashed features updated with
scikit-learn's ``SGDRegressor.partial_fit`` (no GPU, a few ms per update),
seeded, so the same examples in the same order give the same weights. Hashing
(``FeatureHasher``, 2^15 features) needs no vocabulary, so an update costs the
same at page 1,000 and at page 1,000,000. The weights are kept as float32 values
(rounded after every update), so the resume state holds them exactly: zlib of
their bytes, where the columns no link has touched (most of them) are zeros, and
encoded once per model version, not once per commit.
"""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

# scikit-learn and scipy are imported where a model is made, not with this module:
# the registry imports every built-in strategy, and a crawl that uses none of them
# (bfs, best-first...) would pay ~0.9 s of CPU at every start for their imports

__all__ = ["ETA0", "N_FEATURES", "LinkModelState", "OnlineLinkModel", "link_tokens"]

N_FEATURES = 1 << 15
_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
_URL_WORD = re.compile(r"[A-Za-z]{2,}")
_MAX_CONTEXT = 40  # context words kept per link
_POSITIVE = 0.5  # an example counts as positive from this reward
ETA0 = 0.05  # the SGD's initial step size (invscaling: eta0 / t ** 0.25)


def link_tokens(
    url: str, anchor: str, context: str, parent_relevance: float, depth: int, inlinks: int = 0
) -> list[str]:
    """The hashed tokens of one link, prefixed by where they come from (``inlinks``:
    the relevant pages known to link to the URL, this one included; 3 or more: "n:3").

    >>> link_tokens("http://a.org/Mammals/Cat.htm", "the cat", "a cat and a dog", 0.8, 2, 5)
    ['a:the', 'a:cat', 'c:cat', 'c:and', 'c:dog', 'h:a.org', 'u:mammals', 'u:cat', 'u:htm', 'p:0.8', 'd:2', 'n:3']
    """
    tokens = [f"a:{w}" for w in _WORD.findall(anchor.lower())]
    words = [w for w in _WORD.findall(context.lower()) if len(w) > 2][:_MAX_CONTEXT]
    tokens += [f"c:{w}" for w in dict.fromkeys(words)]
    try:
        parts = urlsplit(url)
        tokens.append(f"h:{(parts.hostname or '').lower()}")
        tokens += [f"u:{w.lower()}" for w in _URL_WORD.findall(parts.path + " " + parts.query)]
    except ValueError:
        pass
    tokens.append(f"p:{min(1.0, max(0.0, round(parent_relevance, 1)))}")  # parent relevance, binned
    tokens.append(f"d:{min(depth, 10)}")
    tokens.append(f"n:{min(inlinks, 3)}")
    return tokens


_INDEX: dict[str, int] = {}  # token -> column, remembered (tokens repeat: a dict get, not a hash)
_INDEX_MAX = 1 << 20


def _index(token: str) -> int:
    """The column of ``token``: what scikit-learn's FeatureHasher gives it (alternate_sign off)."""
    column = _INDEX.get(token)
    if column is None:
        if len(_INDEX) >= _INDEX_MAX:
            _INDEX.clear()
        from sklearn.utils import murmurhash3_32

        column = _INDEX[token] = int(abs(murmurhash3_32(token, seed=0))) % N_FEATURES
    return column


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why the model gave a link its score: its version and its strongest tokens."""

    version: int
    score: float
    top: tuple[tuple[str, float], ...]

    def text(self) -> str:
        terms = ", ".join(f"{t} {w:+.2f}" for t, w in self.top)
        return f"online link model v{self.version}: {self.score:+.3f} ({terms})"


@dataclass(frozen=True)
class LinkModelState:
    """The model in the resume state: its version and counts, and once it has learnt
    (``coef`` not None) its float32 weights (zlib, base64), intercept and step count."""

    version: int = 0
    examples: int = 0
    positives: int = 0
    coef: str | None = None
    intercept: float = 0.0
    t: float = 1.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "examples": self.examples, "positives": self.positives}
        if self.coef is not None:
            out.update(coef=self.coef, intercept=self.intercept, t=self.t)
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        coef = raw.get("coef")
        return cls(
            version=int(raw.get("version", 0)), examples=int(raw.get("examples", 0)),
            positives=int(raw.get("positives", 0)), coef=coef if isinstance(coef, str) else None,
            intercept=float(raw.get("intercept", 0.0)), t=float(raw.get("t", 1.0)),
        )  # fmt: skip


class OnlineLinkModel:
    """A linear link scorer updated from the crawl's own judgements (see the module doc)."""

    def __init__(self, seed: int = 0, alpha: float = 1e-4, eta0: float = ETA0) -> None:
        from sklearn.linear_model import SGDRegressor

        self._sgd = SGDRegressor(
            alpha=alpha, random_state=seed, learning_rate="invscaling", eta0=eta0
        )
        self.version = 0  # updates so far
        self.examples = 0  # examples learnt from
        self.positives = 0  # of them with a reward of at least 0.5
        self._encoded: tuple[int, str] | None = None  # (version, its weights encoded)

    @property
    def ready(self) -> bool:
        return self.version > 0

    @staticmethod
    def columns(tokens: Sequence[str]) -> np.ndarray:
        """A link's hashed columns (what :meth:`update` and :meth:`score` take): kept per
        queued URL, so a rescore builds its matrix without hashing again."""
        return np.fromiter(map(_index, tokens), dtype=np.int32, count=len(tokens))

    @staticmethod
    def _matrix(rows: Sequence[np.ndarray]) -> sparse.csr_matrix:
        """The rows as FeatureHasher would give them (a token's count in its column)."""
        from scipy import sparse

        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.concatenate(rows) if len(rows) else np.zeros(0, dtype=np.int32)
        data = np.ones(len(indices), dtype=np.float64)
        matrix = sparse.csr_matrix((data, indices, indptr), shape=(len(rows), N_FEATURES))
        matrix.sum_duplicates()
        return matrix

    def update(
        self,
        rows: Sequence[np.ndarray],
        rewards: Sequence[float],
        positives: int | None = None,
        epochs: int = 1,
    ) -> None:
        """``epochs`` ``partial_fit`` passes over new examples (in their order:
        reproducible); the weights are then rounded to float32, what the resume state
        holds exactly. ``positives``: how many of the examples are positive (default:
        rewards >= 0.5; a learner fitting corrections to a prior says it itself)."""
        if not len(rows):
            return
        matrix, targets = self._matrix(rows), np.asarray(rewards, dtype=np.float64)
        for _ in range(epochs):
            self._sgd.partial_fit(matrix, targets)
        self._sgd.coef_ = self._sgd.coef_.astype(np.float32).astype(np.float64)
        self.version += 1
        self.examples += len(rows)
        if positives is None:
            positives = sum(1 for r in rewards if r >= _POSITIVE)
        self.positives += positives

    def predict(self, rows: Sequence[np.ndarray]) -> list[float]:
        """The regression's predictions, unclipped (0 for every row before the first update)."""
        if not len(rows):
            return []
        if not self.ready:
            return [0.0] * len(rows)
        return [float(x) for x in self._sgd.predict(self._matrix(rows))]

    def score(self, rows: Sequence[np.ndarray]) -> list[float]:
        """Predicted rewards clipped to [0, 1]."""
        return [min(1.0, max(0.0, x)) for x in self.predict(rows)]

    def explain(
        self, tokens: Iterable[str], score: float | None = None, top: int = 3
    ) -> Explanation:
        """The score of one link (``score`` if already known) and its ``top`` tokens by
        weight (what ``why`` shows): a few weight look-ups, no prediction."""
        tokens = list(dict.fromkeys(tokens))
        if score is None:
            score = self.predict([self.columns(tokens)])[0]
        if not self.ready:
            return Explanation(self.version, score, ())
        coef = self._sgd.coef_
        weights = sorted(((t, float(coef[_index(t)])) for t in tokens), key=lambda tw: -abs(tw[1]))
        return Explanation(self.version, score, tuple(weights[:top]))

    # ------------------------------------------------------------------ state
    def state(self) -> LinkModelState:
        """The float32 weights, zlib, base64 (a few KB to some tens of KB: the columns
        no example touched are zeros), encoded once per version."""
        if not self.ready:
            return LinkModelState(self.version, self.examples, self.positives)
        if self._encoded is None or self._encoded[0] != self.version:
            raw = np.asarray(self._sgd.coef_, dtype=np.float32).tobytes()
            blob = base64.b64encode(zlib.compress(raw, 6)).decode("ascii")
            self._encoded = (self.version, blob)
        return LinkModelState(
            self.version, self.examples, self.positives, coef=self._encoded[1],
            intercept=float(self._sgd.intercept_[0]), t=float(self._sgd.t_),
        )  # fmt: skip

    def load(self, state: LinkModelState) -> None:
        self.version = state.version
        self.examples = state.examples
        self.positives = state.positives
        if state.coef is not None:
            raw = zlib.decompress(base64.b64decode(state.coef))
            weights = np.frombuffer(raw, dtype=np.float32).astype(np.float64)
            # a fitted SGDRegressor from saved weights: one empty-effect fit sets its shapes
            self._sgd.partial_fit(self._matrix([np.zeros(0, dtype=np.int32)]), np.zeros(1))
            self._sgd.coef_ = weights
            self._sgd.intercept_ = np.asarray([state.intercept])
            self._sgd.t_ = state.t
            self._encoded = (self.version, state.coef)
