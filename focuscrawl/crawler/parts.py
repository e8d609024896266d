"""The parts every crawl process builds from its settings, in one place: the one-machine
crawl (:func:`focuscrawl.api.open_crawl`), a shared crawl's coordinator
(:func:`focuscrawl.workers.shared.prepare_shared`) and each of its workers
(:func:`focuscrawl.workers.worker.open_worker`) build the model, the strategy and the
link filters from their settings by :func:`build_parts` (each used to spell the steps);
a resumed crawl's or a worker's settings come from run.json by :func:`saved_settings`."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.relevance.base import RelevanceModel, build_model
from focuscrawl.settings import SECTIONS, Settings, load_settings
from focuscrawl.strategies.base import STRATEGIES, Strategy
from focuscrawl.strategies.filters import LinkFilter, build_filters

__all__ = ["Parts", "build_parts", "make_model", "make_strategy", "model_table", "saved_settings"]


@dataclass
class Parts:
    """A crawl's model (None: no model), strategy, link filters, and the counters its
    fetcher and engine share (saved in run.json)."""

    model: RelevanceModel | None
    strategy: Strategy
    filters: list[LinkFilter]
    counters: Counter[str] = field(default_factory=Counter)


def build_parts(settings: Settings) -> Parts:
    """The parts of ``settings`` (a bad model, strategy parameter or filter: ConfigError,
    before anything is written)."""
    model = make_model(settings)
    strategy = make_strategy(settings, model)
    return Parts(model, strategy, build_filters(settings.filters, settings.base_dir))


def _merge_overrides(
    base: Mapping[str, Mapping[str, Any]], top: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    out = {k: dict(v) for k, v in base.items()}
    for section, values in top.items():
        out.setdefault(section, {}).update({k: v for k, v in values.items() if v is not None})
    return out


def model_table(spec: str | Path | Mapping[str, Any] | None, configured: Mapping[str, Any]) -> dict[str, Any]:
    """The ``[model]`` table a crawl uses and records in run.json: ``spec`` (a table, a saved
    model's directory or a model's name) with the configured table's parameters on top,
    or the configured table alone (``spec`` None; empty: no model)."""
    if spec is None:
        return dict(configured)
    if isinstance(spec, Mapping):
        return dict(spec)
    path = Path(spec)
    if path.is_dir():  # a saved model: the configured table may change its threshold only
        return {**{k: v for k, v in configured.items() if k != "name"}, "path": str(path.resolve())}
    if "/" in str(spec) or os.sep in str(spec) or path.exists():
        # a path, not a model name: 'unknown model' would send the user looking elsewhere
        what = "is not a directory" if path.exists() else "no such directory"
        raise ConfigError(f"model {str(spec)!r}: {what} (a saved model is made with "
                          f"`focuscrawl model train NAME ... --out {spec}`)")  # fmt: skip
    return {"name": str(spec), **configured}


def make_model(settings: Settings) -> RelevanceModel | None:
    """The model of the settings' ``[model]`` table (see :func:`model_table`; none if empty)."""
    try:
        return build_model(settings.model, settings.base_dir) if settings.model else None
    except ModelError as exc:
        raise ConfigError(str(exc)) from None


def make_strategy(settings: Settings, model: RelevanceModel | None) -> Strategy:
    """The strategy named in the settings with its typed parameters (bad ones: ConfigError)."""
    cls = STRATEGIES.get(settings.crawl.strategy)
    return cls(model, **dict(settings.crawl.strategy_params))


def saved_settings(
    saved: Mapping[str, Any],
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    config: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """A crawl's settings as its run.json saved them (``saved``: its ``settings``) with
    ``overrides`` on top: a resume, or a worker joining a shared crawl. The saved model
    stays unless the overrides name another; new parameters (--model-param) go on top."""
    merged = _merge_overrides({k: v for k, v in saved.items() if k in SECTIONS}, overrides or {})
    if saved.get("filters") and "filters" not in merged:
        merged["filters"] = saved["filters"]  # a list of tables
    settings = load_settings(config, merged, environ)
    if saved.get("model") and not {"name", "path"} & set(settings.model):
        table = {**saved["model"], **settings.model}
        settings = replace(settings, model=table, base_dir=Path(saved["base_dir"]))
    return settings
