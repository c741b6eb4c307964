"""The command that serves a page under test: started on a port the harness picked (or the
target's), told the fake gateway's URL through its environment if the target says so, and
waited for until the page answers."""

from __future__ import annotations

import asyncio
import os
import time

import aiohttp

from streamproof.suites.browser_client.target import BrowserTarget
from streamproof.targets.errors import TargetError
from streamproof.targets.process import TargetProcess
from streamproof.targets.sockets import free_port

__all__ = ["PageServer"]


class PageServer:
    def __init__(self, target: BrowserTarget, *, gateway_url: str) -> None:
        self.target = target
        self.port = target.port if isinstance(target.port, int) else free_port()
        env = {**os.environ, **target.env, "PORT": str(self.port)}
        if target.gateway.env is not None:
            env[target.gateway.env] = gateway_url
        self.process = TargetProcess(target.name, target.argv(self.port), env, cwd=target.cwd)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.target.path}"

    async def start(self) -> None:
        await self.process.start()
        try:
            await self._ready()
        except BaseException:
            await self.process.close()
            raise

    async def _ready(self) -> None:
        timeout = self.target.ready_timeout
        end = time.monotonic() + timeout
        last = "no answer"
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2.0)) as session:
            while time.monotonic() < end:
                if self.process.returncode is not None:
                    await self.process.drain()
                    raise TargetError(
                        f"target {self.target.name!r}: the page's command exited with code "
                        f"{self.process.returncode} before serving {self.url}.\nIts output:\n"
                        f"{self.process.output.text()}"
                    )
                try:
                    async with session.get(self.url) as response:
                        if response.status < 400:
                            return
                        last = f"status {response.status}"
                except (aiohttp.ClientError, TimeoutError) as exc:
                    last = type(exc).__name__
                await asyncio.sleep(0.05)
        raise TargetError(
            f"target {self.target.name!r}: the page {self.url} did not answer within "
            f"{timeout:g}s ({last}).\nIts output:\n{self.process.output.text()}"
        )

    async def close(self) -> None:
        await self.process.close()
