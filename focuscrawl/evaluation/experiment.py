"""``focuscrawl experiment EXP.toml``: strategies × topics × repetitions, judged independently.

An experiment file (paths relative to the file; see ``experiments/*.toml``)::

    name = "p1"
    archives = ["../../shared/testweb/wikispeedia.warc.gz"]
    labels = "../../shared/testweb/wikispeedia.labels.jsonl"
    budget = 1000            # URLs per crawl (crawl.max_pages)
    repetitions = 1          # crawl.seed = 0, 1, ...
    checkpoints = 20         # evenly spaced budget points of the curves
    curve_budget = 2000      # the curves end here instead of at the budget (P3's exhaustive crawls)
    mode = "simulate"        # or "live": through `focuscrawl replay` on 127.0.0.1
    compare = ["target_recall", "harvest_rate"]   # paired one-tailed t-tests at the budget
    [crawl]                  # settings every crawl shares, e.g. fetch_list_size = 50
    [topics]                 # a topic set drawn from the labels (evaluation.topics) ...
    n_topics = 10
    [[topic]]                # ... or topics given by hand
    name = "course"; seeds = ["http://..."]; relevant = ["type=course"]
    [[strategy]]
    label = "OTIE"; strategy = "otie"; model = "topic"   # the topic's classifier
    params = { a = 0.85 }    # strategy parameters; also crawl = {...}, filters = [...]

Each crawl goes to ``OUT/runs/<label>/<topic>/r<rep>``; a finished crawl is not run
again (delete it to redo it). Then :mod:`focuscrawl.evaluation.aggregate` summarises
and :mod:`focuscrawl.evaluation.report` writes ``results.json`` and ``report.html``.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.evaluation.topics import Topic, TopicSetSpec, cached_topics, train_topic_models
from focuscrawl.exceptions import ConfigError

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
    archives = [rel(a) for a in (raw.get("archives", []) if web else _req(raw, "archives", path.name))]
    for a in [*archives, *(rel(str(web[k])) for k in ("source", "labels") if k in web)]:
        if not a.is_file():
            raise ConfigError(f"{path.name}: archive {a} not found")
    labels = rel(raw["labels"]) if "labels" in raw else None
    strategies = []
    for i, s in enumerate(_req(raw, "strategy", path.name)):
        where = f"{path.name} [[strategy]] #{i + 1}"
        extra = set(s) - {"label", "strategy", "model", "params", "crawl", "filters", "topics"}
        if extra:
            raise ConfigError(f"{where}: unknown keys {', '.join(sorted(extra))}")
        strategies.append(StrategySpec(
            label=str(s.get("label", s.get("strategy"))), strategy=str(_req(s, "strategy", where)),
            model=s.get("model"), params=dict(s.get("params", {})), crawl=dict(s.get("crawl", {})),
            filters=s.get("filters"), topics=[str(t) for t in s.get("topics", [])],
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
        targets = [str(u) for u in t.get("targets", [])]
        if "targets_file" in t:
            targets += [u.strip() for u in rel(t["targets_file"]).read_text().split() if u.strip()]
        hand.append(Topic(
            name=str(_req(t, "name", where)), category=str(t.get("category", "")),
            relevant=[str(x) for x in _req(t, "relevant", where)],
            seeds=[str(x) for x in _req(t, "seeds", where)], targets=targets,
            strategy_params={str(k): dict(v) for k, v in t.get("strategy_params", {}).items()},
        ))  # fmt: skip
    if topic_spec is None and not hand:
        raise ConfigError(f"{path.name}: give [topics] or at least one [[topic]]")
    mode = str(raw.get("mode", "simulate"))
    if mode not in ("simulate", "live"):
        raise ConfigError(f"{path.name}: mode must be 'simulate' or 'live', not {mode!r}")
    out_dir = out or (rel(raw["output"]) if "output" in raw else Path("experiments-out") / name)
    return Experiment(
        path=path, name=name, title=str(raw.get("title", name)), out=Path(out_dir),
        archives=archives, labels=labels, budget=int(raw.get("budget", 1000)),
        repetitions=int(raw.get("repetitions", 1)), checkpoints=int(raw.get("checkpoints", 20)),
        mode=mode, compare=[str(c) for c in raw.get("compare", ["harvest_rate"])],
        crawl=dict(raw.get("crawl", {})), fetch=dict(raw.get("fetch", {})),
        scope=dict(raw.get("scope", {})), strategies=strategies, topic_spec=topic_spec,
        model_algorithm=algorithm, hand_topics=hand, answer=bool(raw.get("answer", False)),
        thresholds=[float(x) for x in raw.get("thresholds", [])],
        skip_unlabelled=bool(raw.get("skip_unlabelled", False)),
        lang_field=raw.get("lang_field"), target_langs=[str(x) for x in raw.get("target_langs", [])],
        perplexity=dict(raw.get("perplexity", {})), notes=str(raw.get("notes", "")),
        in_archive_only=bool(raw.get("in_archive_only", False)), web=web,
        harvest_judge=str(raw.get("harvest_judge", "")), curve_budget=int(raw.get("curve_budget", 0)),
    )  # fmt: skip


def _resolve_model(exp: Experiment, spec: StrategySpec, model_dir: Path | None) -> Any:
    """A strategy's model: the topic's classifier, or a table with paths made absolute."""
    if spec.model == "topic":
        if model_dir is None:
            raise ConfigError(f"strategy {spec.label}: model 'topic' needs a [topics] set")
        return {"name": "classifier", "model_dir": str(model_dir)}
    if isinstance(spec.model, Mapping):
        table = dict(spec.model)
        for key in ("archive", "labels", "model_dir", "pos_urls", "neg_urls", "texts", "path", "arpa"):
            if isinstance(table.get(key), str):
                table[key] = str(exp.resolve(table[key]))
        return table
    return spec.model


def run_one(
    exp: Experiment, spec: StrategySpec, topic: Topic, rep: int, run_dir: Path,
    model_dir: Path | None, proxy: str | None, proxy_ca: Path | None = None,
) -> float:  # fmt: skip
    """One crawl (skipped when a finished one is there); returns its wall time in seconds."""
    from focuscrawl.api import crawl

    settings = {**exp.crawl, **spec.crawl, "seed": rep}
    params = {**spec.params, **topic.strategy_params.get(spec.strategy, {})}
    if spec.strategy == "oracle":  # the ceiling reads the answers: the labels and the web's links
        params = {**oracle_params(exp, topic), **params}
    if params:
        settings["strategy_params"] = params
    model = _resolve_model(exp, spec, model_dir)
    # what makes this crawl: a finished crawl is reused only if all of it is the same
    job = json.dumps({
        "strategy": spec.strategy, "settings": settings, "model": model, "seeds": topic.seeds,
        "budget": exp.budget, "archives": [str(a) for a in exp.archives], "mode": exp.mode,
        "fetch": exp.fetch, "scope": exp.scope, "filters": spec.filters,
        "in_archive_only": exp.in_archive_only,
    }, sort_keys=True, default=str)  # fmt: skip
    info, stamp = run_dir / "run.json", run_dir / "experiment-job.json"
    if (
        info.is_file() and stamp.is_file() and stamp.read_text(encoding="utf-8") == job
        and json.loads(info.read_text(encoding="utf-8")).get("finished")
    ):  # fmt: skip
        return 0.0
    if run_dir.exists():
        shutil.rmtree(run_dir)  # unfinished, or made with other settings: crawl again
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    scope = dict(exp.scope)
    if exp.in_archive_only:
        scope["allow_regex"] = [*scope.get("allow_regex", []), archive_regex(exp)]
    started = time.perf_counter()
    crawl(
        topic.seeds, run_dir, strategy=spec.strategy, max_pages=exp.budget,
        model=model,
        archives=exp.archives if exp.mode == "simulate" else (),
        proxy=proxy, proxy_ca=proxy_ca, delay=0.0 if proxy else None,
        fetch=exp.fetch or None, scope=scope or None, filters=spec.filters,
        # the reproducible schedule, live too (the same pages for the same seed; a
        # [crawl] schedule in the experiment file says otherwise)
        **{"schedule": "ordered", **settings},
    )  # fmt: skip
    stamp.write_text(job, encoding="utf-8")
    return time.perf_counter() - started


def oracle_params(exp: Experiment, topic: Topic) -> dict[str, Any]:
    """The oracle's parameters: the experiment's labels, the topic's selector, and the
    archives' link graph (built once per experiment under ``OUT/oracle``)."""
    if exp.labels is None:
        raise ConfigError(f"{exp.path.name}: the oracle needs 'labels'")
    from focuscrawl.strategies.oracle import write_graph

    graph = exp.out / "oracle" / "graph.json"
    stamp = graph.with_name("graph-archives.json")
    key = json.dumps([str(a) for a in exp.archives])
    if not (graph.is_file() and stamp.is_file() and stamp.read_text(encoding="utf-8") == key):
        write_graph(exp.archives, graph)
        stamp.write_text(key, encoding="utf-8")
    return {"labels": str(exp.labels), "relevant": list(topic.relevant), "graph": str(graph)}


