"""``streamproof serve``: one of streamproof's fakes on its own, playing a scenario, until stopped.

``serve a2a SCENARIO`` runs the fake A2A server (:class:`~streamproof.fakes.a2a.FakeA2AServer`)
with the scenario's script (its ``task`` or ``reply`` and ``server:`` options; ``--wire``
overrides ``server.wire``); ``serve model SCENARIO`` runs the fake Gemini endpoint and the fake
tool service of a gateway scenario. Both listen on 127.0.0.1 only, on ``--port`` (0, the
default: any free port), so a team can point their own tools at them: a debugger, a browser,
the official A2A TCK (which was run against the fake A2A server this way).

The fakes run on a :class:`~streamproof.runtime.loop.BackgroundLoop`; the main thread owns the
terminal. It prints the URL(s) first, then reads the fakes' records every :data:`POLL_S` seconds and
prints one line per request as it arrives (:mod:`~streamproof.standalone.ledger_lines`), until
SIGINT, SIGTERM or SIGHUP (:class:`~streamproof.runtime.interrupts.Interrupts`). Stopping closes the
fakes within a bound (open streams are cut) and prints a last line.

Exit status: 2 for bad input (no such file, a scenario of the wrong kind, a port that cannot
be listened on; one line on stderr, nothing listened), 128 + the signal when stopped by one
(130 SIGINT, 143 SIGTERM, 129 SIGHUP), 0 when stdout was closed.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from streamproof.fakes.a2a import FakeA2AServer
from streamproof.fakes.a2a.script import A2AScript
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.protocol import a2a
from streamproof.runtime.interrupts import Interrupts
from streamproof.runtime.loop import BackgroundLoop
from streamproof.standalone.ledger_lines import (
    a2a_line,
    a2a_ready,
    delivery_line,
    model_line,
    tool_line,
)
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.loading import ScenarioError, load_scenarios

__all__ = ["POLL_S", "PROG", "BadInput", "Setup", "run", "setup_from_args"]

PROG: Final = "streamproof serve"
POLL_S: Final = 0.1
"""Seconds between two reads of the fakes' records."""
START_BOUND_S: Final = 30.0
CLOSE_BOUND_S: Final = 10.0
HOST: Final = "127.0.0.1"
TOOL_MARKER: Final = "SP-SECRET-serve"
"""What a tool payload's ``{{marker}}`` becomes (a run makes a fresh one; here it is fixed, so
a person can grep for it)."""

EXIT_OK, EXIT_BAD_INPUT = 0, 2


class BadInput(Exception):
    """One line saying what is wrong with the command's input."""


@dataclass(frozen=True)
class Setup:
    fake: Literal["a2a", "model"]
    scenario: A2AClientScenario | GatewayScenario
    label: str
    """``file`` or ``file (id)``, for the opening line."""
    port: int
    tools_port: int
    time_scale: float
    wire: a2a.ServedWire | None
    binding: Literal["jsonrpc", "rest"] = "jsonrpc"
    """The binding the card advertises (the REST routes are served on a 1.0 wire anyway)."""


def _port(value: int, option: str) -> int:
    if not 0 <= value <= 65535:
        raise BadInput(f"{option} {value}: must be 0 (any free port) to 65535")
    return value


