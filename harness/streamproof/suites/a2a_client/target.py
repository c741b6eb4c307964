"""A2A client targets: the client under test as a command, and how one turn of it is run.

A client target file is YAML (``reference-client.yaml`` beside this module is the bundled
reference)::

    kind: a2a-client
    name: billing-service-client
    command: ["java", "-jar", "build/libs/a2a-client.jar"]   # "{python}": the harness's python
    env: {JAVA_TOOL_OPTIONS: "-Xshare:auto"} startup_grace: 5s          # extra run time for a
    slow-booting runtime (a JVM); not scaled

``bindings: [jsonrpc, rest]`` says which A2A bindings the client speaks (default
``[jsonrpc]``); a scenario runs once per declared binding that can carry it.

For every turn streamproof starts the command once with the contract's environment
(``STREAMPROOF_A2A_URL``, ``STREAMPROOF_A2A_BINDING``, ``STREAMPROOF_PROMPT``,
``STREAMPROOF_DEADLINE_S``, ``STREAMPROOF_IDLE_S``, ``STREAMPROOF_A2A_PUSH=1`` in a push
scenario, and on a follow-up ``STREAMPROOF_TASK_ID``/``STREAMPROOF_CONTEXT_ID``; durations
already scaled), lets it run for
at most its deadline plus a grace plus the ``startup_grace`` (or, when later, the deadline plus
the grace from the first request the server saw: the contract's time limits start there), and
reads the LAST stdout line as the result (:mod:`streamproof.suites.a2a_client.result`). A
missing or malformed result line, a crash or a hang is recorded as the turn's
:class:`~streamproof.suites.a2a_client.result.ClientFailure`, with the tail of stdout and
stderr; the process group is killed in every case, so nothing outlives the turn.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from streamproof.core.capabilities import Binding, ClientCapability, Wire
from streamproof.core.durations import Duration, on_both_clocks
from streamproof.suites.a2a_client.result import (
    ClientFailure,
    ClientResult,
    ClientRun,
    FailureKind,
    looks_like_result,
    parse_result_line,
)
from streamproof.targets.bugs import BugNames, bugs_need_bug_env, check_bug
from streamproof.targets.build import Build
from streamproof.targets.errors import TargetError
from streamproof.targets.files import load_target_file
from streamproof.targets.process import OutputTail, TargetProcess
from streamproof.targets.warm.request import check_warm_start

__all__ = [
    "DEFAULT_CLIENT_TARGET",
    "ClientTarget",
    "check_target_bug",
    "client_environment",
    "load_client_target",
    "run_client_turn",
]

DEFAULT_CLIENT_TARGET: Final = Path(__file__).with_name("reference-client.yaml")
MIN_GRACE_S: Final = 1.0
"""The least time past its deadline a client gets to print its result, whatever the scale."""
DRAIN_S: Final = 2.0
"""How long the harness reads a finished client's stdout for its last lines."""
_TAIL_LINES: Final = 40
_CONTRACT_PREFIX: Final = "STREAMPROOF_"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ClientTarget(_Model):
    """An A2A client under test, started as a command once per turn."""

    kind: Literal["a2a-client"] = "a2a-client"
    name: str = Field("a2a-client", min_length=1)
    command: tuple[str, ...] = Field(min_length=1)
    """argv; ``{python}`` is replaced by the harness's interpreter."""
    cwd: str | None = None
    """The folder the command runs in, relative to the target file; default: the folder
    streamproof runs in."""
    build: Build | None = None
    """How to build the client before its first turn (skipped while up to date)."""
    env: dict[str, str] = Field(default_factory=dict)
    startup_grace: Duration = 0.0
    """Real seconds added to every turn's bound for the runtime to boot (not scaled)."""
    warm_start: bool = False
    """Fork each turn from an interpreter that imported the command's module once (a command
    ``["{python}", "-m", MODULE, ...]`` whose module reads no environment while it is
    imported); docs/reference/target-files.md#warm-starts."""
    bug_env: str | None = None
    """The environment variable through which ``--bug NAME`` reaches the target (references)."""
    bugs: BugNames = ()
    """The mutant names ``bug_env`` accepts, for a reference of its own (the Java reference
    client); empty: the bundled reference's mutants."""
    wires: tuple[Wire, ...] = Field(("0.3",), min_length=1)
    """The A2A wires the client speaks: ``"0.3"`` (the seed's protocol, the default),
    ``"1.0"``, or both. A scenario whose server speaks only a wire the client lacks is
    skipped."""
    bindings: tuple[Binding, ...] = Field(("jsonrpc",), min_length=1)
    """The A2A bindings the client speaks: ``jsonrpc`` (the default), ``rest`` (HTTP+JSON),
    ``grpc``. Each scenario runs once per declared binding that can carry its wire, the
    binding named to the client in ``STREAMPROOF_A2A_BINDING``
    (docs/reference/a2a-client-contract.md#bindings)."""
    capabilities: tuple[ClientCapability, ...] = ()
    """What the client serves beyond one call: ``follow_up`` (a second turn that answers
    input-required with the task and context ids it is given)."""

    @property
    def declared(self) -> frozenset[str]:
        """The capabilities, the wires (as ``wire 0.3``, ``wire 1.0``) and the bindings (as
        ``binding rest``...) the client declares."""
        return frozenset(
            {
                *self.capabilities,
                *(f"wire {w}" for w in self.wires),
                *(f"binding {b}" for b in self.bindings),
            }
        )

    @field_validator("command")
    @classmethod
    def _non_empty(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v[0].strip():
            raise ValueError("the command's program (its first word) is empty")
        return v

    @model_validator(mode="after")
    def _warm_start_form(self) -> ClientTarget:
        check_warm_start(self.warm_start, self.command)
        return self

    @field_validator("env")
    @classmethod
    def _not_the_contract(cls, v: dict[str, str]) -> dict[str, str]:
        taken = sorted(
            k for k in v if k.startswith(_CONTRACT_PREFIX) and k not in ("STREAMPROOF_BUG",)
        )
        if taken:
            raise ValueError(
                f"{', '.join(taken)}: STREAMPROOF_* variables are set by streamproof for each "
                "turn; remove them from env"
            )
        return v

    @model_validator(mode="after")
    def _bugs_need_bug_env(self) -> ClientTarget:
        bugs_need_bug_env(self.bugs, self.bug_env)
        return self

    @model_validator(mode="after")
    def _bindings_fit_the_wires(self) -> ClientTarget:
        # REST and gRPC carry the 1.0 wire only: without it every such run would be skipped
        lone = [b for b in self.bindings if b != "jsonrpc"]
        if lone and "1.0" not in self.wires:
            raise ValueError(
                f"bindings {', '.join(lone)} carry the A2A 1.0 wire only, and wires is "
                f'{list(self.wires)}; add "1.0" to wires or drop {", ".join(lone)} '
                "(docs/reference/a2a-client-contract.md#bindings)"
            )
        return self

    def argv(self) -> list[str]:
        return [sys.executable if part == "{python}" else part for part in self.command]


def load_client_target(path: str | Path | None) -> ClientTarget:
    """The target in ``path`` (default: the bundled reference client); raises
    :class:`TargetConfigError` naming the file and the field."""
    file = Path(path) if path is not None else DEFAULT_CLIENT_TARGET
    return load_target_file(file, ClientTarget, "a2a-client")


def client_environment(
    target: ClientTarget,
    *,
    url: str,
    prompt: str,
    deadline_s: float,
    idle_s: float,
    task_id: str | None = None,
    context_id: str | None = None,
    bug: str | None = None,
    proxy: str | None = None,
    binding: Binding = "jsonrpc",
    push: bool = False,
) -> dict[str, str]:
    """The process environment of one turn: the harness's own (minus ``STREAMPROOF_*``), the
    target's ``env``, then the contract's variables. With ``proxy`` (a forward proxy's URL),
    ``HTTP_PROXY`` points at it and ``NO_PROXY`` is emptied, so loopback is not exempt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONTRACT_PREFIX)}
    env.update(target.env)
    env.update(
        {
            "STREAMPROOF_A2A_URL": url,
            "STREAMPROOF_A2A_BINDING": binding,
            "STREAMPROOF_PROMPT": prompt,
            "STREAMPROOF_DEADLINE_S": f"{deadline_s:g}",
            "STREAMPROOF_IDLE_S": f"{idle_s:g}",
        }
    )
    if proxy is not None:
        for name in ("HTTP_PROXY", "http_proxy"):
            env[name] = proxy
        for name in ("NO_PROXY", "no_proxy"):
            env[name] = ""
    if push:
        env["STREAMPROOF_A2A_PUSH"] = "1"
    if task_id is not None:
        env["STREAMPROOF_TASK_ID"] = task_id
    if context_id is not None:
        env["STREAMPROOF_CONTEXT_ID"] = context_id
    if bug is not None:
        check_target_bug(target, bug)
        assert target.bug_env is not None
        env[target.bug_env] = bug
    return env


def check_target_bug(target: ClientTarget, bug: str) -> None:
    """Raise :class:`TargetConfigError` unless ``--bug`` can reach ``target``."""
    check_bug(target.name, target.bug_env, target.bugs, bug)


class _TimedOutput(OutputTail):
    """The output tail, plus when each stdout line arrived and which ones were results."""

    def __init__(self) -> None:
        super().__init__()
        self.last_stdout: tuple[float, str] | None = None
        self.result_lines = 0
        self.stdout: list[str] = []
        self.stderr: list[str] = []

    def add(self, stream: str, line: str) -> None:
        super().add(stream, line)
        keep = self.stdout if stream == "stdout" else self.stderr
        keep.append(line)
        del keep[:-_TAIL_LINES]
        if stream == "stdout" and line.strip():
            self.last_stdout = (time.monotonic(), line)
            if looks_like_result(line):
                self.result_lines += 1

    def tails(self) -> tuple[str, str]:
        return "\n".join(self.stdout), "\n".join(self.stderr)


class _ClientProcess(TargetProcess):
    """A turn's process: adds waiting for exit."""

    async def wait_exit(self, timeout: float) -> bool:
        """Whether the process exited within ``timeout`` seconds."""
        proc = self._proc
        if proc is None:
            return True
        try:
            await asyncio.wait_for(proc.wait(), max(timeout, 0.0))
        except TimeoutError:
            return False
        return True


FirstRequest = Callable[[float], float | None]
"""Given a turn's start (seconds since the scenario's epoch), when the server saw that turn's
first request (same clock), or None while it has seen none."""


async def _wait_within_bound(
    process: _ClientProcess,
    *,
    end: float,
    allowed: float,
    epoch: float,
    after: float,
    first_request: FirstRequest | None,
) -> tuple[bool, float]:
    """Whether the process exited by ``end`` (``time.monotonic()``), or, when the server saw
    its first request, by ``allowed`` seconds after that request, whichever is later; and that
    bound (``time.monotonic()``)."""
    while True:
        if await process.wait_exit(end - time.monotonic()):
            return True, end
        first = first_request(after) if first_request is not None else None
        if first is None:
            return False, end
        later = epoch + first + allowed
        if later <= time.monotonic() + _BOUND_EPSILON_S:
            return False, end
        end = later


_BOUND_EPSILON_S: Final = 0.001


def _show(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines()) if text else "    (nothing)"


def _failure(kind: FailureKind, what: str, stdout: str, stderr: str) -> ClientFailure:
    return ClientFailure(
        kind=kind, message=f"{what}\n  stdout:\n{_show(stdout)}\n  stderr:\n{_show(stderr)}"
    )


async def run_client_turn(
    target: ClientTarget,
    *,
    url: str,
    prompt: str,
    deadline_s: float,
    idle_s: float,
    grace_s: float,
    epoch: float,
    turn: int = 0,
    task_id: str | None = None,
    context_id: str | None = None,
    bug: str | None = None,
    time_scale: float = 1.0,
    proxy: str | None = None,
    first_request: FirstRequest | None = None,
    binding: Binding = "jsonrpc",
    push: bool = False,
) -> ClientRun:
    """Run the client once and record what it did. ``deadline_s``, ``idle_s`` and ``grace_s``
    are already scaled (by ``time_scale``, which messages use to give both clocks); ``epoch``
    is the scenario's ``time.monotonic()`` origin.

    The process may run ``deadline_s + max(grace_s, 1 s) + startup_grace``; then it is killed
    and the turn is a ``hang``. With ``first_request`` (when the server saw the turn's first
    request), it may also run ``deadline_s + max(grace_s, 1 s)`` from that request: the
    contract's time limits count from the first request, so an interpreter or JVM that takes
    longer than ``startup_grace`` to boot on a loaded machine is not killed inside its own
    deadline. Raises :class:`TargetConfigError` for a ``bug`` the target
    cannot take; every other problem is recorded in the returned run's ``failure``.
    """
    env = client_environment(
        target,
        url=url,
        prompt=prompt,
        deadline_s=deadline_s,
        idle_s=idle_s,
        task_id=task_id,
        context_id=context_id,
        bug=bug,
        proxy=proxy,
        binding=binding,
        push=push,
    )
    allowed = deadline_s + max(grace_s, MIN_GRACE_S)
    bound = allowed + target.startup_grace
    deadline_text = f"deadline {on_both_clocks(deadline_s, time_scale)} + grace"
    process = _ClientProcess(
        target.name, target.argv(), env, cwd=target.cwd, warm=target.warm_start
    )
    output = _TimedOutput()
    process.output = output
    t_start = time.monotonic()

    def since(moment: float) -> float:
        return round(moment - epoch, 4)

    base: dict[str, object] = {
        "turn": turn,
        "prompt": prompt,
        "task_id_given": task_id,
        "context_id_given": context_id,
        "deadline_s": deadline_s,
        "idle_s": idle_s,
        "bound_s": round(bound, 4),
        "t_start": since(t_start),
    }
    try:
        await process.start()
    except TargetError as exc:
        return ClientRun.model_validate(
            {**base, "failure": ClientFailure(kind="start", message=str(exc))}
        )
    try:
        exited, until = await _wait_within_bound(
            process,
            end=t_start + bound,
            allowed=allowed,
            epoch=epoch,
            after=since(t_start),
            first_request=first_request,
        )
        t_exit = time.monotonic()
        base["bound_s"] = round(until - t_start, 4)
        if exited:
            await process.drain(DRAIN_S)
    finally:
        await process.close(grace=1.0)
    ran = t_exit - t_start
    running_for = f"still running {on_both_clocks(ran, time_scale)} after it started"
    exit_code = process.returncode if exited else None
    stdout, stderr = output.tails()
    last = output.last_stdout
    result: ClientResult | None = None
    failure: ClientFailure | None = None
    t_result: float | None = None
    if last is not None:
        try:
            result = parse_result_line(last[1])
            t_result = since(last[0])
        except ValueError as exc:
            problem = str(exc)
            if not exited:
                failure = _failure(
                    "hang",
                    f"the client was {running_for} ({deadline_text}) and was killed; {problem}",
                    stdout,
                    stderr,
                )
            elif exit_code:
                failure = _failure(
                    "crash", f"the client exited with code {exit_code}; {problem}", stdout, stderr
                )
            else:
                failure = _failure("bad-result", problem, stdout, stderr)
    if result is None and failure is None:
        if not exited:
            failure = _failure(
                "hang",
                f"the client printed no result and was {running_for} ({deadline_text}); "
                "it was killed",
                stdout,
                stderr,
            )
        elif exit_code:
            failure = _failure(
                "crash",
                f"the client exited with code {exit_code} without printing a result line",
                stdout,
                stderr,
            )
        else:
            failure = _failure(
                "no-result",
                "the client exited without printing a result line (the last stdout line must "
                "be the result JSON object)",
                stdout,
                stderr,
            )
    if result is not None and not exited:
        # A result was printed, but the process did not exit: the call is over (the result is
        # what counts), yet the contract says the client exits; the harness killed it.
        failure = _failure(
            "hang",
            f"the client printed its result but was {running_for}; it was killed",
            stdout,
            stderr,
        )
    return ClientRun.model_validate(
        {
            **base,
            "t_result": t_result,
            "t_exit": since(t_exit),
            "exit_code": exit_code,
            "result": result,
            "failure": failure,
            "result_lines": output.result_lines,
            "stdout_tail": stdout,
            "stderr_tail": stderr,
        }
    )