def archive_regex(exp: Experiment) -> str:
    """One regular expression matching exactly the URLs the archives hold (as normalised)."""
    if exp._scope_regex is None:
        import re

        from focuscrawl.replay.archive import iter_responses
        from focuscrawl.urls import normalize_url

        urls = sorted({normalize_url(r.url) or r.url for r in iter_responses(exp.archives)})
        exp._scope_regex = "^(?:" + "|".join(re.escape(u) for u in urls) + ")$"
    return exp._scope_regex


def prepare_web(exp: Experiment) -> None:
    """Build the experiment's ``[web]`` (cached) and crawl and judge on it."""
    if not exp.web:
        return
    from focuscrawl.evaluation.hubweb import cached_hub_web

    if exp.web.get("builder", "hub") != "hub":
        raise ConfigError(f"{exp.path.name} [web]: unknown builder {exp.web.get('builder')!r}")
    web, labels = cached_hub_web(exp.web, exp.path.parent, exp.out / "web")
    exp.archives = [web, *exp.archives]
    exp.labels = exp.labels or labels


def experiment_topics(exp: Experiment) -> tuple[list[Topic], dict[str, Path]]:
    """The topics (drawn and cached, or by hand) and each drawn topic's trained classifier."""
    topics = list(exp.hand_topics)
    models: dict[str, Path] = {}
    if exp.topic_spec is not None:
        drawn = cached_topics(exp.topic_spec, exp.out / "topics")
        needs_model = any(s.model == "topic" for s in exp.strategies)
        if needs_model:
            models = train_topic_models(
                drawn, exp.topic_spec.archive, exp.out / "topics", algorithm=exp.model_algorithm
            )
        topics = drawn + topics
    names = [t.name for t in topics]
    if len(set(names)) != len(names):
        raise ConfigError(f"{exp.path.name}: two topics share a name")
    return topics, models


