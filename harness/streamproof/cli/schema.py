"""``streamproof schema``: the JSON Schema of scenario files, or of target files."""

from __future__ import annotations

import argparse
import json

from streamproof.cli.exits import EXIT_OK

NAME = "schema"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "schema", help="print the JSON Schema of scenario files, or of target files (for editors)"
    )
    parser.add_argument(
        "--target", action="store_true", help="the target file's schema instead of the scenario's"
    )


def run(args: argparse.Namespace) -> int:
    from streamproof.suites.schema import scenario_schema, target_schema

    print(json.dumps(target_schema() if args.target else scenario_schema(), indent=2))
    return EXIT_OK
