"""Building a target before it starts: a target file's ``build`` key.

A reference written in another language (the ADK Java gateway, the a2a-java client) builds
itself: the harness runs the build command once, remembers what it built from, and skips it
while the inputs are unchanged and every output is there. Builds of one folder are serialised
with a lock file, so parallel runs (``streamproof mutants --jobs 2``) share one build. Every
wait is bounded: a build still running at its timeout has its whole process group killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import signal
import sys
from collections import deque
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from streamproof.core.durations import Duration
from streamproof.targets.errors import TargetConfigError, TargetError

STAMP: Final = ".streamproof-build.stamp"
"""Written into the build folder after a good build: the digest it was built from."""
LOCK: Final = ".streamproof-build.lock"
_TAIL: Final = 40
_BUILT: set[tuple[str, str]] = set()
"""(folder, digest) pairs built or found up to date in this process: checked once per run."""


class Build(BaseModel):
    """How to build the target before its command runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: tuple[str, ...] = Field(min_length=1)
    """argv, run in ``cwd``; ``{python}`` is replaced by the harness's interpreter."""
    cwd: str | None = None
    """The folder the build runs in, relative to the target file; default: the target file's
    folder."""
    inputs: tuple[str, ...] = ()
    """Files or folders (relative to ``cwd``) whose content decides whether to rebuild; none:
    rebuilt only when an output is missing or the command changed."""
    outputs: tuple[str, ...] = ()
    """Files (relative to ``cwd``) that must exist after a build; a missing one forces it."""
    timeout: Duration = 900.0
    """Real seconds the build may take (not scaled); then its process group is killed."""

    @field_validator("command")
    @classmethod
    def _program(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v[0].strip():
            raise ValueError("the build command's program (its first word) is empty")
        return v

    @field_validator("inputs", "outputs")
    @classmethod
    def _relative(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for path in v:
            if not path or Path(path).is_absolute() or ".." in Path(path).parts:
                raise ValueError(f"{path!r} must be a path inside the build folder")
        return v

    def argv(self) -> list[str]:
        return [sys.executable if part == "{python}" else part for part in self.command]

    def folder(self) -> Path:
        return Path(self.cwd) if self.cwd is not None else Path.cwd()


def digest(build: Build) -> str:
    """What the build is made from: its command and every input file's path and bytes."""
    folder = build.folder()
    h = hashlib.sha256(json.dumps(list(build.command)).encode())
    for name in sorted(build.inputs):
        root = folder / name
        if not root.exists():
            raise TargetConfigError(
                f"build.inputs: {name!r} does not exist (looked at {root.resolve()})"
            )
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for file in files:
            h.update(file.relative_to(folder).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(file.read_bytes()).digest())
    return h.hexdigest()


def up_to_date(build: Build, wanted: str) -> bool:
    """Whether the last good build in the folder was made from ``wanted`` and left every
    output in place."""
    folder = build.folder()
    try:
        stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(stamp, dict) or stamp.get("digest") != wanted:
        return False
    return all((folder / out).is_file() for out in build.outputs)


async def ensure_built(name: str, build: Build) -> None:
    """Build target ``name`` unless it is up to date; raises :class:`TargetError` (the build
    failed, timed out, or its program is missing) or :class:`TargetConfigError` (its folder or
    an input does not exist)."""
    folder = build.folder()
    if not folder.is_dir():
        raise TargetConfigError(f"target {name!r}: build.cwd {str(folder)!r} is not a folder")
    wanted = digest(build)
    if (str(folder), wanted) in _BUILT:
        return
    lock = await _lock(name, folder, build.timeout)
    try:
        if not up_to_date(build, wanted):
            (folder / STAMP).unlink(missing_ok=True)
            await _run(name, build)
            missing = [out for out in build.outputs if not (folder / out).is_file()]
            if missing:
                raise TargetError(
                    f"target {name!r}: the build succeeded but left no {', '.join(missing)} "
                    f"in {folder}"
                )
            record = {"digest": wanted, "command": list(build.command)}
            (folder / STAMP).write_text(json.dumps(record) + "\n", encoding="utf-8")
        _BUILT.add((str(folder), wanted))
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)


async def _lock(name: str, folder: Path, timeout: float) -> int:
    """The folder's build lock, waited for (bounded) while another run builds there."""
    fd = os.open(folder / LOCK, os.O_CREAT | os.O_RDWR, 0o644)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if loop.time() >= deadline:
                os.close(fd)
                raise TargetError(
                    f"target {name!r}: another build in {folder} held its lock for more than "
                    f"{timeout:g}s"
                ) from None
            await asyncio.sleep(0.2)


async def _run(name: str, build: Build) -> None:
    argv = build.argv()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=build.folder(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        raise TargetError(
            f"target {name!r}: cannot run its build command {argv!r}: {exc.strerror or exc}"
        ) from None
    tail: deque[str] = deque(maxlen=_TAIL)

    async def pump() -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            tail.append(line.decode("utf-8", "replace").rstrip("\r\n"))

    reader = asyncio.create_task(pump())
    try:
        await asyncio.wait_for(proc.wait(), build.timeout)
    except TimeoutError:
        raise TargetError(
            f"target {name!r}: its build {argv!r} did not finish within {build.timeout:g}s.\n"
            f"Its output:\n{_show(tail)}"
        ) from None
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 5.0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reader, 5.0)
        reader.cancel()
    if proc.returncode != 0:
        raise TargetError(
            f"target {name!r}: its build {argv!r} failed with exit code {proc.returncode} "
            f"(in {build.folder()}).\nIts output:\n{_show(tail)}"
        )


def _show(tail: deque[str]) -> str:
    return "\n".join(tail) if tail else "(no output)"
