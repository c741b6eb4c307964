"""Running one of the Node oracle scripts (``oracles/node/*.mjs``) over a captured stream.

The scripts read the stream as SSE on stdin and print one JSON document. The stream is given as
its events' data (what the observation's frames hold) and encoded here as ``data:`` blocks, one
event per payload, so event ``i`` in the script is payload ``i``. Every run is bounded; every
failure says what to do: no Node, no ``node_modules`` (or one that does not match the lockfile),
a timeout, a script that crashed or printed something else than its document.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ValidationError

from streamproof.protocol.sse import encode
from streamproof.suites.gateway.oracles.errors import OracleFailed, OracleUnavailable

__all__ = [
    "INSTALL_COMMAND",
    "NODE_DIR",
    "encode_payloads",
    "require_installed",
    "run_script",
]

NODE_DIR: Final = Path(__file__).resolve().parent / "node"
INSTALL_COMMAND: Final = "scripts/install-node-oracles"
"""Installs ``NODE_DIR/node_modules`` from the committed lockfile (``npm ci``)."""
NODE_MAJOR: Final = 20
"""The oldest Node the oracles are run on (``ai`` 7 declares 22; its reader and schema were
measured working on 20)."""
_TAIL: Final = 2000
_VERSION_TIMEOUT: Final = 10.0


def encode_payloads(payloads: Sequence[str]) -> bytes:
    """The events as an SSE stream, one ``data:`` block per payload.

    An empty payload is refused: SSE never dispatches an event with empty data, so it would
    shift every later index.
    """
    for index, payload in enumerate(payloads):
        if payload == "":
            raise ValueError(
                f"payload {index} is empty: an SSE event with empty data is never dispatched"
            )
    return b"".join(encode(payload) for payload in payloads)


@functools.cache
def _node_version(node: str) -> str:
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, timeout=_VERSION_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return done.stdout.decode("utf-8", "replace").strip()


def _node(package: str) -> str:
    """The ``node`` executable, at least :data:`NODE_MAJOR`."""
    how = f"install Node.js >= {NODE_MAJOR} with npm, then run {INSTALL_COMMAND}"
    node = shutil.which("node")
    if node is None:
        raise OracleUnavailable(f"the {package} oracle runs in Node, and no node is on PATH: {how}")
    version = _node_version(node)
    major = version.removeprefix("v").split(".", 1)[0]
    if not major.isdigit() or int(major) < NODE_MAJOR:
        raise OracleUnavailable(f"the {package} oracle needs Node >= {NODE_MAJOR}, not {version}")
    return node


def require_installed(package: str) -> str:
    """The ``node`` to run ``package``'s oracle with, once Node and the package (at the locked
    version) are found installed; :class:`OracleUnavailable` says what is missing."""
    node = _node(package)
    _installed_version(package)
    return node


def _installed_version(package: str) -> str:
    """The installed version of ``package``, checked against the lockfile's."""
    how = f"run {INSTALL_COMMAND} (npm ci in {NODE_DIR.name}/)"
    meta = NODE_DIR / "node_modules" / package / "package.json"
    if not meta.is_file():
        raise OracleUnavailable(f"the npm package {package} is not installed: {how}")
    installed = str(json.loads(meta.read_text(encoding="utf-8"))["version"])
    lock = json.loads((NODE_DIR / "package-lock.json").read_text(encoding="utf-8"))
    entry = lock.get("packages", {}).get(f"node_modules/{package}")
    if entry is None:
        raise OracleFailed(f"{NODE_DIR.name}/package-lock.json does not pin {package}")
    locked = str(entry["version"])
    if installed != locked:
        raise OracleUnavailable(
            f"node_modules holds {package} {installed} but package-lock.json pins {locked}: {how}"
        )
    return installed


def run_script[Report: BaseModel](
    script: str, package: str, payloads: Sequence[str], timeout: float, report: type[Report]
) -> Report:
    """Run ``NODE_DIR/script`` over the payloads and return the document it printed, read as
    ``report``.

    ``package`` is the npm package the script runs (checked installed at the locked version).
    """
    node = require_installed(package)
    stream = encode_payloads(payloads)
    try:
        done = subprocess.run(
            [node, str(NODE_DIR / script)],
            input=stream,
            capture_output=True,
            timeout=timeout,
            cwd=NODE_DIR,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OracleFailed(
            f"{script} ({package}) gave no result within {timeout:g} s over {len(payloads)} "
            "events; it was stopped"
        ) from exc
    stderr = done.stderr.decode("utf-8", "replace")[-_TAIL:]
    if done.returncode != 0:
        raise OracleFailed(
            f"{script} ({package}) exited with status {done.returncode}: {stderr.strip()}"
        )
    out = done.stdout.decode("utf-8", "replace")
    try:
        return report.model_validate_json(out)
    except ValidationError as exc:
        raise OracleFailed(
            f"{script} ({package}) printed no {report.__name__} document ({exc.error_count()} "
            f"errors: {exc.errors()[0]['msg']}): {out[:_TAIL]!r}; stderr: {stderr}"
        ) from exc
