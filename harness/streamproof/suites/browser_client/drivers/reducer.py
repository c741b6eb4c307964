"""A reducer module run in Node over a scenario's frames: ``reduce.mjs`` imports the module,
folds the frames through its ``reduce`` and prints each state as a JSON line
(docs/reference/browser-client-contract.md#a-reducer-module)."""

from __future__ import annotations

import asyncio
import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any, Final

from streamproof.targets.errors import TargetError

__all__ = ["run_reducer"]

NODE_TIMEOUT_S: Final = 30.0


def _runner() -> Path:
    return Path(str(resources.files(__package__).joinpath("reduce.mjs")))


async def run_reducer(
    module: str, frames: list[dict[str, Any]], bug: str | None
) -> list[dict[str, Any]]:
    """The states ``module``'s reducer went through: the initial one, then one per frame;
    :class:`TargetError` when Node is missing, the module cannot be loaded, or it throws."""
    node = shutil.which("node")
    if node is None:
        raise TargetError("a reducer module runs in Node: install Node.js >= 20 (node on PATH)")
    proc = await asyncio.create_subprocess_exec(
        node,
        str(_runner()),
        module,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    payload = json.dumps({"frames": frames, "bug": bug}).encode("utf-8")
    try:
        out, err = await asyncio.wait_for(proc.communicate(payload), NODE_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise TargetError(
            f"the reducer {module} did not finish {len(frames)} frames within {NODE_TIMEOUT_S:g}s"
        ) from None
    lines = [json.loads(line) for line in out.decode("utf-8", "replace").splitlines() if line]
    failed = next((line["error"] for line in lines if "error" in line), None)
    if failed is not None or proc.returncode != 0:
        why = failed or err.decode("utf-8", "replace").strip()[-2000:] or f"exit {proc.returncode}"
        raise TargetError(f"the reducer {module}: {why}")
    return [line["state"] for line in lines]
