"""An experiment file read and checked: what to crawl, how often, and where each run goes.

The format is described in :mod:`focuscrawl.evaluation.experiment`, which runs an
experiment; :mod:`focuscrawl.evaluation.aggregate` reads the runs back.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.evaluation.topics import Topic, TopicSetSpec
from focuscrawl.exceptions import ConfigError
from focuscrawl.params import build_params
from focuscrawl.relevance.base import MODELS
from focuscrawl.strategies.base import STRATEGIES

_TOP_KEYS = {
    "name", "title", "archives", "labels", "budget", "repetitions", "checkpoints", "mode",
    "compare", "crawl", "topics", "topic", "strategy", "output", "answer", "thresholds",
    "skip_unlabelled", "lang_field", "perplexity", "notes", "fetch", "scope", "target_langs",
    "in_archive_only", "web", "harvest_judge", "curve_budget",
}  # fmt: skip


@dataclass
class StrategySpec:
    label: str
    strategy: str
    model: Any = None  # None, "topic" (the topic's classifier), a name, or a {name=...} table
    params: dict[str, Any] = field(default_factory=dict)
    crawl: dict[str, Any] = field(default_factory=dict)
    filters: list[dict[str, Any]] | None = None
    topics: list[str] = field(default_factory=list)  # only these topics (default: all)


@dataclass
class Experiment:
    path: Path
    name: str
    title: str
    out: Path
    archives: list[Path]
    labels: Path | None
    budget: int
    repetitions: int
    checkpoints: int
    mode: str
    compare: list[str]
    crawl: dict[str, Any]
    fetch: dict[str, Any]
    scope: dict[str, Any]
    strategies: list[StrategySpec]
    topic_spec: TopicSetSpec | None
    model_algorithm: str
    hand_topics: list[Topic]
    answer: bool = False
    thresholds: list[float] = field(default_factory=list)
    skip_unlabelled: bool = False
    lang_field: str | None = None
    target_langs: list[str] = field(default_factory=list)
    perplexity: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    in_archive_only: bool = False  # links to URLs the archives do not hold are out of scope
    web: dict[str, Any] = field(default_factory=dict)  # a web to build first (evaluation.hubweb)
    # a second harvest judge besides the labels: each topic's classifier of this algorithm
    # (P1: "majority", 2 of 3 classifiers) re-reading the crawled pages
    harvest_judge: str = ""
    curve_budget: int = 0  # the curves' x range when it is not the budget (0: the budget)
    _scope_regex: str | None = None

    def resolve(self, value: str) -> Path:
        return (self.path.parent / value).resolve()


def _req(table: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in table:
        raise ConfigError(f"{where}: missing {key!r}")
    return table[key]


def _whole(table: Mapping[str, Any], key: str, default: int, where: str, least: int) -> int:
    """``table[key]`` as a whole number of at least ``least`` (a string is not read as one)."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}: {key} must be a whole number, not {value!r}")
    if value < least:
        raise ConfigError(f"{where}: {key} = {value} must be >= {least}")
    return value


def _list(table: Mapping[str, Any], key: str, where: str, default: Any = ()) -> list[Any]:
    """``table[key]`` as a list: a string is not read letter by letter (seeds 'h', 't', ...)."""
    value = table.get(key, default)
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{where}: {key} must be a list ({key} = [...]), not {value!r}")
    return list(value)


