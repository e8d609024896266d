"""What a relevance model is (protocols), the model registry, and building, saving and loading models.

A model judges a page (``score``) or a short text such as a link context
(``score_text``); both return a number in [0, 1], higher = more relevant, and
``threshold`` turns it into the binary judgement the metrics use. That is
:class:`RelevanceModel`; a model may also be

* a :class:`PageJudge`: it decides relevance itself, in the pass that scores
  (a vote of classifiers), rather than by ``score >= threshold``;
* a :class:`TextScorer`: it scores many texts at once (the link contexts of a
  page), much faster than one ``score_text`` each;
* a :class:`TrainedModel`: it was learnt from pages, which ``model eval`` leaves out;
* a :class:`PerplexityScorer`: it judges by a language model's perplexity (P2's strategy needs one).

A model *class* (a :class:`ModelClass`, what the registry holds) declares its
parameters as ``Params``, a frozen dataclass (:mod:`focuscrawl.params`), and is
built from them by ``from_params`` or loaded from a saved directory by ``load``.
A ``[model]`` table names the class (``name``) and gives its parameters, or
names a saved model (``path``; only ``threshold`` can change it). Its ``topic``
key (any model) names a TOML file whose ``[model]`` table supplies the
parameters the table does not give. Relative paths (the ``Path`` fields) are
read from the file that gives them: the config file, or the topic file.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, get_args, get_origin, get_type_hints, runtime_checkable

from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.params import build_params, coerce
from focuscrawl.registry import Registry
from focuscrawl.settings import read_toml
from focuscrawl.types import Page


@runtime_checkable
class RelevanceModel(Protocol):
    """Every model: a page and text scorer with a decision threshold."""

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


@runtime_checkable
class PageJudge(Protocol):
    """A model that decides relevance itself, from the work that scores the page."""

    def judge(self, page: Page) -> tuple[float, bool]:
        """``(score(page), relevant)`` in one pass."""
        ...


@runtime_checkable
class TextScorer(Protocol):
    """A model that scores many texts at once (link contexts, anchors)."""

    def score_texts(self, texts: Sequence[str]) -> list[float]:
        """``[score_text(t) for t in texts]``, in one pass."""
        ...


@runtime_checkable
class LinkTextScorer(Protocol):
    """A model whose reading of a link depends on the page the link is on."""

    def score_link_contexts(self, page: Page) -> list[float]:
        """The relevance of each link of ``page`` by its context window (its anchor if
        it has none), read as text of that page."""
        ...


@runtime_checkable
class TrainedModel(Protocol):
    """A model learnt from pages: their URLs are saved with it (``train-urls.txt``)."""

    train_urls: list[str]


@runtime_checkable
class PerplexityScorer(Protocol):
    """A model that judges by perplexity (P2): a page's PP, the score it maps PP to
    (1 − ln PP / ln ``reference_perplexity``) and the bounds it holds for P2's buckets."""

    reference_perplexity: float
    bucket_perplexities: tuple[float, float]  # upper bounds of HIGH and MEDIUM
    discard_perplexity: float  # a page above it has its links dropped

    @property
    def calibrated(self) -> bool:
        """The bounds come from held-out domain texts (not P2's fixed numbers)."""
        ...

    def perplexity(self, page: Page | str, include_oov: bool | None = None) -> float:
        """PP of a page (boilerplate removed) or a text; inf when it holds no words."""
        ...

    def pp_to_score(self, pp: float) -> float:
        """The score of a page of perplexity ``pp``."""
        ...


class ModelClass(Protocol):
    """What the model registry holds: a model class with typed parameters."""

    name: str
    #: the parameters of a ``[model]`` table, a frozen dataclass
    Params: type[Any]

    def from_params(self, params: Any) -> RelevanceModel:
        """A model from its parameters (relative paths already resolved)."""
        ...

    def load(self, directory: Path) -> RelevanceModel:
        """A model saved by its ``save``."""
        ...


