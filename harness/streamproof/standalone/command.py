"""``streamproof proxy``: run one fault link in front of a user's upstream until stopped.

The link runs on a :class:`~streamproof.runtime.loop.BackgroundLoop`; the main thread owns the
terminal: it reads the link's records every :data:`POLL_S` seconds (the records carry their own
times, so a line is never late by more than that and its time is exact), prints them through
:class:`~streamproof.standalone.live.LiveLog`, and waits for a signal
(:class:`~streamproof.runtime.interrupts.
Interrupts` turns SIGINT, SIGTERM and SIGHUP into ``KeyboardInterrupt``) or the end of
``--for``. Polling works with every engine through the
:class:`~streamproof.faults.engines.FaultLink`
interface, so no engine needs a hook for it.

Stopping closes the link (responses in progress end ``fin by proxy``, the port is freed) and
the engine, each within a bound, while further signals are only remembered; then the last
records, with ``--write-scenario`` the scenario skeleton, and the summary line, last.

Exit status: 0 after ``--for`` (or when stdout was closed), 2 for bad input (nothing listened),
128 + the signal when stopped by one (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import argparse
import datetime as dt
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import aiohttp

from streamproof.core.durations import TimeScale
from streamproof.faults.engines import Engine, EngineUnavailable, FaultLink, open_engine
from streamproof.faults.records import LinkEvent
from streamproof.faults.shorthand import format_fault
from streamproof.runtime.interrupts import Interrupts
from streamproof.runtime.loop import BackgroundLoop
from streamproof.standalone.card import CARD_PATH, card_advice
from streamproof.standalone.inputs import (
    BadInput,
    Listen,
    PlannedFault,
    engine_verdict,
    faults_from_texts,
    load_plan_file,
    parse_hop,
    parse_period,
)
from streamproof.standalone.live import LiveLog, summary_line
from streamproof.standalone.skeleton import scenario_skeleton

__all__ = ["POLL_S", "PROG", "Setup", "run", "setup_from_args"]

PROG: Final = "streamproof proxy"
POLL_S: Final = 0.1
"""Seconds between two reads of the link's records."""
START_BOUND_S: Final = 30.0
CLOSE_BOUND_S: Final = 10.0
CARD_CHECK_S: Final = 3.0
"""How long the start-up look at the upstream's agent card may take."""
LINK_NAME: Final = "proxy"

EXIT_OK, EXIT_BAD_INPUT = 0, 2


@dataclass(frozen=True)
class Setup:
    """The command's inputs, checked."""

    upstream: str
    listen: Listen
    engine: str
    planned: tuple[PlannedFault, ...]
    time_scale: float
    run_for: float | None
    run_for_text: str | None
    write_to: Path | None


def setup_from_args(args: argparse.Namespace) -> Setup:
    """Every input checked, every problem at once (:class:`BadInput`)."""
    problems: list[str] = []
    upstream, listen = parse_hop(args.upstream, args.listen, problems)
    planned: list[PlannedFault] = []
    try:
        planned = (
            load_plan_file(args.plan)
            if args.plan is not None
            else faults_from_texts(args.fault or [])
        )
    except BadInput as exc:
        problems += exc.problems
    try:
        TimeScale(args.time_scale)
    except ValueError:
        problems.append(f"--time-scale {args.time_scale:g}: must be a positive number")
    run_for = parse_period("--for", args.run_for, problems)
    write_to = Path(args.write_scenario) if args.write_scenario else None
    if write_to is not None and (write_to.is_dir() or not write_to.parent.is_dir()):
        what = "is a folder" if write_to.is_dir() else f"has no folder {write_to.parent}"
        problems.append(f"--write-scenario {write_to}: {what}")
    rejected, _ = engine_verdict(args.engine, planned)
    problems += rejected
    if problems or upstream is None or listen is None:
        raise BadInput(*problems)
    return Setup(
        upstream=upstream,
        listen=listen,
        engine=args.engine,
        planned=tuple(planned),
        time_scale=args.time_scale,
        run_for=run_for,
        run_for_text=args.run_for,
        write_to=write_to,
    )


class _OutputClosed(Exception):
    """Whoever read stdout went away (``streamproof proxy ... | head``)."""


