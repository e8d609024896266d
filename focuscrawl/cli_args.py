"""Argument-parsing habits every command shares (the main CLI's and ``focuscrawl model``'s):
no abbreviated options, hints for options people mix up, ``-q``/``-v``, help lines
from docstrings."""

from __future__ import annotations

import argparse
import difflib
import logging
import re
import sys
from typing import Any


class Parser(argparse.ArgumentParser):
    """No abbreviated options (``--max-page`` is no ``--max-pages``), a hint for the
    options people mix up, and ``-q``/``-v`` on every command."""

    _HINTS = (("argument --seed: invalid int value", "--seed is the random seed; seed URLs go with --seeds"),)

    def __init__(self, *args: Any, strict: bool = False, **kwargs: Any) -> None:
        """``strict``: a subcommand's parser, which refuses what it does not know itself,
        with its own usage and the nearest option (argparse leaves it to the top-level
        parser, whose usage names no option of the subcommand)."""
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.strict = strict

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self.strict:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> Any:
        hint = next((h for text, h in self._HINTS if text in message), None)
        if hint is None and message.startswith("unrecognized arguments: "):
            hint = self._nearest(message.split(": ", 1)[1].split())
        super().error(f"{message} ({hint})" if hint else message)

    def _nearest(self, words: list[str]) -> str | None:
        """'did you mean --max-pages?' for the first unknown option that is near one."""
        known = [o[2:] for o in self._option_string_actions if o.startswith("--")]
        for word in words:
            if word.startswith("-"):
                near = difflib.get_close_matches(word.split("=", 1)[0].lstrip("-"), known, n=1, cutoff=0.7)
                if near:
                    return f"did you mean --{near[0]}?"
        return None


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
    >>> first_sentence("OTIE: cash revised by relevance (eq. 3 of the paper, cf. P0). More.")
    'OTIE: cash revised by relevance (eq. 3 of the paper, cf. P0).'
    """
    paragraph = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    # a sentence ends at ". ", not after an abbreviation (eq. 3, e.g. x, Chakrabarti et al. 1999)
    ends = (m.start() for m in re.finditer(r"\. ", paragraph))
    end = next((i for i in ends if not _abbreviation_before(paragraph, i)), -1)
    return (paragraph if end < 0 else paragraph[: end + 1]).replace("``", "")


def _abbreviation_before(text: str, end: int) -> bool:
    """Whether the word that ends at ``end`` (before a period) is an abbreviation."""
    word = re.search(r"[\w.]*$", text[:end])
    return word is not None and word[0].lower() in _ABBREVIATIONS


_ABBREVIATIONS = frozenset({"eq", "eqs", "e.g", "i.e", "cf", "vs", "al", "fig", "sec", "no", "p", "pp"})


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