MODELS: Registry[ModelClass] = Registry(
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
    """The model's score of a page and its binary judgement: its own (a :class:`PageJudge`),
    else score >= threshold."""
    if isinstance(model, PageJudge):
        own_score, own_relevant = model.judge(page)
        return float(own_score), bool(own_relevant)
    score = float(model.score(page))
    return score, score >= model.threshold


def model_params(cls: ModelClass, values: Mapping[str, Any], base_dir: Path) -> Any:
    """``cls.Params`` from a table's values (one-line ConfigError for a bad one), its
    relative paths read from ``base_dir``, a ``topic`` file's [model] table below them."""
    values = dict(values)
    topic = values.pop("topic", None)
    resolved = _resolve_paths(cls.Params, values, base_dir)
    if topic is not None:
        path = _resolve(base_dir, topic)
        table = topic_table(path, cls.name)
        resolved = {**_resolve_paths(cls.Params, table, path.parent), **resolved}
    return build_params(f"{cls.name} model", cls.Params, resolved)


def topic_table(path: Path, name: str) -> dict[str, Any]:
    """The ``[model]`` table of a topic file, without ``name`` (which must be ``name``)."""
    table = read_toml(path).get("model")
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: no [model] table")
    if table.get("name", name) != name:
        raise ConfigError(f"{path}: [model] name is {table['name']!r}, not {name!r}")
    return {k: v for k, v in table.items() if k != "name"}


def _resolve(base_dir: Path, value: Any) -> Path:
    path = Path(str(value))
    return path if path.is_absolute() else base_dir / path


def _resolve_paths(params: type[Any], values: Mapping[str, Any], base_dir: Path) -> dict[str, Any]:
    """``values`` with those of the ``Path`` fields of ``params`` (``Path``, ``Path | None``,
    ``tuple[Path, ...]``) read from ``base_dir``; a single path given for a tuple is one item."""
    hints = get_type_hints(params)
    out = dict(values)
    for f in dataclasses.fields(params):
        value = out.get(f.name)
        if value is None or value == "":
            continue
        kinds = [hints[f.name], *get_args(hints[f.name])]
        if any(get_origin(k) is tuple and get_args(k)[:1] == (Path,) for k in kinds):
            items = [value] if isinstance(value, str | Path) else value
            if isinstance(items, list | tuple):
                out[f.name] = [_resolve(base_dir, v) if isinstance(v, str | Path) else v for v in items]
        elif Path in kinds and isinstance(value, str | Path):
            out[f.name] = _resolve(base_dir, value)
    return out


def build_model(cfg: Mapping[str, Any], base_dir: Path | None = None) -> RelevanceModel:
    """A model from a ``[model]`` table: ``{"name": ..., <params>}``, or ``{"path": saved
    directory}`` (with at most ``threshold`` changed). A bad table: one-line ConfigError."""
    base = base_dir or Path(".")
    values = dict(cfg)
    if "path" in values and "name" not in values:
        path = _resolve(base, values.pop("path"))
        return set_saved_params(load_model(path), values, str(path))
    if "name" not in values:
        raise ModelError("model config needs 'name' (one of: " + ", ".join(MODELS.names()) + ")")
    cls = MODELS.get(str(values.pop("name")))
    return cls.from_params(model_params(cls, values, base))


def model_files(cfg: Mapping[str, Any], base_dir: Path | None = None) -> list[Path]:
    """The files and directories :func:`build_model` reads for the table ``cfg``: a saved
    model's directory, a topic file, the ``Path`` parameters (a topic file's too)."""
    base = base_dir or Path(".")
    values = dict(cfg)
    if "path" in values and "name" not in values:
        return [_resolve(base, values["path"])]
    if "name" not in values:
        return []
    cls = MODELS.get(str(values.pop("name")))
    found: list[Path] = []
    topic = values.pop("topic", None)
    resolved = _resolve_paths(cls.Params, values, base)
    if topic is not None:
        path = _resolve(base, topic)
        found.append(path)
        resolved = {**_resolve_paths(cls.Params, topic_table(path, cls.name), path.parent), **resolved}
    for value in resolved.values():
        items = value if isinstance(value, list | tuple) else [value]
        found += [v for v in items if isinstance(v, Path)]
    return found


def absolute_model_table(cfg: Mapping[str, Any], base_dir: Path) -> dict[str, Any]:
    """``cfg`` with every path it names read from ``base_dir`` and made absolute (as text):
    a saved model's ``path``, a ``topic`` file and the model's ``Path`` parameters; a table
    handed to a crawl elsewhere (an experiment's) then reads the same files."""
    table = dict(cfg)
    for key in ("path", "topic"):
        if isinstance(table.get(key), str | Path):
            table[key] = str((base_dir / str(table[key])).resolve())
    name = table.get("name")
    if not isinstance(name, str):
        return table
    for key, value in _resolve_paths(MODELS.get(name).Params, table, base_dir).items():
        items = [str(v.resolve()) if isinstance(v, Path) else v for v in value] if isinstance(value, list) else None
        if isinstance(value, Path):
            table[key] = str(value.resolve())
        elif items is not None:  # as it was given: one path, or a list of them
            table[key] = items if isinstance(table[key], list | tuple) else items[0]
    return table


def check_model_table(cfg: Mapping[str, Any], base_dir: Path) -> None:
    """What :func:`build_model` would refuse in ``cfg``, found without building (training,
    reading a corpus) the model: an unknown model or parameter, a value of the wrong type,
    a file that is not there, a saved model that is not one. One-line ConfigError."""
    values = dict(cfg)
    try:
        if "path" in values and "name" not in values:
            path = _resolve(base_dir, values.pop("path"))
            info_path = path / MODEL_INFO
            if not info_path.is_file():
                raise ConfigError(f"{path}: not a saved model (no {MODEL_INFO})")
            MODELS.get(str(json.loads(info_path.read_text(encoding="utf-8")).get("model")))
            saved_threshold(values, str(path))
            return
        if "name" not in values:
            raise ConfigError("model config needs 'name' (one of: " + ", ".join(MODELS.names()) + ")")
        cls = MODELS.get(str(values.pop("name")))
        model_params(cls, values, base_dir)
        for file in model_files(cfg, base_dir):
            if not file.exists():
                raise ConfigError(f"{cls.name} model: {file} not found")
    except (ModelError, OSError, ValueError, AttributeError) as exc:
        raise ConfigError(str(exc)) from None


def set_saved_params(model: RelevanceModel, params: Mapping[str, Any], where: str) -> RelevanceModel:
    """``threshold`` set on a loaded model; any other parameter refused (one line): a saved
    model is used as it was trained."""
    threshold = saved_threshold(params, where)
    if threshold is not None:
        model.threshold = threshold
    return model


def saved_threshold(params: Mapping[str, Any], where: str) -> float | None:
    """The ``threshold`` a table gives a saved model (None: none); any other parameter is
    refused (one line)."""
    rest = sorted(set(params) - {"threshold", "name", "path"})
    if rest:
        raise ConfigError(
            f"model parameter {rest[0]!r} cannot change the saved model {where} "
            f"(only threshold can; train a new model to change the rest)"
        )
    if "threshold" not in params:
        return None
    try:
        return float(coerce("threshold", params["threshold"], float))
    except ValueError as exc:
        raise ConfigError(f"saved model {where}: {exc}") from None


def save_model(model: RelevanceModel, directory: Path) -> None:
    """Save ``model`` in ``directory`` with a ``model.json`` naming its class."""
    directory.mkdir(parents=True, exist_ok=True)
    model.save(directory)
    if isinstance(model, TrainedModel) and model.train_urls:
        text = "".join(f"{u}\n" for u in model.train_urls)
        (directory / TRAIN_URLS).write_text(text, encoding="utf-8")
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
    model = cls.load(Path(directory))
    if "threshold" in info:
        model.threshold = float(info["threshold"])
    return model
