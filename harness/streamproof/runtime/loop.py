"""One asyncio event loop on a daemon thread, shared by everything a test process starts.

The fakes, the proxies and the target process outlive single scenarios (they start once per
test process), so they need a loop that outlives single tests. Running it on its own thread
keeps the harness independent of whatever async plugin the user's pytest has.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    def __init__(self, name: str = "streamproof-loop") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def run(
        self,
        coro: Coroutine[Any, Any, T],
        timeout: float | None = None,
        *,
        tick: Callable[[float], None] | None = None,
        every: float = 1.0,
    ) -> T:
        """Run ``coro`` on the loop and wait for it; cancel it if ``timeout`` passes. While it
        runs, ``tick`` is called in the waiting thread every ``every`` seconds with the seconds
        elapsed (for a progress display, which must write from the thread that owns the
        terminal)."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        while True:
            wait = None if tick is None else every
            if deadline is not None:
                left = max(deadline - time.monotonic(), 0.0)
                wait = left if wait is None else min(wait, left)
            try:
                return future.result(wait)
            except FutureTimeout:
                if deadline is not None and time.monotonic() >= deadline:
                    future.cancel()
                    raise TimeoutError(
                        f"harness operation did not finish within {timeout:.1f}s"
                    ) from None
                if tick is not None:
                    tick(time.monotonic() - started)

    def close(self) -> None:
        if not self._loop.is_running():
            return

        async def _drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._loop.shutdown_asyncgens()

        try:
            asyncio.run_coroutine_threadsafe(_drain(), self._loop).result(10)
        except Exception:
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._loop.is_running():
            self._loop.close()
