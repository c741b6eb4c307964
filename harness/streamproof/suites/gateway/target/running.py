"""A started (or attached) gateway: its process, its address, its endpoints; how it is
started with the contract's environment and waited for until ready (:class:`.config.Ready`).
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
from collections.abc import Mapping
from urllib.parse import urlsplit

import aiohttp

from streamproof.suites.gateway.target.config import GatewayTarget
from streamproof.targets.bugs import check_bug
from streamproof.targets.build import ensure_built
from streamproof.targets.errors import TargetError
from streamproof.targets.process import TargetProcess
from streamproof.targets.sockets import free_port, group_owns_listener, listener_pids

__all__ = ["RunningGateway", "start_gateway"]


def _in_use(port: int) -> bool:
    """Whether something already listens on 127.0.0.1:``port``."""
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _holders(port: int) -> str:
    """`` (pid 123)`` naming who listens on ``port``, when that can be seen."""
    pids = listener_pids(port)
    return f" (pid {', '.join(map(str, sorted(pids)))})" if pids else ""


class RunningGateway:
    """A gateway the harness can talk to: a base URL, and the process if it started one."""

    def __init__(self, target: GatewayTarget, base_url: str, process: TargetProcess | None) -> None:
        self.target = target
        self.base_url = base_url.rstrip("/")
        self.process = process

    def endpoint(
        self, which: str, session_id: str, *, base: str | None = None
    ) -> tuple[str, str] | None:
        """``(method, url)`` of an endpoint, on ``base`` (a link in front) or the gateway."""
        template: str | None = getattr(self.target.endpoints, which)
        if template is None:
            return None
        method, path = template.split(" ", 1)
        root = (base or self.base_url).rstrip("/")
        return method, root + path.replace("{sessionId}", session_id)

    def log(self) -> str:
        return self.process.output.text() if self.process is not None else ""

    async def close(self) -> None:
        if self.process is not None:
            await self.process.close()

    def crashed(self) -> str | None:
        if self.process is not None and self.process.returncode is not None:
            return (
                f"the gateway process exited with code {self.process.returncode}.\n"
                f"Its output:\n{self.process.output.text()}"
            )
        return None


async def start_gateway(
    target: GatewayTarget,
    contract_env: Mapping[str, str],
    *,
    bug: str | None = None,
    ready_scale: float = 1.0,
) -> RunningGateway:
    """Start (or attach to) the gateway and wait until it answers HTTP."""
    if bug is not None:
        check_bug(target.name, target.bug_env, target.bugs, bug)
    timeout = target.ready.timeout * max(ready_scale, 1.0)
    if target.url is not None:
        gateway = RunningGateway(target, target.url, None)
        await _wait_ready(gateway, timeout)
        return gateway
    assert target.command is not None
    if target.build is not None:
        await ensure_built(target.name, target.build)
    port = free_port() if target.port == "auto" else target.port
    if port and _in_use(port):
        # Another process would answer readiness and the scenarios would run against it.
        raise TargetError(
            f"target {target.name!r}: port {port} (the target file's 'port') is already in use "
            f"on 127.0.0.1{_holders(port)}; stop what listens there, or use port: 0 or auto"
        )
    env = {
        **_clean_environment(),
        **target.env,
        **contract_env,
        "PORT": str(port),
    }
    if bug is not None and target.bug_env is not None:
        env[target.bug_env] = bug
    argv = target.argv(port)
    process = TargetProcess(target.name, argv, env, cwd=target.cwd, warm=target.warm_start)
    await process.start()
    try:
        if port == 0:
            match = await process.wait_for_line(re.compile(target.listening_pattern), timeout)
            base_url = f"http://127.0.0.1:{match.group(1)}"
        else:
            base_url = f"http://127.0.0.1:{port}"
        gateway = RunningGateway(target, base_url, process)
        await _wait_ready(gateway, timeout)
    except BaseException:
        await process.close()
        raise
    return gateway


def _clean_environment() -> dict[str, str]:
    """The harness's environment minus anything that would point a gateway at real Google."""
    drop = (
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_CLOUD_PROJECT",
        "GEMINI_API_KEY",
        "GOOGLE_VERTEX_BASE_URL",
    )
    return {
        k: v for k, v in os.environ.items() if k not in drop and not k.startswith("STREAMPROOF_")
    }


async def _wait_ready(gateway: RunningGateway, timeout: float) -> None:
    """Wait (bounded) until the gateway is ready as :class:`Ready` defines it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    declared = gateway.target.ready.path
    url = gateway.base_url + (declared or "/")
    last_error = "no attempt"
    async with aiohttp.ClientSession() as http:
        while True:
            if gateway.crashed() is not None:
                if gateway.process is not None:
                    await gateway.process.drain()
                raise TargetError(
                    f"target {gateway.target.name!r} never became ready: {gateway.crashed()}"
                )
            owned: bool | None = None  # None: ask over HTTP
            if declared is None and gateway.process is not None:
                owned, last_error = _owns_port(gateway, gateway.process)
                if owned is True:
                    return
            if owned is None:
                try:
                    async with http.get(url, timeout=aiohttp.ClientTimeout(total=2)) as resp:
                        await resp.read()
                        if declared is None or 200 <= resp.status < 300:
                            return
                        last_error = f"GET {url} answered {resp.status}"
                except (aiohttp.ClientError, TimeoutError) as exc:
                    last_error = f"GET {url}: {type(exc).__name__}: {exc}"
            if loop.time() >= deadline:
                raise TargetError(
                    f"target {gateway.target.name!r} was not ready within {timeout:g}s "
                    f"({last_error}).\nIts output:\n{gateway.log() or '(attached by URL)'}"
                )
            await asyncio.sleep(0.1)


def _owns_port(gateway: RunningGateway, process: TargetProcess) -> tuple[bool | None, str]:
    """Whether the started process group listens on the gateway's port (None: cannot tell
    here, ask over HTTP instead), and what to say if it never does."""
    port = urlsplit(gateway.base_url).port
    assert port is not None and process.pid is not None
    owned = group_owns_listener(process.pid, port)
    if owned is not False:
        return owned, "no attempt"
    holders = listener_pids(port) or set()
    if holders:
        return False, (
            f"port {port} is held by pid {', '.join(map(str, sorted(holders)))}, not by the "
            "target's process group; if the command hands off to another process (a "
            "container, a daemon), declare ready.path"
        )
    return False, f"no process of the target's group listens on port {port} yet"