def run_experiment_file(exp: Experiment, *, progress: bool = True, report_only: bool = False) -> str:
    """Run every crawl of ``exp`` (unless ``report_only``), then evaluate, summarise and report."""
    from focuscrawl.evaluation.aggregate import evaluate_all, summarise
    from focuscrawl.evaluation.report import write_report

    exp.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    prepare_web(exp)
    topics, models = experiment_topics(exp)
    jobs = [
        (s, t, rep) for s in exp.strategies for t in topics for rep in range(exp.repetitions)
        if not s.topics or t.name in s.topics
    ]  # fmt: skip
    timings: dict[str, float] = {}
    if not report_only:
        timings = _run_jobs(exp, jobs, models, progress)
    runs = evaluate_all(exp, jobs)
    for r in runs:
        r["wall_seconds"] = timings.get(r["run"], r.get("elapsed", 0.0))
    results = summarise(exp, topics, runs)
    results["seconds_total"] = time.perf_counter() - t0  # of this call
    results["crawl_seconds"] = sum(float(r.get("wall_seconds") or 0.0) for r in runs)
    (exp.out / "results.json").write_text(
        json.dumps(results, indent=1, ensure_ascii=False, allow_nan=False), encoding="utf-8"
    )
    write_report(exp, results, exp.out / "report.html")
    from focuscrawl.evaluation.aggregate import summary_table

    return summary_table(results) + f"\n-> {exp.out / 'results.json'}, {exp.out / 'report.html'}"


def run_dir_for(exp: Experiment, spec: StrategySpec, topic: Topic, rep: int) -> Path:
    return exp.out / "runs" / spec.label / topic.name / f"r{rep}"


def _run_jobs(
    exp: Experiment, jobs: list[tuple[StrategySpec, Topic, int]], models: dict[str, Path], progress: bool
) -> dict[str, float]:
    from contextlib import ExitStack

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    timings: dict[str, float] = {}
    with ExitStack() as stack:
        proxy, proxy_ca = None, None
        if exp.mode == "live":
            from focuscrawl.replay.process import ReplayProcess

            replay = stack.enter_context(ReplayProcess(list(exp.archives), log_path=exp.out / "replay.log"))
            proxy, proxy_ca = replay.proxy_url, replay.ca_cert_path
        bar = stack.enter_context(Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            disable=not progress, transient=False, console=Console(stderr=True),  # stdout: results only
        ))  # fmt: skip
        task = bar.add_task(exp.name, total=len(jobs))
        for spec, topic, rep in jobs:
            bar.update(task, description=f"{exp.name}: {spec.label} / {topic.name} / r{rep}")
            run_dir = run_dir_for(exp, spec, topic, rep)
            seconds = run_one(exp, spec, topic, rep, run_dir, models.get(topic.name), proxy, proxy_ca)
            if seconds:
                timings[str(run_dir)] = seconds
            if not progress:
                print(f"{exp.name}: {spec.label} / {topic.name} / r{rep} {seconds:.1f} s", file=sys.stderr)
            bar.advance(task)
    return timings
