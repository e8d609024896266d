"""``focuscrawl model``: train, score and evaluate relevance models. The model commands
import every model (scikit-learn, trafilatura...), so their parser is built only when
the command runs: :mod:`focuscrawl.relevance.cli` parses the rest of the command line."""

from __future__ import annotations

import argparse

from focuscrawl.commands import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    """None here: the model commands parse their own (``--help`` included)."""


def run(args: argparse.Namespace) -> int:
    from focuscrawl.relevance import cli as model_cli

    return model_cli.main(args.rest)


COMMAND = Command("model", "train, score and evaluate relevance models", add_arguments, run, own_parser=True)