class _Terminal:
    """stdout for the live lines, stderr for warnings, written in the order they were queued;
    what a signal kept from being written is still queued for the end. A closed stdout stops
    the proxy."""

    def __init__(self) -> None:
        self.closed = False
        self._queue: list[tuple[bool, str]] = []

    def out(self, lines: list[str]) -> None:
        self._queue += [(False, line) for line in lines]
        self.flush()

    def err(self, line: str) -> None:
        self._queue.append((True, f"{PROG}: {line}"))
        self.flush()

    def flush(self) -> None:
        while self._queue:
            to_err, line = self._queue[0]
            if to_err:
                print(line, file=sys.stderr, flush=True)
            elif not self.closed:
                try:
                    sys.stdout.write(line + "\n")
                    sys.stdout.flush()
                except BrokenPipeError:
                    self.closed = True
                    self._queue.pop(0)
                    raise _OutputClosed from None
            self._queue.pop(0)


async def _look_at_card(upstream: str, proxy: str) -> str | None:
    """One GET of the upstream's agent card, straight to it (not through the link): a warning
    when the upstream cannot be reached or its card sends clients around the proxy."""
    timeout = aiohttp.ClientTimeout(total=CARD_CHECK_S)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(upstream + CARD_PATH) as response,
        ):
            if response.status != 200:
                return None
            card = await response.json(content_type=None)
    except (aiohttp.ClientConnectorError, aiohttp.ServerDisconnectedError) as exc:
        return (
            f"warning: the upstream {upstream} cannot be reached now ({exc}); the proxy runs "
            "anyway, and each request fails (its connection is closed) until it is up"
        )
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    advice = card_advice(card, proxy=proxy)
    return f"warning: {advice}" if advice else None


class _Proxy:
    """The link on its background loop, and the lines it has printed so far."""

    def __init__(
        self, setup: Setup, engine: Engine, terminal: _Terminal, interrupts: Interrupts
    ) -> None:
        self.setup = setup
        self.engine = engine
        self.terminal = terminal
        self.interrupts = interrupts
        self.loop = BackgroundLoop("streamproof-proxy")
        self.link: FaultLink | None = None
        self.t0 = time.monotonic()
        self.live = LiveLog()
        self.seen = 0
        self.records: list[LinkEvent] = []
        self.upstream_failed = False

    def start(self) -> str:
        setup = self.setup

        async def _start() -> str:
            await self.engine.start()
            link = self.engine.link(LINK_NAME, setup.upstream, time_scale=setup.time_scale)
            self.link = link
            link.load([p.fault for p in setup.planned])
            self.t0 = time.monotonic()
            link.set_epoch(self.t0)
            return await link.start(setup.listen.host, setup.listen.port)

        return self.loop.run(_start(), timeout=START_BOUND_S)

    def card_warning(self, base_url: str) -> str | None:
        return self.loop.run(
            _look_at_card(self.setup.upstream, base_url), timeout=CARD_CHECK_S + 2.0
        )

    def _read(self) -> list[LinkEvent]:
        link = self.link
        if link is None:
            return []

        async def _events() -> list[LinkEvent]:
            return link.events

        records = self.loop.run(_events(), timeout=CLOSE_BOUND_S)
        new, self.seen = records[self.seen :], len(records)
        self.records = records
        return new

    def show_new(self) -> None:
        """Read the new records and print them; a signal meanwhile waits until they are
        queued, so no record is read and then lost."""
        with self.interrupts.deferred():
            new = self._read()
            lines = self.live.feed(new) + self.live.tick(time.monotonic() - self.t0)
            self.terminal.out(lines)
            for record in new:
                if record.kind == "end" and record.how == "upstream_error":
                    if not self.upstream_failed:
                        self.upstream_failed = True
                        self.terminal.err(
                            f"the upstream {self.setup.upstream} failed a request "
                            f"({record.detail}); the proxy closed the client's connection, as "
                            "it does for every such failure (the next ones show only as 'end "
                            "upstream_error' lines)"
                        )

    def watch(self, deadline: float | None) -> None:
        """Print records until ``deadline`` (``time.monotonic()``), or forever."""
        while True:
            wait = POLL_S
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                wait = min(wait, left)
            time.sleep(wait)
            self.show_new()
        self.show_new()

    def close(self) -> list[str]:
        """Close the link and the engine (bounded); problems met on the way."""
        problems: list[str] = []
        link = self.link
        if link is not None:
            try:
                self.loop.run(link.close(), timeout=CLOSE_BOUND_S)
            except Exception as exc:
                problems.append(f"closing the link: {type(exc).__name__}: {exc}")
        try:
            self.loop.run(self.engine.close(), timeout=CLOSE_BOUND_S)
        except Exception as exc:
            problems.append(f"closing the engine {self.engine.name}: {type(exc).__name__}: {exc}")
        return problems

    def finish_lines(self) -> None:
        """What a signal kept from being written, the records left after closing, and the runs
        still counted."""
        try:
            new = self._read()
        except Exception:
            new = []
        self.terminal.out(self.live.feed(new) + self.live.flush())

    def shut(self) -> None:
        self.loop.close()


