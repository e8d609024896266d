"""An experiment started over the API: ``focuscrawl experiment`` run by the server.

The body of ``POST /api/crawls`` with ``"kind": "experiment"`` holds the tables of an
experiment file in ``experiment`` (see :mod:`focuscrawl.evaluation.experiment`). Its
files (archives, labels, a generated web's source and labels, a topic's targets) are
paths inside the runs directory, nowhere else; its output is the crawl's run
directory (``output`` is the server's to choose). The tables are checked by the
experiment's own reader (:func:`~focuscrawl.evaluation.experiment_file.load_experiment`)
over the file the crawl will run from, so a mistake is a 400 before anything starts.
"""

from __future__ import annotations

import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from focuscrawl.evaluation.experiment_file import load_experiment
from focuscrawl.exceptions import ConfigError
from focuscrawl.service.specs import (
    CrawlSpec,
    RequestError,
    check_name,
    check_public,
    check_settings,
    toml_value,
)
from focuscrawl.strategies import STRATEGIES

EXPERIMENT_FILE = "experiment.toml"  # in the crawl's service directory
_FIELDS = frozenset({"name", "kind", "experiment"})


def _inside(value: Any, where: str, runs_dir: Path) -> str:
    """A file of the runs directory, as an absolute path (403 outside it)."""
    if not isinstance(value, str):
        raise RequestError(400, f"{where} must be a path in the runs directory", where)
    path = (runs_dir / value).resolve()
    if not path.is_relative_to(runs_dir.resolve()):
        raise RequestError(403, f"{where}: outside the runs directory", where)
    if not path.is_file():
        raise RequestError(400, f"{where}: no such file in the runs directory", where)
    return str(path)


def _files_inside(tables: dict[str, Any], runs_dir: Path) -> None:
    """The experiment's file names made absolute paths of the runs directory."""
    where = "experiment"
    archives = tables.get("archives", [])
    if not isinstance(archives, list):
        raise RequestError(400, f"{where}.archives must be a list of WARC files", f"{where}.archives")
    tables["archives"] = [_inside(a, f"{where}.archives[{i}]", runs_dir) for i, a in enumerate(archives)]
    if "labels" in tables:
        tables["labels"] = _inside(tables["labels"], f"{where}.labels", runs_dir)
    web = tables.get("web")
    if isinstance(web, Mapping):
        tables["web"] = {k: _inside(v, f"{where}.web.{k}", runs_dir) if k in ("source", "labels") else v
                         for k, v in web.items()}  # fmt: skip
    topics = tables.get("topic", [])
    if not isinstance(topics, list) or not all(isinstance(t, Mapping) for t in topics):
        raise RequestError(400, f"{where}.topic must be a list of tables", f"{where}.topic")
    tables["topic"] = [
        {k: _inside(v, f"{where}.topic[{i}].{k}", runs_dir) if k == "targets_file" else v for k, v in t.items()}
        for i, t in enumerate(topics)
    ]
    if not tables["topic"]:
        del tables["topic"]


def _check_tables(tables: Mapping[str, Any]) -> None:
    """The settings every crawl of the experiment shares, as the parameter system reads
    them (the strategy left to each [[strategy]])."""
    shared = {k: tables[k] for k in ("crawl", "fetch", "scope") if k in tables}
    for key, table in shared.items():
        if not isinstance(table, Mapping):
            raise RequestError(400, f"experiment.{key} must be a table", f"experiment.{key}")
    try:
        check_settings(shared)
    except RequestError as exc:
        exc.field = f"experiment.{exc.field.removeprefix('settings.')}" if exc.field else "experiment"
        exc.message = exc.message.replace("config: ", "experiment: ", 1)
        raise


def experiment_toml(tables: Mapping[str, Any]) -> str:
    """An experiment file of ``tables``: top-level values, then tables, then arrays of
    tables.

    >>> text = experiment_toml({"budget": 5, "crawl": {"top_n": 3}, "strategy": [{"strategy": "bfs"}]})
    >>> tomllib.loads(text)
    {'budget': 5, 'crawl': {'top_n': 3}, 'strategy': [{'strategy': 'bfs'}]}
    """

    def is_tables(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(t, Mapping) for t in v)

    lines = [f"{k} = {toml_value(v, k)}" for k, v in tables.items()
             if not isinstance(v, Mapping) and not is_tables(v)]  # fmt: skip
    for key, table in tables.items():
        if isinstance(table, Mapping):
            lines.append(f"[{key}]")
            lines.extend(f"{toml_value(str(k), key)} = {toml_value(v, f'{key}.{k}')}" for k, v in table.items())
    for key, items in tables.items():
        if is_tables(items):
            for table in items:
                lines.append(f"[[{key}]]")
                lines.extend(f"{toml_value(str(k), key)} = {toml_value(v, f'{key}.{k}')}" for k, v in table.items())
    return "\n".join(lines) + "\n"


def parse_experiment(body: Mapping[str, Any], *, runs_dir: Path, public_only: bool) -> CrawlSpec:
    """The checked spec of an experiment request (its files absolute paths), or
    :class:`RequestError` naming the field."""
    name = check_name(body.get("name"))
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise RequestError(400, f"unknown field {unknown[0]!r} for an experiment (known: "
                                f"{', '.join(sorted(_FIELDS))})", unknown[0])  # fmt: skip
    raw = body.get("experiment")
    if not isinstance(raw, Mapping) or not raw:
        raise RequestError(400, "experiment: give the experiment file's tables as an object", "experiment")
    tables = dict(raw)
    if "output" in tables:
        raise RequestError(400, "experiment.output: the server writes an experiment into its run "
                                "directory", "experiment.output")  # fmt: skip
    _files_inside(tables, runs_dir)
    if public_only:
        check_public({"fetch": tables.get("fetch") or {}, "crawl": tables.get("crawl") or {}})
    for key in ("budget", "repetitions", "checkpoints"):  # counts of crawls and points
        value = tables.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= 10**9:
            raise RequestError(400, f"experiment.{key} must be a whole number from 1", f"experiment.{key}")
    _check_tables(tables)
    strategies = tables.get("strategy")
    if not isinstance(strategies, list) or not all(isinstance(s, Mapping) for s in strategies):
        raise RequestError(400, "experiment.strategy must be a list of tables", "experiment.strategy")
    for i, s in enumerate(strategies):
        try:
            STRATEGIES.get(str(s.get("strategy")))
        except ConfigError as exc:
            where = f"experiment.strategy[{i}].strategy"
            raise RequestError(400, f"{where}: {exc}", where) from None
    text = experiment_toml(tables)
    if tomllib.loads(text) != tables:
        raise RequestError(400, "experiment: values TOML cannot hold", "experiment")
    with tempfile.TemporaryDirectory() as tmp:  # read as the crawl will read it
        path = Path(tmp) / EXPERIMENT_FILE
        path.write_text(text, encoding="utf-8")
        try:
            load_experiment(path, out=Path(tmp) / "out")
        except (ConfigError, ValueError, TypeError) as exc:
            raise RequestError(400, f"experiment: {str(exc).splitlines()[0][:300]}", "experiment") from None
    return CrawlSpec(name, "experiment", (), experiment=tables)
