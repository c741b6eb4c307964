"""``streamproof record``: its options; the recording proxy is
:mod:`streamproof.standalone.record`."""

from __future__ import annotations

import argparse

NAME = "record"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "record",
        help="a recording proxy in front of a real model or A2A server: writes fixtures and a "
        "scenario that replays them",
    )
    parser.add_argument("--upstream", required=True, metavar="URL", help="where to forward")
    parser.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="where to listen (loopback only; default 127.0.0.1 on any free port)",
    )
    parser.add_argument(
        "--kind",
        choices=("model", "a2a"),
        default=None,
        help="the link: model (Gemini calls -> gateway scenario) or a2a (A2A server -> "
        "a2a-client scenario); default: guessed from the traffic",
    )
    parser.add_argument(
        "--out", default="recorded", metavar="DIR", help="where to write (default: recorded)"
    )
    parser.add_argument(
        "--name", metavar="NAME", help="scenario and fixture folder name (default: a time)"
    )
    parser.add_argument(
        "--max-duration", metavar="D", help="stop after this long (e.g. 30s); default Ctrl-C"
    )


def run(args: argparse.Namespace) -> int:
    from streamproof.standalone.record import run as run_record

    return run_record(args)
