"""The subcommands of ``focuscrawl``: one module per command, each a :class:`Command`.

A command module holds what its command does beyond calling the API (printing,
exit codes, waiting for a running crawl's answer); :mod:`focuscrawl.cli` only
builds the parser from :data:`COMMAND` of each module and dispatches. A command's
top-level imports stay light (``focuscrawl --help`` imports every command module);
what a command needs to run it imports when it runs.

A new command is a module here with its ``COMMAND`` and one line in
``focuscrawl.cli.COMMANDS``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One subcommand: its name and help line, its arguments, what it runs.

    ``add_arguments`` is given the command's own subparser; ``run`` is called with the
    parsed arguments and returns the exit code. With ``own_parser`` the command parses
    the rest of the command line itself (``run`` finds it in ``args.rest``), options
    and ``--help`` included.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    own_parser: bool = False


#: a subcommand of ``focuscrawl model``: (add its arguments, run it). A model module's
#: ``CLI_COMMANDS`` maps names to these (a third party's model module may have one too).
Subcommand = tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
