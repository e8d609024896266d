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
from focuscrawl.relevance.base import MODELS, check_model_table
from focuscrawl.settings import load_settings
from focuscrawl.strategies.base import STRATEGIES
from focuscrawl.strategies.filters import build_filters

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


def _table(table: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    """``table[key]`` as a table (``{}`` when absent): ``params = 3`` is one line, not a TypeError."""
    value = table.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {key} must be a table ({key} = {{...}} or [{key}]), not {value!r}")
    return dict(value)


def _flag(table: Mapping[str, Any], key: str, where: str) -> bool:
    """``table[key]`` as true or false (absent: false): ``answer = "no"`` is not read as true."""
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be true or false, not {value!r}")
    return value


def _text(table: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str | None:
    value = table.get(key, default)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: {key} must be a string, not {value!r}")
    return value


# the crawl's arguments an experiment gives itself: not [crawl] settings of its file
_SET_BY_EXPERIMENT = {
    "strategy": "[[strategy]] strategy", "max_pages": "budget", "model": "[[strategy]] model",
    "delay": "[fetch] delay", "proxy": "mode", "proxy_ca": "mode", "archives": "archives",
    "fetch": "[fetch]", "scope": "[scope]", "filters": "[[strategy]] filters", "config": "none",
    "resume": "none", "force": "none", "progress": "none",
}  # fmt: skip


def job_settings(exp: Experiment, spec: StrategySpec, topic: Topic, rep: int) -> dict[str, Any]:
    """The [crawl] settings of one crawl: the experiment's, the strategy's, the repetition's
    seed, and the strategy's parameters merged key by key, the more specific on top: the
    experiment's ``[crawl] strategy_params``, the strategy's ``crawl.strategy_params``, its
    ``params``, the topic's (the oracle's own, the labels and the graph, are added when it
    runs). A merge, as the [crawl] settings themselves are merged: a ``params`` of one
    strategy keeps what ``[crawl]`` gives every strategy instead of dropping it unsaid."""
    settings = {**exp.crawl, **spec.crawl, "seed": rep}
    params = {**_table(exp.crawl, "strategy_params", "[crawl]"),
              **_table(spec.crawl, "strategy_params", f"[[strategy]] {spec.label}: crawl"),
              **spec.params, **topic.strategy_params.get(spec.strategy, {})}  # fmt: skip
    if params:
        settings["strategy_params"] = params
    return settings


def _check_strategy(exp: Experiment, spec: StrategySpec, where: str) -> None:
    """Everything a crawl of ``spec`` would refuse, before any crawl: a typo would otherwise
    end the experiment when its turn came, after the crawls before it. The strategy's
    parameters with each topic's by hand (a drawn topic adds none), the model's table,
    the [crawl], [fetch] and [scope] settings and the link filters. The oracle's
    parameters are the experiment's own (labels, the graph), given at its turn."""
    try:
        cls = STRATEGIES.get(spec.strategy)
        if isinstance(spec.model, Mapping):
            check_model_table(spec.model, exp.path.parent)
        elif spec.model is not None and spec.model != "topic":
            MODELS.get(str(spec.model))
        blank = Topic(name="", category="", relevant=[], seeds=[])
        topics = exp.hand_topics + ([blank] if exp.topic_spec is not None or not exp.hand_topics else [])
        for topic in topics:
            settings = job_settings(exp, spec, topic, 0)
            taken = sorted(set(settings) & set(_SET_BY_EXPERIMENT))
            if taken:
                raise ConfigError(f"crawl: {taken[0]} is not a [crawl] setting here ({_SET_BY_EXPERIMENT[taken[0]]})")
            fetch = {**exp.fetch, **({"concurrency": settings.pop("concurrency")} if "concurrency" in settings else {})}
            if spec.strategy != "oracle":
                cls.make_params(settings.get("strategy_params", {}))
                settings.pop("strategy_params", None)
            overrides = {"crawl": {**settings, "strategy": spec.strategy, "max_pages": exp.budget},
                         "fetch": fetch, "scope": exp.scope}  # fmt: skip
            load_settings(None, overrides)
        build_filters(spec.filters or [], exp.path.parent)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def check_strategy_topics(exp: Experiment, names: list[str]) -> None:
    """Every topic a strategy is limited to (``topics = [...]``) is one of ``names``: a typo
    would leave the strategy with nothing to crawl, and the report without it."""
    for spec in exp.strategies:
        unknown = sorted(set(spec.topics) - set(names))
        if unknown:
            raise ConfigError(f"{exp.path.name}: strategy {spec.label!r}: no topic {unknown[0]!r} "
                              f"(topics: {', '.join(names)})")  # fmt: skip


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
    web = _table(raw, "web", path.name)
    archives = [rel(str(a)) for a in _list(raw, "archives", path.name, [] if web else _req(raw, "archives", path.name))]
    for a in [*archives, *(rel(str(web[k])) for k in ("source", "labels") if k in web)]:
        if not a.is_file():
            raise ConfigError(f"{path.name}: archive {a} not found")
    labels_file = _text(raw, "labels", path.name)
    labels = rel(labels_file) if labels_file is not None else None
    strategies = []
    _req(raw, "strategy", path.name)
    for i, s in enumerate(_list(raw, "strategy", path.name)):
        where = f"{path.name} [[strategy]] #{i + 1}"
        if not isinstance(s, Mapping):
            raise ConfigError(f"{where}: must be a table ([[strategy]])")
        extra = set(s) - {"label", "strategy", "model", "params", "crawl", "filters", "topics"}
        if extra:
            raise ConfigError(f"{where}: unknown keys {', '.join(sorted(extra))}")
        filters = _list(s, "filters", where) if "filters" in s else None
        if filters is not None and not all(isinstance(f, Mapping) for f in filters):
            raise ConfigError(f"{where}: filters must be tables (filters = [{{ name = ... }}]), not {filters!r}")
        # a filter's file (host-blacklist's) is read from this file's folder, as its other paths
        filters = None if filters is None else [
            {**f, "file": str(rel(f["file"]))} if isinstance(f.get("file"), str) and f["file"] else dict(f)
            for f in filters
        ]  # fmt: skip
        label = s.get("label", s.get("strategy"))
        if not isinstance(label, str) or not label or label in (".", "..") or "/" in label:
            raise ConfigError(f"{where}: label must be a name (the folder of its runs), not {label!r}")
        strategies.append(StrategySpec(
            label=label, strategy=str(_req(s, "strategy", where)),
            model=s.get("model"), params=_table(s, "params", where), crawl=_table(s, "crawl", where),
            filters=filters, topics=[str(t) for t in _list(s, "topics", where)],
        ))  # fmt: skip
    if not strategies:
        raise ConfigError(f"{path.name}: no strategy to run (give at least one [[strategy]])")
    labels_seen = [s.label for s in strategies]
    if len(set(labels_seen)) != len(labels_seen):
        raise ConfigError(f"{path.name}: two strategies share a label")
    topic_spec = None
    algorithm = "svm-linear"
    if "topics" in raw:
        t = _table(raw, "topics", path.name)
        algorithm = _text(t, "model", f"{path.name} [topics]", algorithm) or algorithm
        t.pop("model", None)
        if labels is None:
            raise ConfigError(f"{path.name}: [topics] needs labels")
        given = sorted({"labels", "archive"} & set(t))
        if given:
            raise ConfigError(f"{path.name} [topics]: {given[0]} is the experiment's own (its labels, "
                              "its first archive), not a [topics] key")  # fmt: skip
        if isinstance(t.get("include"), str):  # one category, not its letters
            t["include"] = [t["include"]]
        # typed as every parameter is: include = 3 or seed = "x" is one line, not a traceback
        topic_spec = build_params(f"{path.name} [topics]", TopicSetSpec,
                                  {**t, "labels": str(labels), "archive": str(archives[0])})  # fmt: skip
    hand = []
    for i, t in enumerate(_list(raw, "topic", path.name)):
        where = f"{path.name} [[topic]] #{i + 1}"
        if not isinstance(t, Mapping):
            raise ConfigError(f"{where}: must be a table ([[topic]])")
        targets = [str(u) for u in _list(t, "targets", where)]
        if "targets_file" in t:
            try:
                targets += rel(str(t["targets_file"])).read_text(encoding="utf-8").split()
            except OSError as exc:
                raise ConfigError(f"{where}: targets_file {t['targets_file']!r}: {exc.strerror}") from None
        topic_params = _table(t, "strategy_params", where)
        if not all(isinstance(v, Mapping) for v in topic_params.values()):
            raise ConfigError(f"{where}: strategy_params must be tables by strategy "
                              f"(strategy_params = {{ otie = {{ a = 0.85 }} }}), not {topic_params!r}")  # fmt: skip
        topic_name = _req(t, "name", where)  # not ``name``: that is the experiment's
        if not isinstance(topic_name, str) or not topic_name or topic_name in (".", "..") or "/" in topic_name:
            raise ConfigError(f"{where}: name must be a name (the folder of its runs), not {topic_name!r}")
        hand.append(Topic(
            name=topic_name, category=str(t.get("category", "")),
            relevant=[str(x) for x in _list(t, "relevant", where, _req(t, "relevant", where))],
            seeds=[str(x) for x in _list(t, "seeds", where, _req(t, "seeds", where))], targets=targets,
            strategy_params={str(k): dict(v) for k, v in topic_params.items()},
        ))  # fmt: skip
    if topic_spec is None and not hand:
        raise ConfigError(f"{path.name}: give [topics] or at least one [[topic]]")
    mode = str(raw.get("mode", "simulate"))
    if mode not in ("simulate", "live"):
        raise ConfigError(f"{path.name}: mode must be 'simulate' or 'live', not {mode!r}")
    thresholds = _list(raw, "thresholds", path.name)
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in thresholds):
        raise ConfigError(f"{path.name}: thresholds must be numbers, not {thresholds!r}")
    output = _text(raw, "output", path.name)
    out_dir = out or (rel(output) if output is not None else Path("experiments-out") / name)
    exp = Experiment(
        path=path, name=name, title=str(raw.get("title", name)), out=Path(out_dir),
        archives=archives, labels=labels, budget=_whole(raw, "budget", 1000, path.name, 1),
        repetitions=_whole(raw, "repetitions", 1, path.name, 1),
        checkpoints=_whole(raw, "checkpoints", 20, path.name, 1),
        mode=mode, compare=[str(c) for c in _list(raw, "compare", path.name, ["harvest_rate"])],
        crawl=_table(raw, "crawl", path.name), fetch=_table(raw, "fetch", path.name),
        scope=_table(raw, "scope", path.name), strategies=strategies, topic_spec=topic_spec,
        model_algorithm=algorithm, hand_topics=hand, answer=_flag(raw, "answer", path.name),
        thresholds=[float(x) for x in thresholds],
        skip_unlabelled=_flag(raw, "skip_unlabelled", path.name),
        lang_field=_text(raw, "lang_field", path.name),
        target_langs=[str(x) for x in _list(raw, "target_langs", path.name)],
        perplexity=_table(raw, "perplexity", path.name), notes=str(raw.get("notes", "")),
        in_archive_only=_flag(raw, "in_archive_only", path.name), web=web,
        harvest_judge=_text(raw, "harvest_judge", path.name, "") or "",
        curve_budget=_whole(raw, "curve_budget", 0, path.name, 0),
    )  # fmt: skip
    for i, spec in enumerate(strategies):
        _check_strategy(exp, spec, f"{path.name} [[strategy]] #{i + 1}")
    if topic_spec is None:  # (drawn topics are named once drawn)
        check_strategy_topics(exp, [t.name for t in hand])
    return exp


def run_dir_for(exp: Experiment, spec: StrategySpec, topic: Topic, rep: int) -> Path:
    return exp.out / "runs" / spec.label / topic.name / f"r{rep}"