def _check_strategy(spec: StrategySpec, topics: list[Topic], drawn: bool, where: str) -> None:
    """The strategy's and model's names and the strategy's parameters, before any crawl: a
    typo would otherwise end the experiment when its turn came, after the crawls before it.
    ``topics``: the topics by hand (each may add parameters); ``drawn``: topics drawn too
    (the strategy's own parameters alone). The oracle's parameters are the experiment's
    own (labels, the graph), given at its turn."""
    try:
        cls = STRATEGIES.get(spec.strategy)
        model = spec.model.get("name") if isinstance(spec.model, Mapping) else spec.model
        if model is not None and model != "topic":
            MODELS.get(str(model))
        if spec.strategy != "oracle":
            mine = [{**spec.params, **t.strategy_params.get(spec.strategy, {})} for t in topics]
            for params in mine + ([spec.params] if drawn or not topics else []):
                build_params(f"strategy {spec.strategy!r}", cls.Params, params)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def load_experiment(path: Path | str, *, out: Path | None = None) -> Experiment:
    """Read and check an experiment file; every mistake is one ConfigError line."""
    path = Path(path).resolve()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: bad TOML ({exc})") from None
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"{path.name}: unknown keys {', '.join(sorted(unknown))}")
    here = path.parent

    def rel(v: str) -> Path:
        return (here / v).resolve()

    name = str(raw.get("name", path.stem))
    web = dict(raw.get("web", {}))
    archives = [rel(str(a)) for a in _list(raw, "archives", path.name, [] if web else _req(raw, "archives", path.name))]
    for a in [*archives, *(rel(str(web[k])) for k in ("source", "labels") if k in web)]:
        if not a.is_file():
            raise ConfigError(f"{path.name}: archive {a} not found")
    labels = rel(raw["labels"]) if "labels" in raw else None
    strategies = []
    _req(raw, "strategy", path.name)
    for i, s in enumerate(_list(raw, "strategy", path.name)):
        where = f"{path.name} [[strategy]] #{i + 1}"
        if not isinstance(s, Mapping):
            raise ConfigError(f"{where}: must be a table ([[strategy]])")
        extra = set(s) - {"label", "strategy", "model", "params", "crawl", "filters", "topics"}
        if extra:
            raise ConfigError(f"{where}: unknown keys {', '.join(sorted(extra))}")
        strategies.append(StrategySpec(
            label=str(s.get("label", s.get("strategy"))), strategy=str(_req(s, "strategy", where)),
            model=s.get("model"), params=dict(s.get("params", {})), crawl=dict(s.get("crawl", {})),
            filters=s.get("filters"), topics=[str(t) for t in _list(s, "topics", where)],
        ))  # fmt: skip
    labels_seen = [s.label for s in strategies]
    if len(set(labels_seen)) != len(labels_seen):
        raise ConfigError(f"{path.name}: two strategies share a label")
    topic_spec = None
    algorithm = "svm-linear"
    if "topics" in raw:
        t = dict(raw["topics"])
        algorithm = str(t.pop("model", algorithm))
        if labels is None:
            raise ConfigError(f"{path.name}: [topics] needs labels")
        t["include"] = tuple(t.get("include", ()))
        try:
            topic_spec = TopicSetSpec(labels=str(labels), archive=str(archives[0]), **t)
        except TypeError as exc:
            raise ConfigError(f"{path.name} [topics]: {exc}") from None
    hand = []
    for i, t in enumerate(raw.get("topic", [])):
        where = f"{path.name} [[topic]] #{i + 1}"
        if not isinstance(t, Mapping):
            raise ConfigError(f"{where}: must be a table ([[topic]])")
        targets = [str(u) for u in _list(t, "targets", where)]
        if "targets_file" in t:
            targets += [u.strip() for u in rel(t["targets_file"]).read_text().split() if u.strip()]
        hand.append(Topic(
            name=str(_req(t, "name", where)), category=str(t.get("category", "")),
            relevant=[str(x) for x in _list(t, "relevant", where, _req(t, "relevant", where))],
            seeds=[str(x) for x in _list(t, "seeds", where, _req(t, "seeds", where))], targets=targets,
            strategy_params={str(k): dict(v) for k, v in t.get("strategy_params", {}).items()},
        ))  # fmt: skip
    if topic_spec is None and not hand:
        raise ConfigError(f"{path.name}: give [topics] or at least one [[topic]]")
    for i, spec in enumerate(strategies):
        _check_strategy(spec, hand, topic_spec is not None, f"{path.name} [[strategy]] #{i + 1}")
    mode = str(raw.get("mode", "simulate"))
    if mode not in ("simulate", "live"):
        raise ConfigError(f"{path.name}: mode must be 'simulate' or 'live', not {mode!r}")
    thresholds = _list(raw, "thresholds", path.name)
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in thresholds):
        raise ConfigError(f"{path.name}: thresholds must be numbers, not {thresholds!r}")
    out_dir = out or (rel(raw["output"]) if "output" in raw else Path("experiments-out") / name)
    return Experiment(
        path=path, name=name, title=str(raw.get("title", name)), out=Path(out_dir),
        archives=archives, labels=labels, budget=_whole(raw, "budget", 1000, path.name, 1),
        repetitions=_whole(raw, "repetitions", 1, path.name, 1),
        checkpoints=_whole(raw, "checkpoints", 20, path.name, 1),
        mode=mode, compare=[str(c) for c in _list(raw, "compare", path.name, ["harvest_rate"])],
        crawl=dict(raw.get("crawl", {})), fetch=dict(raw.get("fetch", {})),
        scope=dict(raw.get("scope", {})), strategies=strategies, topic_spec=topic_spec,
        model_algorithm=algorithm, hand_topics=hand, answer=bool(raw.get("answer", False)),
        thresholds=[float(x) for x in thresholds],
        skip_unlabelled=bool(raw.get("skip_unlabelled", False)),
        lang_field=raw.get("lang_field"), target_langs=[str(x) for x in _list(raw, "target_langs", path.name)],
        perplexity=dict(raw.get("perplexity", {})), notes=str(raw.get("notes", "")),
        in_archive_only=bool(raw.get("in_archive_only", False)), web=web,
        harvest_judge=str(raw.get("harvest_judge", "")), curve_budget=_whole(raw, "curve_budget", 0, path.name, 0),
    )  # fmt: skip


def run_dir_for(exp: Experiment, spec: StrategySpec, topic: Topic, rep: int) -> Path:
    return exp.out / "runs" / spec.label / topic.name / f"r{rep}"
