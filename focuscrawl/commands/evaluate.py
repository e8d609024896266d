"""``focuscrawl eval`` and ``focuscrawl experiment``: a run's metrics against an
independent judge, and strategies x topics x repetitions; both are
:mod:`focuscrawl.evaluation.cli`'s."""

from __future__ import annotations

from focuscrawl.commands import Command
from focuscrawl.evaluation import cli as eval_cli

EVAL = Command(
    "eval", "metrics of a run against an independent judge (labels)", eval_cli.add_eval_arguments, eval_cli.run_eval
)
EXPERIMENT = Command(
    "experiment",
    "strategies x topics x repetitions -> results + report",
    eval_cli.add_experiment_arguments,
    eval_cli.run_experiment,
)
