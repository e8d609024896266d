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
import re
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from focuscrawl.api import crawl
from focuscrawl.evaluation.aggregate import SCALARS, evaluate_all, summarise
from focuscrawl.evaluation.experiment_file import (
    Experiment,
    StrategySpec,
    check_strategy_topics,
    job_settings,
    run_dir_for,
)
from focuscrawl.evaluation.hubweb import cached_hub_web
from focuscrawl.evaluation.report import write_report
from focuscrawl.evaluation.table import summary_table
from focuscrawl.evaluation.topics import Topic, cached_topics, train_topic_models
from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.base import absolute_model_table
from focuscrawl.replay.archive import iter_responses
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.strategies.oracle import write_graph
from focuscrawl.urls import normalize_url


def _resolve_model(exp: Experiment, spec: StrategySpec, model_dir: Path | None) -> Any:
    """A strategy's model: the topic's classifier, or a table with paths made absolute."""
    if spec.model == "topic":
        if model_dir is None:
            raise ConfigError(f"strategy {spec.label}: model 'topic' needs a [topics] set")
        return {"name": "classifier", "model_dir": str(model_dir)}
    if isinstance(spec.model, Mapping):
        return absolute_model_table(spec.model, exp.path.parent)
    return spec.model


def run_one(
    exp: Experiment, spec: StrategySpec, topic: Topic, rep: int, run_dir: Path,
    model_dir: Path | None, proxy: str | None, proxy_ca: Path | None = None,
) -> float:  # fmt: skip
    """One crawl (skipped when a finished one is there); returns its wall time in seconds."""
    settings = job_settings(exp, spec, topic, rep)
    if spec.strategy == "oracle":  # the ceiling reads the answers: the labels and the web's links
        settings["strategy_params"] = {**oracle_params(exp, topic), **settings.get("strategy_params", {})}
    model = _resolve_model(exp, spec, model_dir)
    # what makes this crawl: a finished crawl is reused only if all of it is the same
    job = json.dumps({
        "strategy": spec.strategy, "settings": settings, "model": model, "seeds": topic.seeds,
        "budget": exp.budget, "archives": [str(a) for a in exp.archives], "mode": exp.mode,
        "fetch": exp.fetch, "scope": exp.scope, "filters": spec.filters,
        "in_archive_only": exp.in_archive_only,
    }, sort_keys=True, default=str)  # fmt: skip
    # the stamp is written before the crawl: a crawl of this job killed mid-way (kill -9,
    # a reboot) is resumed where it stopped, which the ordered schedule makes the same
    # crawl as an uninterrupted one; one of other settings is crawled again from the start
    stamp = run_dir / "experiment-job.json"
    ours = stamp.is_file() and stamp.read_text(encoding="utf-8") == job
    state = _run_state(run_dir) if ours else None
    if state == "finished":
        return 0.0
    if run_dir.exists() and state != "started":
        shutil.rmtree(run_dir)  # made with other settings, or killed before it began
    run_dir.mkdir(parents=True, exist_ok=True)
    stamp.write_text(job, encoding="utf-8")
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
        resume=state == "started",
        # the reproducible schedule, live too (the same pages for the same seed; a
        # [crawl] schedule in the experiment file says otherwise)
        **{"schedule": "ordered", **settings},
    )  # fmt: skip
    return time.perf_counter() - started


def _run_state(run_dir: Path) -> str | None:
    """"finished", "started" (a run.json that says not finished: a crawl to resume), or
    None (no readable run.json: nothing to resume)."""
    try:
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict):
        return None
    return "finished" if info.get("finished") else "started"


def oracle_params(exp: Experiment, topic: Topic) -> dict[str, Any]:
    """The oracle's parameters: the experiment's labels, the topic's selector, and the
    archives' link graph (built once per experiment under ``OUT/oracle``)."""
    if exp.labels is None:
        raise ConfigError(f"{exp.path.name}: the oracle needs 'labels'")
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
        urls = sorted({normalize_url(r.url) or r.url for r in iter_responses(exp.archives)})
        exp._scope_regex = "^(?:" + "|".join(re.escape(u) for u in urls) + ")$"
    return exp._scope_regex


def prepare_web(exp: Experiment) -> None:
    """Build the experiment's ``[web]`` (cached) and crawl and judge on it."""
    if not exp.web:
        return
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
    check_strategy_topics(exp, names)
    return topics, models


def run_experiment_file(exp: Experiment, *, progress: bool = True, report_only: bool = False) -> str:
    """Run every crawl of ``exp`` (unless ``report_only``), then evaluate, summarise and report."""
    unknown = sorted(set(exp.compare) - set(SCALARS))
    if unknown:
        raise ConfigError(f"{exp.path.name}: compare: no metric {unknown[0]!r} (metrics: {', '.join(sorted(SCALARS))})")
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
    done = {(r["label"], r["topic"], r["rep"]) for r in runs}
    results["left_out"] = [str(run_dir_for(exp, s, t, rep)) for s, t, rep in jobs if (s.label, t.name, rep) not in done]
    results["seconds_total"] = time.perf_counter() - t0  # of this call
    results["crawl_seconds"] = sum(float(r.get("wall_seconds") or 0.0) for r in runs)
    (exp.out / "results.json").write_text(
        json.dumps(results, indent=1, ensure_ascii=False, allow_nan=False), encoding="utf-8"
    )
    write_report(exp, results, exp.out / "report.html")
    return summary_table(results) + f"\n-> {exp.out / 'results.json'}, {exp.out / 'report.html'}"


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
