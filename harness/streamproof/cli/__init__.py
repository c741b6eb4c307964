"""``streamproof``: run scenarios, validate them, list requirements, print the schema, run a
fault proxy in front of a user's own stack (``streamproof proxy``), serve one of the fakes on
its own from a scenario (``streamproof serve a2a|model``), record real traffic into fixtures and
a scenario that replays them (``streamproof record``), write a baseline of known failures
from a saved run (``streamproof baseline write``), and draw a saved run's report again
(``streamproof report``).

Exit codes: 0 every enforced requirement holds, or with ``--baseline`` every enforced failure
is a known one (``proxy``: it ran its ``--for``; ``record``: its ``--max-duration``); 1 one
failed (with ``--baseline``: one not in the baseline); 2 bad input (a malformed scenario,
target, plan or baseline file, a missing or unreadable results.json for ``baseline write`` or
``report``, an unknown scenario for ``report --show``, an unknown option, nothing to run, a
``proxy``, ``serve`` or ``record`` that cannot listen where it is told, a scenario of the wrong
kind for ``serve``); 3 the target could not be started or reached; 128 + the signal when
interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, Protocol

from streamproof.cli import (
    baseline,
    engines,
    explore,
    list_command,
    mutants,
    proxy,
    record,
    report,
    run,
    schema,
    serve,
    validate,
)
from streamproof.cli.exits import EXIT_OK


class Command(Protocol):
    """A subcommand's module."""

    NAME: str

    def add_parser(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        """Declare the subcommand and its options."""

    def run(self, args: argparse.Namespace) -> int:
        """Carry it out; the exit status."""


COMMANDS: tuple[Command, ...] = (
    run,
    mutants,
    explore,
    validate,
    schema,
    engines,
    proxy,
    record,
    serve,
    baseline,
    report,
    list_command,
)
"""One module per subcommand, each with its ``NAME``, ``add_parser`` and ``run``: in the order
``streamproof --help`` lists them. Each imports what its command needs inside ``run``, so that
the command starts fast."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamproof",
        description="Conformance harness with fault injection for agent streaming.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `streamproof list | head`: the reader left; that is not an error of ours. Point
        # stdout at nothing so the interpreter's final flush does not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    by_name = {command.NAME: command for command in COMMANDS}
    return by_name[args.command].run(args)


def entry() -> NoReturn:
    """The command (console script and ``python -m streamproof``): :func:`main`, then out
    without the interpreter's teardown (:func:`streamproof.runtime.process_exit.exit_now`).
    :func:`main`
    itself returns, for callers in the same process."""
    from streamproof.runtime.process_exit import exit_now

    exit_now(main())
