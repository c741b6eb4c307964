"""A whole command run to its end, forked from a zygote when it can be: for a process that
runs many ``python -m streamproof.cli`` commands one after another or side by side
(``streamproof mutants``, the harness's own tests), where each would otherwise import the same
modules again. What the caller gets is what :func:`subprocess.run` with ``capture_output`` and
``text`` gives; a command that cannot be started warm is started the ordinary way."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from typing import Final

from streamproof.targets.warm.pool import WarmChild, start_warm

__all__ = ["RUN_PRELOAD", "run_to_end"]

RUN_PRELOAD: Final = ("streamproof.cli.preload",)
"""The preload of ``python -m streamproof.cli`` commands: what a ``streamproof run`` imports
anyway (named, not imported: this layer does not import the command line)."""

_KILLED_WAIT_S = 10.0


def run_to_end(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    timeout: float,
    preload: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end with its output captured as text, as ``subprocess.run(argv,
    cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)`` does, but warm
    (its zygote imported ``preload`` too) when it can be. Past ``timeout`` its process group
    is killed and :class:`subprocess.TimeoutExpired` raised. Its stdin is empty."""
    done = asyncio.run(_warm(argv, env, cwd, timeout, preload))
    if isinstance(done, subprocess.CompletedProcess):
        return done
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


async def _warm(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    timeout: float,
    preload: Sequence[str],
) -> subprocess.CompletedProcess[str] | str:
    child = await start_warm(argv, env, cwd, preload)
    if isinstance(child, str):
        return child
    try:
        out, err, code = await asyncio.wait_for(
            asyncio.gather(child.stdout.read(), child.stderr.read(), child.wait()), timeout
        )
    except TimeoutError:
        await _kill(child)
        raise subprocess.TimeoutExpired(list(argv), timeout) from None
    except BaseException:
        await _kill(child)
        raise
    return subprocess.CompletedProcess(list(argv), code, _text(out), _text(err))


async def _kill(child: WarmChild) -> None:
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(child.wait(), _KILLED_WAIT_S)


def _text(data: bytes) -> str:
    """As ``text=True`` reads it: universal newlines."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
