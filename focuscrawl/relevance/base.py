"""The RelevanceModel protocol, the model registry, and saving/loading by name.

A model judges a page (``score``) or a short text such as a link context
(``score_text``); both return a number in [0, 1], higher = more relevant, and
``threshold`` turns it into the binary judgement the metrics use.

Every model class also provides (as classmethods):

* ``from_config(cfg: Mapping[str, Any], base_dir: Path) -> model`` — build from
  the ``[model]`` table of a topic TOML file (paths relative to ``base_dir``);
* ``load(directory: Path) -> model`` and the method ``save(directory: Path)``;
* optionally ``add_train_arguments(parser)`` / ``train_from_args(args) -> model``
  so that ``focuscrawl model train NAME ...`` can build it from the command line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from focuscrawl.exceptions import ModelError
from focuscrawl.registry import Registry
from focuscrawl.types import Page


@runtime_checkable
class RelevanceModel(Protocol):
    name: ClassVar[str]
    threshold: float

    def score(self, page: Page) -> float:
        """Relevance of a whole page in [0, 1]."""
        ...

    def score_text(self, text: str) -> float:
        """Relevance of a piece of text (anchor, link context) in [0, 1]."""
        ...

    def save(self, directory: Path) -> None:
        """Write everything needed by ``load`` into ``directory`` (created by the caller)."""
        ...


MODELS: Registry[Any] = Registry(
    "model",
    "focuscrawl.models",
    builtin_modules=tuple(
        f"focuscrawl.relevance.{m}"
        for m in ("keyword", "cosine", "classifier", "comments", "language", "ngram_lm")
    ),
)
register_model = MODELS.register

MODEL_INFO = "model.json"
TRAIN_URLS = "train-urls.txt"  # pages a model learned from: `model eval` leaves them out


def judge(model: RelevanceModel, page: Page) -> tuple[float, bool]:
    """The model's score of a page and its binary judgement.

    A model may provide ``judge(page) -> (score, relevant)`` to do both in one
    pass, or its own ``is_relevant(page)`` (e.g. a majority vote of classifiers);
    otherwise relevant means score >= threshold.
    """
    own = getattr(model, "judge", None)
    if callable(own):  # both at once, e.g. a classifier vote that shares the score's work
        own_score, own_relevant = own(page)
        return float(own_score), bool(own_relevant)
    score = float(model.score(page))
    decide = getattr(model, "is_relevant", None)
    if callable(decide):
        return score, bool(decide(page))
    return score, score >= model.threshold


def is_relevant(model: RelevanceModel, page: Page) -> bool:
    return judge(model, page)[1]


def build_model(cfg: Mapping[str, Any], base_dir: Path | None = None) -> RelevanceModel:
    """Build a model from a config table ``{"name": ..., <params>}`` or ``{"path": saved dir}``."""
    if "path" in cfg and "name" not in cfg:
        path = Path(str(cfg["path"]))
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        return load_model(path)
    if "name" not in cfg:
        raise ModelError("model config needs 'name' (one of: " + ", ".join(MODELS.names()) + ")")
    cls = MODELS.get(str(cfg["name"]))
    params = {k: v for k, v in cfg.items() if k != "name"}
    model: RelevanceModel = cls.from_config(params, base_dir or Path("."))
    return model


def save_model(model: RelevanceModel, directory: Path) -> None:
    """Save ``model`` in ``directory`` with a ``model.json`` naming its class."""
    directory.mkdir(parents=True, exist_ok=True)
    model.save(directory)
    train_urls = getattr(model, "train_urls", None)
    if train_urls:
        (directory / TRAIN_URLS).write_text("".join(f"{u}\n" for u in train_urls), encoding="utf-8")
    info_path = directory / MODEL_INFO
    info: dict[str, Any] = {}
    if info_path.exists():
        info = json.loads(info_path.read_text(encoding="utf-8"))
    info["model"] = model.name
    info["threshold"] = model.threshold
    info_path.write_text(json.dumps(info, indent=2, ensure_ascii=False), encoding="utf-8")


def load_model(directory: Path) -> RelevanceModel:
    """Load a model saved by :func:`save_model`."""
    info_path = Path(directory) / MODEL_INFO
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{directory}: not a saved model ({exc})") from None
    if not isinstance(info, dict) or not isinstance(info.get("model"), str):
        raise ModelError(f"{info_path}: no \"model\" (the model's name) in it; not a saved model")
    cls = MODELS.get(info["model"])
    model: RelevanceModel = cls.load(Path(directory))
    if "threshold" in info:
        model.threshold = float(info["threshold"])
    return model
