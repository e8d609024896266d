"""An experiment's runs evaluated and summarised: mean ± standard error across topics
(repetitions of a topic averaged first), curves at the checkpoints, and P1's one-tailed
paired t-tests at the budget."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from focuscrawl.evaluation import crawl_metrics as cm
from focuscrawl.evaluation.experiment_file import Experiment, StrategySpec, run_dir_for
from focuscrawl.evaluation.perplexity import perplexity_curve, run_texts, split_heldout
from focuscrawl.evaluation.run import (
    LabelJudge,
    RunPages,
    checkpoints_for,
    compare_runs,
    evaluate_run,
    has_pages,
    read_run,
)
from focuscrawl.evaluation.share import share_of_the_way
from focuscrawl.evaluation.statistics import mean_se, paired_t_greater
from focuscrawl.evaluation.topics import Topic, train_topic_models
from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.base import judge, load_model
from focuscrawl.relevance.examples import iter_archive_pages
from focuscrawl.relevance.lm_text import read_texts
from focuscrawl.replay.archive import load_labels
from focuscrawl.settings import read_run_json

ALPHA = 0.05  # P1's significance level

# scalar metrics of a run: name -> how to read it from evaluate_run's result
SCALARS: dict[str, Callable[[Mapping[str, Any]], float | None]] = {
    "harvest_rate": lambda r: r["harvest_rate"],
    "harvest_rate_classifiers": lambda r: r.get("harvest_rate_classifiers"),
    "target_recall": lambda r: r.get("target_recall"),
    "pages": lambda r: r["pages"],
    "relevant": lambda r: r["relevant"],
    "external_share": lambda r: r["external"]["share"],
    "external_harvest_rate": lambda r: r["external"]["harvest_rate"],
    "domains": lambda r: r["domains"],
    "visited_per_relevant": lambda r: r["visited_per_relevant"],
    "precision": lambda r: r["answer"]["precision"] if "answer" in r else None,
    "recall": lambda r: r["answer"]["recall"] if "answer" in r else None,
    "f1": lambda r: r["answer"]["f1"] if "answer" in r else None,
    "f1_best": lambda r: r.get("f1_best"),
    "f1_heldout": lambda r: r.get("f1_heldout"),
    "wall_seconds": lambda r: r.get("wall_seconds"),
}


def evaluate_all(exp: Experiment, jobs: Sequence[tuple[StrategySpec, Topic, int]]) -> list[dict[str, Any]]:
    """Every run of ``jobs`` evaluated against the experiment's label file."""
    if exp.labels is None:
        raise ConfigError(f"{exp.path.name}: 'labels' is needed to judge the crawls")
    labels = load_labels(exp.labels)
    points = checkpoints_for(exp.curve_budget or exp.budget, exp.checkpoints)
    lang_of = None
    if exp.lang_field:
        field = exp.lang_field

        def lang_of(row: Mapping[str, Any]) -> str | None:
            value = labels.get(str(row.get("final_url") or row["url"]), {}).get(field)
            return str(value) if value else None

    out = []
    judges: dict[str, LabelJudge] = {}
    classifier_dirs: dict[str, Any] = {}
    verdicts: dict[str, dict[str, bool]] = {}  # topic -> URL -> the classifier judge's verdict
    if exp.harvest_judge:
        if exp.topic_spec is None:
            raise ConfigError(f"{exp.path.name}: harvest_judge needs a [topics] set")
        topic_list = list({t.name: t for _, t, _ in jobs}.values())
        classifier_dirs = train_topic_models(
            topic_list, exp.topic_spec.archive, exp.out / "topics", algorithm=exp.harvest_judge
        )  # fmt: skip
    for spec, topic, rep in jobs:
        run_dir = run_dir_for(exp, spec, topic, rep)
        if not has_pages(run_dir) or not crawled_to_the_end(run_dir):
            continue  # not crawled, or killed mid-way (report-only): its figures would mislead
        key = "\n".join(topic.relevant)
        judge = judges.setdefault(key, LabelJudge(labels, topic.relevant))
        r = evaluate_run(
            read_run(run_dir), judge, targets=topic.targets or None,
            answer=judge.answer_set() if exp.answer else None, checkpoints=points,
            skip_unlabelled=exp.skip_unlabelled, web_pages=len(labels), lang_of=lang_of,
            thresholds=exp.thresholds,
        )  # fmt: skip
        r.update(label=spec.label, topic=topic.name, rep=rep)
        if exp.perplexity:
            r["perplexity"] = _perplexity(exp, run_dir)
        if topic.name in classifier_dirs:
            seen = verdicts.setdefault(topic.name, {})
            curve = _classifier_harvest(classifier_dirs[topic.name], run_dir, seen)
            r["harvest_rate_classifiers"] = curve[-1] if curve else 0.0
            r["curves"]["harvest_rate_classifiers"] = [cm.value_at(curve, p) for p in points]
        out.append(r)
    return out


