"""A target started as a command: its own process group, captured output, bounded waits.

Whatever happens (a gateway that never becomes ready, a crash, a harness error), the whole
process group is killed when the target is closed, and a finaliser kills it if the harness
itself dies first, so no process outlives the run. A target that declares ``warm_start`` is
forked from a zygote that imported its module once (:mod:`streamproof.targets.warm`), and is
started the ordinary way whenever that would not be exact.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import re
import signal
from collections import deque
from collections.abc import Mapping, Sequence

from streamproof.targets.errors import TargetError
from streamproof.targets.warm import WarmChild, start_warm

_LIVE_GROUPS: set[int] = set()
_COLD_SAID: set[str] = set()
"""Why a warm start was not made, each said once per process (a speed matter, not a verdict)."""
_log = logging.getLogger("streamproof.targets")


def _kill_leftovers() -> None:
    for pgid in list(_LIVE_GROUPS):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


atexit.register(_kill_leftovers)


class OutputTail:
    """The last lines a process wrote, for error messages and reports."""

    def __init__(self, limit: int = 200) -> None:
        self.lines: deque[str] = deque(maxlen=limit)
        self.changed = asyncio.Event()

    def add(self, stream: str, line: str) -> None:
        self.lines.append(f"[{stream}] {line}")
        self.changed.set()

    def text(self, limit: int = 40) -> str:
        lines = list(self.lines)[-limit:]
        return "\n".join(lines) if lines else "(no output)"


class TargetProcess:
    """One started command. Use :meth:`start`, then :meth:`close` (always)."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: str | None = None,
        *,
        warm: bool = False,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.cwd = cwd
        """The folder the command runs in; None: the harness's own working directory."""
        self.output = OutputTail()
        self.warm = warm
        """Start it from a zygote when that is exact (the target file's ``warm_start``)."""
        self.cold_reason: str | None = None
        """Why a ``warm`` process was started the ordinary way (None: it started warm)."""
        self._proc: asyncio.subprocess.Process | WarmChild | None = None
        self._readers: list[asyncio.Task[None]] = []

    @property
    def pid(self) -> int | None:
        """The started process's pid, which is also its process group's id."""
        return None if self._proc is None else self._proc.pid

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.returncode

    async def start(self) -> None:
        if self.warm:
            started = await start_warm(self.argv, self.env, self.cwd)
            if isinstance(started, WarmChild):
                self._started(started)
                return
            self.cold_reason = started
            if started not in _COLD_SAID:
                _COLD_SAID.add(started)
                _log.warning("target %r started the ordinary way: %s", self.name, started)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                env=self.env,
                cwd=self.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise TargetError(
                f"target {self.name!r}: cannot start command {self.argv!r}: {exc.strerror or exc}"
            ) from None
        self._started(proc)

    def _started(self, proc: asyncio.subprocess.Process | WarmChild) -> None:
        self._proc = proc
        _LIVE_GROUPS.add(proc.pid)
        assert proc.stdout is not None and proc.stderr is not None
        self._readers = [
            asyncio.create_task(self._pump("stdout", proc.stdout)),
            asyncio.create_task(self._pump("stderr", proc.stderr)),
        ]

    async def _pump(self, name: str, stream: asyncio.StreamReader) -> None:
        while True:
            try:
                raw = await stream.readline()
            except (ValueError, asyncio.LimitOverrunError):
                raw = await stream.read(65536)
            if not raw:
                return
            self.output.add(name, raw.decode("utf-8", "replace").rstrip("\r\n"))

    async def wait_for_line(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        """The first output line matching ``pattern``; fails if the process exits or times out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        seen = 0
        while True:
            lines = list(self.output.lines)
            for line in lines[seen:]:
                match = pattern.search(line)
                if match:
                    return match
            seen = len(lines)
            if self.returncode is not None:
                # It is gone: read what is left in its pipes before judging, so a line it
                # printed just before exiting is neither missed nor left out of the message.
                await self.drain()
                for line in list(self.output.lines)[seen:]:
                    match = pattern.search(line)
                    if match:
                        return match
                raise TargetError(
                    f"target {self.name!r} exited with code {self.returncode} before printing "
                    f"a line matching {pattern.pattern!r}.\nIts output:\n{self.output.text()}"
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TargetError(
                    f"target {self.name!r} printed no line matching {pattern.pattern!r} within "
                    f"{timeout:g}s.\nIts output:\n{self.output.text()}"
                )
            self.output.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.output.changed.wait(), min(remaining, 0.1))

    async def drain(self, timeout: float = 2.0) -> None:
        """Wait (bounded) until the output readers have read the pipes to their end."""
        if self._readers:
            await asyncio.wait(self._readers, timeout=timeout)

    async def close(self, grace: float = 3.0) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                pass
        # Kill whatever is left of the group (children the target started) in every case.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), grace)
        _LIVE_GROUPS.discard(proc.pid)
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
