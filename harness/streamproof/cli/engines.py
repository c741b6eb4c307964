"""``streamproof engines``: what each fault engine does with each plan item."""

from __future__ import annotations

import argparse

from streamproof.cli.exits import EXIT_OK

NAME = "engines"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    subparsers.add_parser(
        "engines", help="print what each fault engine does with each plan item (Markdown)"
    )


def run(args: argparse.Namespace) -> int:
    from streamproof.faults.engines.catalog import engines_table

    print(engines_table())
    return EXIT_OK