def crawled_to_the_end(run_dir: Path) -> bool:
    """Whether the crawl of ``run_dir`` ended (its budget spent or its frontier empty), as
    its run.json says: one killed mid-way has fewer pages than its budget."""
    try:
        return read_run_json(run_dir / "run.json").get("finished") is True
    except ConfigError:
        return False


def _classifier_harvest(model_dir: Any, run_dir: Any, seen: dict[str, bool]) -> list[float]:
    """The harvest rate judged by a trained classifier (P1: 2 of 3 classifiers) re-reading the
    run's corpus, after each URL of the budget; ``seen`` caches the verdicts of a topic's pages
    across its runs, and the run directory keeps its curve (``classifier-harvest.json``, for
    that model). A page the corpus lacks counts as not relevant."""
    cache = run_dir / "classifier-harvest.json"
    key = str(model_dir)
    if cache.is_file():
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("model") == key:
            return [float(v) for v in data["curve"]]
    rows = read_run(run_dir).rows
    pages = [RunPages.content_url(r) if RunPages.is_page(r) else None for r in rows]
    todo = {u for u in pages if u is not None and u not in seen}
    if todo:
        model = load_model(model_dir)
        for page in iter_archive_pages(run_dir / "corpus.warc.gz", todo, only_ok=True):
            seen[page.url] = judge(model, page)[1]
    got = hits = 0
    curve = []
    for u in pages:
        if u is not None:
            got += 1
            hits += seen.get(u, False)
        curve.append(hits / got if got else 0.0)
    cache.write_text(json.dumps({"model": key, "curve": curve}), encoding="utf-8")
    return curve


def _perplexity(exp: Experiment, run_dir: Any) -> list[dict[str, float | None]]:
    """P2's held-out perplexity curve of one run (cached in the run directory)."""
    cache = run_dir / "perplexity.json"
    cfg = exp.perplexity
    if cache.is_file():
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("config") == cfg:
            return list(data["points"])
    texts = list(read_texts(exp.resolve(str(cfg["train"])), field=str(cfg.get("field", "text"))))
    train, heldout = split_heldout(texts, float(cfg.get("heldout_share", 0.2)))
    points = perplexity_curve(
        train, run_texts(run_dir, boilerplate=bool(cfg.get("boilerplate", True))), heldout,
        every_tokens=int(cfg.get("every_tokens", 20000)), order=int(cfg.get("order", 3)),
        max_points=int(cfg.get("max_points", 12)),
    )  # fmt: skip
    clean = [{k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in p.items()} for p in points]
    cache.write_text(json.dumps({"config": cfg, "points": clean}), encoding="utf-8")
    return clean


def _by_topic(runs: Sequence[Mapping[str, Any]], label: str, read: Callable[[Mapping[str, Any]], Any]) -> dict[str, float]:
    """``{topic: value}`` of one strategy, repetitions averaged; runs without the value left out."""
    acc: dict[str, list[float]] = {}
    for r in runs:
        if r["label"] != label:
            continue
        v = read(r)
        if v is None:
            continue
        acc.setdefault(r["topic"], []).append(float(v))
    return {t: sum(vs) / len(vs) for t, vs in acc.items()}


