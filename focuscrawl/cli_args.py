"""Argument-parsing habits every command shares (the main CLI's and ``focuscrawl model``'s):
no abbreviated options, hints for options people mix up, ``-q``/``-v``, help lines
from docstrings."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any


class Parser(argparse.ArgumentParser):
    """No abbreviated options (``--max-page`` is no ``--max-pages``), a hint for the
    options people mix up, and ``-q``/``-v`` on every command."""

    _HINTS = (("argument --seed: invalid int value", "--seed is the random seed; seed URLs go with --seeds"),)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        hint = next((h for text, h in self._HINTS if text in message), None)
        super().error(f"{message} ({hint})" if hint else message)


def add_verbosity(p: argparse.ArgumentParser) -> None:
    """``-q``/``--quiet`` and ``-v``/``--verbose`` (repeatable): one counter, ``args.verbose``."""
    p.add_argument("-q", "--quiet", dest="verbose", action="store_const", const=-1, default=0,
                   help="only results and errors (no progress)")
    p.add_argument("-v", "--verbose", dest="verbose", action="count", default=0,
                   help="log what happens (-vv: debug)")  # fmt: skip


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line, without
    reStructuredText's double backticks.

    >>> first_sentence('''P4's rule: keep a link if its ``TLD`` is a target's,
    ...     otherwise only if its anchor is. More here.
    ...
    ...     Details.''')
    "P4's rule: keep a link if its TLD is a target's, otherwise only if its anchor is."
    """
    paragraph = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    end = paragraph.find(". ")
    return (paragraph if end < 0 else paragraph[: end + 1]).replace("``", "")


class _Stderr(logging.Handler):
    """Log lines on whatever ``sys.stderr`` is when they are written (not the stream of
    the first call: tests and embedding programs swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record), file=sys.stderr)
        except Exception:
            self.handleError(record)


def set_verbosity(level: int) -> None:
    """The package's log lines on stderr: -q errors only, default warnings, -v info, -vv debug."""
    logger = logging.getLogger("focuscrawl")
    if not any(isinstance(h, _Stderr) for h in logger.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("focuscrawl: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False  # (a program's root handler would print them twice)
    levels = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}
    logger.setLevel(levels.get(level, logging.DEBUG))