def setup_from_args(args: argparse.Namespace) -> Setup:
    """The inputs, checked (:class:`BadInput` on the first problem)."""
    fake: Literal["a2a", "model"] = args.fake
    path = Path(args.scenario)
    if not path.is_file():
        what = (
            "is a folder"
            if path.is_dir()
            else "is not a regular file"
            if path.exists()
            else "no such file"
        )
        raise BadInput(f"{path}: {what} (serve takes one scenario file)")
    try:
        loaded = load_scenarios(path)
    except ScenarioError as exc:
        more = len(exc.problems) - 1
        raise BadInput(str(exc.problems[0]) + (f" (and {more} more)" if more else "")) from None
    if args.scenario_id is not None:
        loaded = [s for s in loaded if s.scenario.id == args.scenario_id]
        if not loaded:
            raise BadInput(f"{path}: no scenario with id {args.scenario_id!r}")
    if not loaded:
        raise BadInput(f"{path}: holds no scenario")
    if len(loaded) > 1:
        ids = ", ".join(s.scenario.id for s in loaded)
        raise BadInput(f"{path}: holds {len(loaded)} scenarios ({ids}); choose one with --id")
    scenario = loaded[0].scenario
    wanted = A2AClientScenario if fake == "a2a" else GatewayScenario
    if not isinstance(scenario, wanted):
        kind = "an a2a-client" if fake == "a2a" else "a gateway"
        other = "model" if fake == "a2a" else "a2a"
        raise BadInput(
            f"{path}: {scenario.id} is not {kind} scenario; serve {fake} needs one "
            f"(serve {other} serves this one)"
        )
    if not (math.isfinite(args.time_scale) and args.time_scale > 0):
        raise BadInput(f"--time-scale {args.time_scale:g}: must be a positive number")
    wire = getattr(args, "wire", None)
    binding = getattr(args, "binding", None)
    if binding is None and isinstance(scenario, A2AClientScenario):
        binding = "rest" if scenario.binding == "rest" else "jsonrpc"
    if binding == "rest":
        served = wire or (scenario.server.wire if isinstance(scenario, A2AClientScenario) else None)
        if served == "0.3":
            raise BadInput(
                "--binding rest: REST is an A2A 1.0 binding, and the wire is 0.3 (give "
                "--wire 1.0 or both)"
            )
    return Setup(
        fake=fake,
        scenario=scenario,
        label=f"{path} ({scenario.id})",
        port=_port(args.port, "--port"),
        tools_port=_port(getattr(args, "tools_port", 0), "--tools-port"),
        time_scale=args.time_scale,
        wire=wire,
        binding=binding or "jsonrpc",
    )


class _OutputClosed(Exception):
    """Whoever read stdout went away."""


class _CannotListen(Exception):
    def __init__(self, option: str, port: int, exc: OSError) -> None:
        # asyncio's bind error has an errno but a long message of its own and no strerror
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        super().__init__(f"{option} {port}: cannot listen on {HOST}:{port}: {why}")


async def _listen(start: Callable[[str, int], Awaitable[str]], option: str, port: int) -> str:
    try:
        return await start(HOST, port)
    except OSError as exc:
        raise _CannotListen(option, port, exc) from None


def _out(lines: list[str]) -> None:
    try:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        raise _OutputClosed from None


