"""The toxiproxy server of a harness session, and the few calls of its HTTP API the engine makes.

The server is a subprocess in its own process group (:class:`~streamproof.targets.process.
TargetProcess`), on 127.0.0.1 and a free port, ready once its API answers, killed on close and
by the harness's exit handler if the harness dies first. Its JSON log lines go to a callback:
the engine reads the ``Accepted client`` lines to pair each proxied connection with the
client's address (see :mod:`~streamproof.faults.engines.toxiproxy`).

The binary is, in order: ``$STREAMPROOF_TOXIPROXY``, the project's own build
(``.tools/bin/toxiproxy-server``, made by ``scripts/bootstrap``), ``toxiproxy-server`` on PATH.

The API is driven with aiohttp (toxiproxy-python blocks the event loop, keeps one server per
process and cannot update a toxic: docs/explanation/wire-facts/engines.md §1).
:meth:`ToxiproxyAPI.call_blocking`
is the one exception, for :meth:`~streamproof.faults.engines.link.FaultLink.load`, which is
synchronous yet must have toxiproxy ready before the next client connects (about 1 ms per call,
on loopback, bounded). Every failure names the call and what toxiproxy answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import aiohttp

from streamproof.faults.engines.link import EngineUnavailable
from streamproof.targets.errors import TargetError
from streamproof.targets.process import OutputTail, TargetProcess

__all__ = [
    "BINARY_ENV",
    "PROJECT_BINARY",
    "TOXIPROXY_VERSION",
    "ToxiproxyAPI",
    "ToxiproxyError",
    "ToxiproxyServer",
    "find_binary",
]

TOXIPROXY_VERSION: Final = "v2.12.0"
BINARY_ENV: Final = "STREAMPROOF_TOXIPROXY"
PROJECT_BINARY: Final = Path(__file__).resolve().parents[5] / ".tools" / "bin" / "toxiproxy-server"
_USER_AGENT: Final = "streamproof"
"""The API answers 403 to a browser's User-Agent (``Mozilla/...``)."""
_READY_TIMEOUT: Final = 10.0
_CALL_TIMEOUT: Final = 10.0
_PORT_ATTEMPTS: Final = 3


class ToxiproxyError(RuntimeError):
    """The toxiproxy server failed or its API refused a call; the message says which and why."""


