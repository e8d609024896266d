"""``focuscrawl model``: train, score and evaluate relevance models.

The model commands import every model (scikit-learn, trafilatura...), so their
parser is built only when the command runs: :mod:`.subcommands` parses the rest
of the command line. One module per family of subcommands:

* :mod:`.subcommands` — the parser, ``score`` and ``eval`` (any saved model);
* :mod:`.train` — ``train NAME``: each model's options and how they build it,
  and ``learn-comment-keywords``;
* :mod:`.cosine` — ``idf`` and ``generate-terms`` (the cosine model's tables);
* :mod:`.perplexity` — ``perplexity`` of files under an n-gram model.
"""

from __future__ import annotations

import argparse

from focuscrawl.commands import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    """None here: the model commands parse their own (``--help`` included)."""


def run(args: argparse.Namespace) -> int:
    from focuscrawl.commands.model.subcommands import main  # every model: only when run

    return main(args.rest)


COMMAND = Command("model", "train, score and evaluate relevance models", add_arguments, run, own_parser=True)
