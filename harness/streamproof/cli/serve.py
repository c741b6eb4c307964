"""``streamproof serve a2a|model``: its options; the fakes served are
:mod:`streamproof.standalone.serve`'s."""

from __future__ import annotations

import argparse

NAME = "serve"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run a fake (A2A server, or Gemini + tool service) on its own from a scenario",
        description="Serve one of streamproof's fakes on 127.0.0.1 playing a scenario, print "
        "its URL(s) and one line per request as it arrives, and stop on Ctrl-C or SIGTERM. "
        "Point your own client, debugger or the A2A TCK at it.",
    )
    which = parser.add_subparsers(dest="fake", required=True, metavar="{a2a,model}")
    a2a_cmd = which.add_parser(
        "a2a", help="the fake A2A server, from an a2a-client scenario's task/reply and server:"
    )
    model = which.add_parser(
        "model", help="the fake Gemini endpoint and tool service, from a gateway scenario"
    )
    for cmd in (a2a_cmd, model):
        cmd.add_argument("scenario", metavar="SCENARIO", help="a scenario file")
        cmd.add_argument(
            "--id", dest="scenario_id", metavar="ID", help="which scenario of a file of several"
        )
        cmd.add_argument(
            "--port", type=int, default=0, help="the port on 127.0.0.1 (default 0: any free port)"
        )
        cmd.add_argument(
            "--time-scale",
            metavar="F",
            type=float,
            default=1.0,
            help="multiply the scenario's times (default 1: real time)",
        )
    a2a_cmd.add_argument(
        "--wire",
        choices=("0.3", "1.0", "both"),
        help="the wire the card offers and the server speaks (default: the scenario's)",
    )
    a2a_cmd.add_argument(
        "--binding",
        choices=("jsonrpc", "rest"),
        help="the binding the card advertises (default: the scenario's, else jsonrpc); on a "
        "1.0 or both wire the REST routes are served either way",
    )
    model.add_argument(
        "--tools-port",
        type=int,
        default=0,
        help="the tool service's port on 127.0.0.1 (default 0: any free port)",
    )


def run(args: argparse.Namespace) -> int:
    from streamproof.standalone.serve import run as run_serve

    return run_serve(args)
