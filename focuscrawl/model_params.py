"""Model parameters checked against what the model reads (issue 9, item 14).

A ``[model]`` table or ``--model-param`` key that the model never looks at would
be silently ignored (``treshold = 0.5``). Models declare no parameter list, but
``from_config`` reads each parameter it knows (``cfg.get("threshold", 0.5)``,
``"topic" in cfg``): the table is handed over in a mapping that notes every key
read, and a key given but never read is refused with the list of those read.
A model that lists the whole table (``cfg.items()``) checks it itself.

A saved model is loaded as it was trained: of the parameters, only ``threshold``
(part of every model) can be changed; any other is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.base import MODELS, RelevanceModel, build_model

# Keys that select the model rather than configure it.
_SELECTORS = ("name", "path")


class _ReadKeys(Mapping[str, Any]):
    """A read-only mapping that remembers which keys were asked for."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)
        self.read: set[str] = set()
        self.listed = False

    def __getitem__(self, key: str) -> Any:  # also what Mapping.get calls
        self.read.add(key)
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        self.listed = True  # keys(), items(), dict(...): the model sees every key
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def build_checked_model(cfg: Mapping[str, Any], base_dir: Path) -> RelevanceModel:
    """:func:`~focuscrawl.relevance.base.build_model`, refusing parameters the model ignores."""
    if "path" in cfg and "name" not in cfg:
        saved = build_model({"path": cfg["path"]}, base_dir)
        return apply_to_saved_model(saved, cfg, str(cfg["path"]))
    if "name" not in cfg:
        return build_model(cfg, base_dir)  # its own error: which names exist
    name = str(cfg["name"])
    params = _ReadKeys({k: v for k, v in cfg.items() if k != "name"})
    model: RelevanceModel = MODELS.get(name).from_config(params, base_dir)
    unknown = sorted(set(params) - params.read) if not params.listed else []
    if unknown:
        known = ", ".join(sorted(params.read)) or "none"
        raise ConfigError(f"{name} model: unknown parameter {unknown[0]!r} (known: {known})")
    return model


def apply_to_saved_model(model: RelevanceModel, params: Mapping[str, Any], where: str) -> RelevanceModel:
    """``threshold`` set on a loaded model; any other parameter refused (one line)."""
    rest = sorted(set(params) - {"threshold", *_SELECTORS})
    if rest:
        raise ConfigError(
            f"model parameter {rest[0]!r} cannot change the saved model {where} "
            f"(only threshold can; train a new model to change the rest)"
        )
    if "threshold" in params:
        value = params["threshold"]
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ConfigError(f"model parameter threshold = {value!r} is not a number")
        try:
            model.threshold = float(value)
        except ValueError:
            raise ConfigError(f"model parameter threshold = {value!r} is not a number") from None
    return model