class _Served:
    """The fake(s) on their background loop, and how many records have been shown."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.loop = BackgroundLoop("streamproof-serve")
        self.a2a: FakeA2AServer | None = None
        self.model: FakeModel | None = None
        self.tools: FakeTools | None = None
        self.epoch = 0.0
        self.shown = 0
        self.shown_deliveries = 0
        self.shown_model = 0
        self.shown_tools = 0

    def script(self) -> A2AScript:
        scenario = self.setup.scenario
        assert isinstance(scenario, A2AClientScenario)
        script = scenario.script
        if self.setup.wire is not None:
            server = script.server.model_copy(update={"wire": self.setup.wire})
            script = script.model_copy(update={"server": server})
        return script

    def start(self) -> list[str]:
        """Start serving; the opening lines."""
        setup = self.setup

        async def _a2a() -> list[str]:
            fake = FakeA2AServer()
            self.a2a = fake
            base = await _listen(fake.start, "--port", setup.port)
            script = self.script()
            fake.load(script, time_scale=setup.time_scale, binding=setup.binding)
            self.epoch = time.monotonic()
            fake.set_epoch(self.epoch)
            what = "a task timeline" if script.task is not None else "a direct reply"
            bindings = "JSON-RPC"
            if script.server.wire != "0.3":  # REST is served beside JSON-RPC on a 1.0 wire
                bindings = (
                    "HTTP+JSON on the card, JSON-RPC at /"
                    if setup.binding == "rest"
                    else "JSON-RPC on the card, HTTP+JSON beside it"
                )
            lines = [
                f"{PROG}: fake A2A server listening on {base}/ ({bindings})",
                f"{PROG}: agent card {fake.card_url}",
                f"{PROG}: {setup.label}: {what}, wire {script.server.wire}"
                + (f", times scaled by {setup.time_scale:g}" if setup.time_scale != 1 else ""),
            ]
            if script.push is not None:
                faults = len(script.push.faults)
                lines.append(
                    f"{PROG}: push notifications: a webhook registered in SendMessage's "
                    "configuration (taskPushNotificationConfig) gets the task's updates"
                    + (f", {faults} delivery fault(s) scripted" if faults else "")
                )
            return lines

        async def _model() -> list[str]:
            scenario = setup.scenario
            assert isinstance(scenario, GatewayScenario)
            self.model, self.tools = FakeModel(), FakeTools()
            model_url = await _listen(self.model.start, "--port", setup.port)
            tools_url = await _listen(self.tools.start, "--tools-port", setup.tools_port)
            self.model.load(
                scenario.model,
                time_scale=setup.time_scale,
                runaway_cap=scenario.limits.runaway_cap,
            )
            self.tools.load(scenario.tools, TOOL_MARKER)
            t0 = time.monotonic()
            self.model.set_epoch(t0)
            self.tools.set_epoch(t0)
            return [
                f"{PROG}: fake Gemini listening on {model_url}",
                f"{PROG}: fake tool service listening on {tools_url}",
                f"{PROG}: GOOGLE_GEMINI_BASE_URL={model_url} STREAMPROOF_TOOL_URL={tools_url}",
                f"{PROG}: {setup.label}: {len(scenario.model)} scripted model turn(s), "
                f"tools {', '.join(sorted(scenario.tools)) or 'none'}"
                + (f", times scaled by {setup.time_scale:g}" if setup.time_scale != 1 else ""),
            ]

        return self.loop.run(_a2a() if setup.fake == "a2a" else _model(), timeout=START_BOUND_S)

    def new_lines(self) -> list[str]:
        """A line for each request that arrived since the last call."""

        async def _read() -> list[str]:
            lines: list[str] = []
            if self.a2a is not None:
                records = self.a2a.ledger.requests
                now = time.monotonic() - self.epoch
                while self.shown < len(records) and a2a_ready(records[self.shown], now):
                    lines.append(a2a_line(records[self.shown]))
                    self.shown += 1
                sent = self.a2a.ledger.deliveries
                while (
                    self.shown_deliveries < len(sent)
                    and sent[self.shown_deliveries].ended != "open"
                ):
                    lines.append(delivery_line(sent[self.shown_deliveries]))
                    self.shown_deliveries += 1
            if self.model is not None:
                calls = self.model.calls
                lines += [model_line(c) for c in calls[self.shown_model :]]
                self.shown_model = len(calls)
            if self.tools is not None:
                used = self.tools.calls
                lines += [tool_line(c) for c in used[self.shown_tools :]]
                self.shown_tools = len(used)
            return lines

        return self.loop.run(_read(), timeout=CLOSE_BOUND_S)

    def close(self) -> list[str]:
        """Stop serving (bounded); problems met on the way."""
        problems: list[str] = []
        closers: list[tuple[str, Callable[[], Coroutine[Any, Any, None]]]] = []
        if self.a2a is not None:
            closers.append(("the fake A2A server", self.a2a.close))
        if self.model is not None:
            closers.append(("the fake model", self.model.close))
        if self.tools is not None:
            closers.append(("the fake tool service", self.tools.close))
        for name, close in closers:
            try:
                self.loop.run(close(), timeout=CLOSE_BOUND_S)
            except Exception as exc:
                problems.append(f"closing {name}: {type(exc).__name__}: {exc}")
        return problems


def run(args: argparse.Namespace) -> int:
    """``streamproof serve``; the exit status."""
    try:
        setup = setup_from_args(args)
    except BadInput as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    interrupts = Interrupts()
    interrupts.install()
    served = _Served(setup)
    why = "stopped"
    try:
        try:
            try:
                opening = served.start()
            except _CannotListen as exc:
                print(f"{PROG}: {exc}", file=sys.stderr)
                return interrupts.exit_status or EXIT_BAD_INPUT
            _out([*opening, f"{PROG}: one line per request below; Ctrl-C stops"])
            while True:
                time.sleep(POLL_S)
                with interrupts.deferred():
                    _out(served.new_lines())
        except KeyboardInterrupt:
            if interrupts.received:
                why = signal.Signals(interrupts.received[0]).name
        except _OutputClosed:
            why = "stdout closed"
        finally:
            interrupts.hold()
            problems = served.close()
        for problem in problems:
            print(f"{PROG}: {problem}", file=sys.stderr)
        try:
            _out([*served.new_lines(), f"{PROG}: stopped ({why})"])
        except Exception:  # stdout closed, or a record unreadable: the fakes are closed anyway
            pass
        return interrupts.exit_status or EXIT_OK
    finally:
        served.loop.close()
        interrupts.restore()