def _mean_curve(per_topic: Mapping[str, Sequence[float]]) -> dict[str, list[float]]:
    cols = list(zip(*per_topic.values(), strict=True)) if per_topic else []
    stats = [mean_se(list(c)) for c in cols]
    return {"mean": [m for m, _ in stats], "se": [s for _, s in stats]}


def threshold_f1(runs: Sequence[dict[str, Any]]) -> None:
    """Each run's F1 at its own best threshold (P3's practice: chosen on the data it is
    reported on) and, honestly, at the threshold that is best on the strategy's *other*
    topics (mean F1 there; leave one topic out), set as ``f1_best``, ``f1_best_threshold``,
    ``f1_heldout`` and ``f1_heldout_threshold``.

    >>> rs = [{"label": "x", "topic": t, "f1_by_threshold": [
    ...     {"threshold": 0.2, "f1": a}, {"threshold": 0.4, "f1": b}]} for t, a, b in
    ...     (("u", 0.5, 0.1), ("v", 0.3, 0.2), ("w", 0.1, 0.6))]
    >>> threshold_f1(rs)
    >>> [(r["f1_best"], r["f1_heldout"], r["f1_heldout_threshold"]) for r in rs]
    [(0.5, 0.1, 0.4), (0.3, 0.2, 0.4), (0.6, 0.1, 0.2)]
    """
    by_label: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        if r.get("f1_by_threshold"):
            by_label.setdefault(r["label"], []).append(r)
    for mine in by_label.values():
        for r in mine:
            best = max(r["f1_by_threshold"], key=lambda x: x["f1"])
            r["f1_best"], r["f1_best_threshold"] = best["f1"], best["threshold"]
            others = [o for o in mine if o["topic"] != r["topic"]]
            if not others:
                continue
            means = {
                row["threshold"]: sum(o["f1_by_threshold"][i]["f1"] for o in others) / len(others)
                for i, row in enumerate(r["f1_by_threshold"])
            }  # fmt: skip
            t = max(means, key=lambda k: (means[k], -k))  # ties: the lower threshold
            r["f1_heldout_threshold"] = t
            r["f1_heldout"] = next(x["f1"] for x in r["f1_by_threshold"] if x["threshold"] == t)


