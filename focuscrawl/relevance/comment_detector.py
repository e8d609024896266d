"""The learned comment detector: a logistic regression over :mod:`comment_features`.

    p(comment | page) = 1 / (1 + exp(-(b + Σ_f w_f (x_f - μ_f) / σ_f)))

and the page is a comment page when p >= ``threshold``. The weights, the
features' means and scales (of the pages it was learned on) and the threshold
are a small JSON file; :data:`SHIPPED` (``focuscrawl/data/comment_detector.json``)
was learned on the learn half of comments-dev's sites only, with the
regularisation and the threshold chosen by site-grouped cross-validation
inside that half (:mod:`focuscrawl.relevance.comment_training`). Scoring needs
no scikit-learn: a dot product per page.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.comment_features import FEATURES, comment_features
from focuscrawl.types import Page

__all__ = ["SHIPPED", "LearnedDetector"]

SHIPPED = Path(__file__).resolve().parents[1] / "data" / "comment_detector.json"


@dataclass(frozen=True)
class LearnedDetector:
    """Weights of the logistic regression, one per feature of :data:`FEATURES`."""

    weights: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float = 0.5
    features: tuple[str, ...] = FEATURES
    trained_on: str = ""  # what it was learned on (for the record)

    def __post_init__(self) -> None:
        if self.features != FEATURES:
            raise ModelError(
                f"comment detector: features {list(self.features)} are not this version's "
                f"{list(FEATURES)}: learn it again"
            )
        if not len(self.weights) == len(self.mean) == len(self.scale) == len(FEATURES):
            raise ModelError(f"comment detector: needs {len(FEATURES)} weights, means and scales")
        if any(not s > 0 for s in self.scale):
            raise ModelError("comment detector: every scale must be > 0")

    def probability(self, values: Sequence[float]) -> float:
        """p(comment) of a page's feature values."""
        z = self.intercept + sum(
            w * (x - m) / s for w, x, m, s in zip(self.weights, values, self.mean, self.scale, strict=True)
        )
        if z < -700:  # exp overflows; p is 0 to double precision
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))

    def score(self, page: Page, keywords: Sequence[str]) -> float:
        """p(comment | page); ``keywords``: P0's folded keywords (the ``keywords`` feature)."""
        return self.probability(comment_features(page, keywords))

    def save(self, path: Path) -> None:
        data = asdict(self)
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", "utf-8")

    @classmethod
    def load(cls, path: Path = SHIPPED) -> LearnedDetector:
        try:
            data = json.loads(path.read_text("utf-8"))
            return cls(
                tuple(float(w) for w in data["weights"]), float(data["intercept"]),
                tuple(float(m) for m in data["mean"]), tuple(float(s) for s in data["scale"]),
                float(data["threshold"]), tuple(str(f) for f in data["features"]),
                str(data.get("trained_on", "")),
            )  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"{path}: not a comment detector ({exc})") from None
