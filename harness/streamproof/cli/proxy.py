"""``streamproof proxy``: its options; the proxy is :mod:`streamproof.standalone.command`."""

from __future__ import annotations

import argparse

from streamproof.faults.engine_names import ENGINES

NAME = "proxy"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "proxy",
        help="a fault proxy in front of your own server or gateway, printing what it sees",
        description="Forward to --upstream through a fault link on loopback, print every "
        "connection, request, event and fault as it happens, and stop on Ctrl-C (or after "
        "--for). Point your client at the URL it prints first.",
    )
    parser.add_argument("--upstream", required=True, metavar="URL", help="where to forward")
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default="127.0.0.1:0",
        help="loopback only: 127.0.0.1, ::1 or localhost; port 0 (default): any free port",
    )
    parser.add_argument(
        "--engine", choices=ENGINES, default="inline", help="the fault engine (default inline)"
    )
    # Neither --plan nor --fault: the traffic passes unchanged and is recorded (watching a
    # stack before choosing a fault, or measuring what the hop costs).
    plan = parser.add_mutually_exclusive_group()
    plan.add_argument(
        "--plan", metavar="FILE", help="a YAML list of faults, as under links.<name> in a scenario"
    )
    plan.add_argument(
        "--fault",
        metavar="TEXT",
        action="append",
        help="one fault in words, repeatable, in plan order: 'after 40s: stall', "
        "'rpc message/stream after_event 3: rst', 'on_request: status 502'",
    )
    parser.add_argument(
        "--time-scale",
        metavar="F",
        type=float,
        default=1.0,
        help="multiply the plan's durations (default 1: real time)",
    )
    parser.add_argument(
        "--write-scenario",
        metavar="FILE",
        help="when it stops, write what it saw as a scenario skeleton to finish",
    )
    parser.add_argument(
        "--for", dest="run_for", metavar="DURATION", help="stop by itself after this long (40s)"
    )


def run(args: argparse.Namespace) -> int:
    from streamproof.standalone.command import run as run_proxy

    return run_proxy(args)