def summarise(exp: Experiment, topics: Sequence[Topic], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """results.json: the runs, per-strategy means ± SE, curves, t-tests, overlaps."""
    threshold_f1(runs)
    labels = [s.label for s in exp.strategies]
    points = checkpoints_for(exp.curve_budget or exp.budget, exp.checkpoints)
    summary: dict[str, dict[str, Any]] = {}
    curves: dict[str, dict[str, Any]] = {}
    for label in labels:
        summary[label] = {}
        for metric, read in SCALARS.items():
            vals = _by_topic(runs, label, read)
            if vals:
                m, se = mean_se(list(vals.values()))
                summary[label][metric] = {"mean": m, "se": se, "n": len(vals)}
        curves[label] = {}
        for metric in ("harvest_rate", "target_recall", "harvest_rate_classifiers"):
            per_topic = _by_topic_curves(runs, label, _curve_reader(metric))
            if per_topic:
                curves[label][metric] = {"x": points, **_mean_curve(per_topic)}
        fvv = _by_topic_curves(runs, label, lambda r: _flat(r["curves"].get("found_vs_visited")))
        if fvv:
            mean = _mean_curve(fvv)["mean"]
            curves[label]["found_vs_visited"] = {"x": mean[0::2], "mean": mean[1::2]}
            # the same % of the answer set found, against the URLs crawled (for the shares)
            found = _mean_curve({t: v[1::2] for t, v in fvv.items()})
            curves[label]["relevant_found"] = {"x": points, **found}
        f1t = _by_topic_curves(runs, label, lambda r: [x["f1"] for x in r["f1_by_threshold"]] if "f1_by_threshold" in r else None)
        if f1t:
            curves[label]["f1_by_threshold"] = {"x": exp.thresholds, **_mean_curve(f1t)}
        summary[label]["harvest_by_layer"] = _mean_dict(runs, label, "harvest_by_layer")
        summary[label]["pages_by_layer"] = _mean_dict(runs, label, "pages_by_layer")
        summary[label]["languages"] = _mean_dict(runs, label, "languages")
    tests = []
    for metric in exp.compare:
        reader = SCALARS.get(metric)
        if reader is None:
            continue
        for a, b in combinations(labels, 2):
            va, vb = _by_topic(runs, a, reader), _by_topic(runs, b, reader)
            common = sorted(set(va) & set(vb))
            if len(common) < 2:
                continue
            xa, xb = [va[t] for t in common], [vb[t] for t in common]
            hi, lo, xh, xl = (a, b, xa, xb) if sum(xa) >= sum(xb) else (b, a, xb, xa)
            t, p = paired_t_greater(xh, xl)
            tests.append({
                "metric": metric, "better": hi, "worse": lo, "n": len(common),
                "t": t if math.isfinite(t) else None, "p": p, "significant": p < ALPHA,
            })  # fmt: skip
    share = share_of_the_way(exp, curves)
    for label, by_metric in share.get("labels", {}).items():
        for metric, values in by_metric.items():
            curves[label][f"{metric}_share"] = {"x": points, "mean": values}
    return {
        "share": share,
        "experiment": exp.name, "title": exp.title, "file": str(exp.path), "mode": exp.mode,
        "budget": exp.budget, "repetitions": exp.repetitions, "notes": exp.notes,
        "strategies": [{"label": s.label, "strategy": s.strategy, "params": s.params,
                        "model": s.model if not isinstance(s.model, dict) else s.model.get("name")}
                       for s in exp.strategies],
        "topics": [{"name": t.name, "category": t.category, "relevant": t.relevant,
                    "seeds": len(t.seeds), "targets": len(t.targets)} for t in topics],
        "summary": summary, "curves": curves, "tests": tests, "overlap": _overlaps(exp, runs),
        "runs": [{k: v for k, v in r.items() if k != "curves"} | {"curves": r["curves"]} for r in runs],
    }  # fmt: skip


def _curve_reader(metric: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: r["curves"].get(metric)


def _flat(points: Any) -> list[float] | None:
    return None if points is None else [v for p in points for v in p]


def _by_topic_curves(runs: Sequence[Mapping[str, Any]], label: str, read: Callable[[Mapping[str, Any]], Any]) -> dict[str, list[float]]:
    acc: dict[str, list[list[float]]] = {}
    for r in runs:
        if r["label"] == label and read(r) is not None:
            acc.setdefault(r["topic"], []).append([float(v) for v in read(r)])
    return {t: [sum(c) / len(c) for c in zip(*cs, strict=True)] for t, cs in acc.items()}


def _mean_dict(runs: Sequence[Mapping[str, Any]], label: str, key: str) -> dict[str, float]:
    """Mean over the runs of a strategy of a {name: value} result (absent names count 0)."""
    mine = [r[key] for r in runs if r["label"] == label]
    names = sorted({k for d in mine for k in d}, key=lambda k: (len(k), k))
    return {k: sum(float(d.get(k, 0.0)) for d in mine) / len(mine) for k in names} if mine else {}


def _overlaps(exp: Experiment, runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Page and domain overlap of every two strategies on the same topic and repetition (P0)."""
    from pathlib import Path

    by_key = {(r["label"], r["topic"], r["rep"]): r["run"] for r in runs}
    out = []
    for a, b in combinations([s.label for s in exp.strategies], 2):
        pages, doms = [], []
        for (label, topic, rep), path in by_key.items():
            other = by_key.get((b, topic, rep))
            if label != a or other is None:
                continue
            o = compare_runs(read_run(Path(path)), read_run(Path(other)))
            pages.append(o["pages"]["jaccard"])
            doms.append(o["domains"]["jaccard"])
        if pages:
            out.append({"a": a, "b": b, "page_jaccard": mean_se(pages)[0], "domain_jaccard": mean_se(doms)[0]})
    return out