def find_binary() -> Path:
    """The toxiproxy-server to run; raises :class:`EngineUnavailable` saying how to get one."""
    given = os.environ.get(BINARY_ENV)
    if given:
        path = Path(given)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise EngineUnavailable(
            f"{BINARY_ENV}={given} is not an executable file; point it at a toxiproxy-server "
            f"{TOXIPROXY_VERSION} binary, or unset it to use the project's own build"
        )
    if PROJECT_BINARY.is_file() and os.access(PROJECT_BINARY, os.X_OK):
        return PROJECT_BINARY
    on_path = shutil.which("toxiproxy-server")
    if on_path is not None:
        return Path(on_path)
    raise EngineUnavailable(
        f"the toxiproxy engine needs toxiproxy-server {TOXIPROXY_VERSION}, which is not built "
        f"(looked for ${BINARY_ENV}, {PROJECT_BINARY} and toxiproxy-server on PATH): run "
        "scripts/bootstrap (or `make tools`) on a machine with Go >= 1.23, or set "
        f"{BINARY_ENV} to a toxiproxy-server binary"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class _LogTail(OutputTail):
    """The server's output, kept for error messages, with each JSON log line handed on."""

    def __init__(self, on_log: Callable[[dict[str, Any]], None] | None) -> None:
        super().__init__()
        self._on_log = on_log

    def add(self, stream: str, line: str) -> None:
        super().add(stream, line)
        if self._on_log is None or not line.startswith("{"):
            return
        try:
            entry = json.loads(line)
        except ValueError:
            return
        if isinstance(entry, dict):
            self._on_log(entry)


class ToxiproxyServer:
    """One toxiproxy-server process: :meth:`start`, then :meth:`close` (always)."""

    def __init__(
        self, binary: Path, *, on_log: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.binary = binary
        self._on_log = on_log
        self._process: TargetProcess | None = None
        self.api_url = ""

    @property
    def pid(self) -> int | None:
        """The server's pid (also its process group's id), while it runs."""
        return None if self._process is None else self._process.pid

    async def start(self, session: aiohttp.ClientSession) -> str:
        """Start the server on a free loopback port; its API's base URL once it answers."""
        if self._process is not None:
            raise RuntimeError("the toxiproxy server is already running")
        last = ""
        for _ in range(_PORT_ATTEMPTS):
            port = _free_port()
            process = TargetProcess(
                "toxiproxy",
                [str(self.binary), "-host", "127.0.0.1", "-port", str(port)],
                # info: the "Accepted client" lines the engine reads; no per-call debug lines.
                {**os.environ, "LOG_LEVEL": "info"},
            )
            process.output = _LogTail(self._on_log)
            try:
                await process.start()
            except TargetError as exc:
                raise EngineUnavailable(f"cannot run toxiproxy-server: {exc}") from None
            url = f"http://127.0.0.1:{port}"
            try:
                ready = await self._wait_ready(process, session, url)
            except BaseException:
                await process.close(grace=1.0)
                raise
            if ready:
                self._process, self.api_url = process, url
                return url
            await process.drain()
            last = process.output.text()
            await process.close(grace=1.0)
            if "address already in use" not in last:
                break  # not a port race: trying again would fail the same way
        raise ToxiproxyError(
            f"toxiproxy-server ({self.binary}) did not start: its API did not answer within "
            f"{_READY_TIMEOUT:g}s.\nIts output:\n{last}"
        )

    @staticmethod
    async def _wait_ready(process: TargetProcess, session: aiohttp.ClientSession, url: str) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _READY_TIMEOUT
        while loop.time() < deadline:
            if process.returncode is not None:
                return False
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                async with session.get(
                    f"{url}/version", timeout=aiohttp.ClientTimeout(total=1.0)
                ) as response:
                    if response.status == 200:
                        return True
            await asyncio.sleep(0.02)
        return False

    async def close(self) -> None:
        """Kill the server (its whole process group); safe to call twice."""
        process, self._process = self._process, None
        self.api_url = ""
        if process is not None:
            await process.close(grace=2.0)


def _failure(method: str, path: str, status: int, text: str) -> ToxiproxyError:
    message = text.strip()
    with contextlib.suppress(ValueError, AttributeError):
        message = str(json.loads(text).get("error", message))
    return ToxiproxyError(f"toxiproxy API {method} {path} answered {status}: {message}")


class ToxiproxyAPI:
    """The HTTP API of one running server (``POST /proxies``, ``.../toxics`` and so on)."""

    def __init__(self, base_url: str, session: aiohttp.ClientSession) -> None:
        self.base_url = base_url.rstrip("/")
        self._session = session

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One API call; the decoded JSON answer (``None`` for an empty one)."""
        try:
            async with self._session.request(
                method,
                self.base_url + path,
                json=body,
                headers={"User-Agent": _USER_AGENT},
                timeout=aiohttp.ClientTimeout(total=_CALL_TIMEOUT),
            ) as response:
                text = await response.text()
                status = response.status
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise ToxiproxyError(
                f"toxiproxy API {method} {path} at {self.base_url} failed: {exc!r}"
            ) from None
        if status >= 300:
            raise _failure(method, path, status, text)
        return json.loads(text) if text.strip() else None

    def call_blocking(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """The same call, blocking the event loop; only for what must be in place before the
        caller's next line runs (see the module docstring)."""
        host, _, port = self.base_url.removeprefix("http://").rpartition(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=_CALL_TIMEOUT)
        payload = None if body is None else json.dumps(body).encode()
        headers = {"User-Agent": _USER_AGENT, "Content-Type": "application/json"}
        try:
            connection.request(method, path, body=payload, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
            status = response.status
        except (OSError, http.client.HTTPException) as exc:
            raise ToxiproxyError(
                f"toxiproxy API {method} {path} at {self.base_url} failed: {exc!r}"
            ) from None
        finally:
            connection.close()
        if status >= 300:
            raise _failure(method, path, status, text)
        return json.loads(text) if text.strip() else None
