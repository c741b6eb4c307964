"""``streamproof list``: the requirement registry, with the scenarios that judge each rule.

Named ``list_command``, not ``list``: a module ``list`` would shadow the builtin wherever the
package's modules are imported by name."""

from __future__ import annotations

import argparse
import json
import sys

from streamproof.cli.exits import EXIT_OK
from streamproof.cli.paths import NO_BUNDLED_SUITES, default_paths

NAME = "list"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("list", help="print the requirement registry")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--markdown", action="store_true", help="the table of docs/reference/requirements.md"
    )


def run(args: argparse.Namespace) -> int:
    return _list(as_json=args.json, markdown=args.markdown)


def _list(*, as_json: bool, markdown: bool = False) -> int:
    from streamproof.suites import REGISTRY
    from streamproof.suites.coverage import requirements_table, scenarios_by_requirement

    paths = default_paths()
    if not paths:
        print(f"streamproof list: {NO_BUNDLED_SUITES}", file=sys.stderr)
    if markdown:
        print(requirements_table(paths))
        return EXIT_OK
    by_req = scenarios_by_requirement(paths)
    if as_json:
        rows = [
            {**r.model_dump(mode="json"), "scenarios": by_req.get(r.id, [])}
            for r in REGISTRY.values()
        ]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for req in REGISTRY.values():
        print(f"{req.id:<28} {req.level.value:<6} {req.statement}")
        print(f"{'':<28} {req.source()}: {req.section}")
        scenarios = by_req.get(req.id, [])
        # A rule about sessions at once, or of one wire's own protocol, is judged on every
        # scenario run that way.
        none = req.everywhere() or "(none)"
        print(f"{'':<28} scenarios: {', '.join(scenarios) if scenarios else none}")
    return EXIT_OK