def _why(interrupts: Interrupts) -> str:
    return signal.Signals(interrupts.received[0]).name if interrupts.received else "stopped"


def run(args: argparse.Namespace) -> int:
    """``streamproof proxy``; the exit status."""
    try:
        setup = setup_from_args(args)
    except BadInput as exc:
        for line in exc.problems:
            print(line, file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        engine = open_engine(setup.engine)
    except EngineUnavailable as exc:
        print(f"--engine {setup.engine}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT

    terminal = _Terminal()
    interrupts = Interrupts()
    interrupts.install()
    proxy: _Proxy | None = None
    started = False
    why = "stopped"
    try:
        try:
            proxy = _Proxy(setup, engine, terminal, interrupts)
            try:
                base_url = proxy.start()
            except OSError as exc:
                listen = setup.listen
                shown = f"[{listen.host}]" if ":" in listen.host else listen.host
                print(
                    f"--listen {shown}:{listen.port}: cannot listen there: {exc.strerror or exc}",
                    file=sys.stderr,
                )
                return EXIT_BAD_INPUT
            started = True
            deadline = None if setup.run_for is None else time.monotonic() + setup.run_for
            terminal.out(_opening(setup, base_url))
            warning = proxy.card_warning(base_url)
            if warning is not None:
                terminal.err(warning)
            proxy.watch(deadline)
            why = f"--for {setup.run_for_text}"
        except KeyboardInterrupt:
            why = _why(interrupts)
        except _OutputClosed:
            why = "stdout closed"
        finally:
            interrupts.hold()
            if proxy is not None:
                for problem in proxy.close():
                    terminal.err(problem)
        if proxy is None or not started:
            return interrupts.exit_status or EXIT_BAD_INPUT
        status = _finish(proxy, setup, why, terminal)
        return interrupts.exit_status or status
    finally:
        if proxy is not None:
            proxy.shut()
        interrupts.restore()


def _opening(setup: Setup, base_url: str) -> list[str]:
    lines = [f"{PROG}: listening on {base_url} -> {setup.upstream}"]
    if setup.planned:
        lines += [
            f"{PROG}: plan [{i}] {format_fault(p.fault)}" for i, p in enumerate(setup.planned)
        ]
    else:
        lines.append(f"{PROG}: no faults: the traffic passes unchanged and is recorded")
    _, approximated = engine_verdict(setup.engine, setup.planned)
    lines += [f"{PROG}: note: {note}" for note in approximated]
    scale = f", times scaled by {setup.time_scale:g}" if setup.time_scale != 1 else ""
    until = f"for {setup.run_for_text}" if setup.run_for_text else "until Ctrl-C"
    lines.append(f"{PROG}: engine {setup.engine}{scale}; runs {until}")
    return lines


def _finish(proxy: _Proxy, setup: Setup, why: str, terminal: _Terminal) -> int:
    """The last lines, the scenario file and the summary, last; the exit status."""
    status = EXIT_OK
    try:
        proxy.finish_lines()
        if setup.write_to is not None:
            status = _write_scenario(proxy, setup, setup.write_to, terminal)
        seconds = time.monotonic() - proxy.t0
        faults = [p.fault for p in setup.planned]
        terminal.out([summary_line(proxy.records, faults, seconds=seconds, why=why)])
    except _OutputClosed:
        pass
    return status


def _write_scenario(proxy: _Proxy, setup: Setup, path: Path, terminal: _Terminal) -> int:
    now = dt.datetime.now(dt.UTC)
    text = scenario_skeleton(
        plan=[p.data for p in setup.planned],
        records=proxy.records,
        upstream=setup.upstream,
        engine=setup.engine,
        time_scale=setup.time_scale,
        written_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        scenario_id=f"captured-{now:%Y%m%d-%H%M%S}",
    )
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        terminal.err(f"--write-scenario {path}: cannot write it: {exc}")
        return EXIT_BAD_INPUT
    terminal.out([f"{PROG}: wrote {path}: a scenario to finish (fill in its <...> placeholders)"])
    return EXIT_OK
