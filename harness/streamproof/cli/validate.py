"""``streamproof validate``: every problem of scenario and target files, without running them."""

from __future__ import annotations

import argparse
import sys

from streamproof.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from streamproof.cli.paths import scenario_files

NAME = "validate"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "validate", help="check scenario and target files without running them"
    )
    parser.add_argument("paths", nargs="+", metavar="PATH")


def run(args: argparse.Namespace) -> int:
    """Every problem of every file, scenario files and target files alike (a target file is
    recognised by its keys: :mod:`streamproof.suites.input_files`)."""
    from streamproof.suites.input_files import check_file
    from streamproof.suites.loading import ScenarioIds

    found, missing = scenario_files(args.paths)
    files = list({file.resolve(): file for file in found}.values())  # each file once
    errors = [f"{m}: no such file or folder" for m in missing]
    ids = ScenarioIds()  # one for all the files: an id used in two files is an error
    checked = [check_file(file, ids) for file in files]
    errors += [str(problem) for entry in checked for problem in entry.problems]
    for line in errors:
        print(line, file=sys.stderr)
    if errors:
        return EXIT_BAD_INPUT
    if not files:
        print("no scenario or target files found", file=sys.stderr)
        return EXIT_BAD_INPUT
    scenario_entries = [entry for entry in checked if entry.target_kind is None]
    for entry in checked:
        if entry.target_kind is not None:
            print(f"{entry.file}: ok: target file ({entry.target_kind})")
    if scenario_entries:
        count = sum(len(entry.scenarios) for entry in scenario_entries)
        print(f"ok: {count} scenario(s) in {len(scenario_entries)} file(s)")
    return EXIT_OK
