"""The background loop: results, bounded waits, and ticks for a progress display."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from streamproof.runtime.loop import BackgroundLoop


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    background = BackgroundLoop("test-loop")
    yield background
    background.close()


async def _sleep_then(value: str, seconds: float) -> str:
    await asyncio.sleep(seconds)
    return value


def test_ticks_arrive_in_the_waiting_thread_while_the_work_runs(loop: BackgroundLoop) -> None:
    import threading

    seen: list[tuple[float, str]] = []
    result = loop.run(
        _sleep_then("done", 0.45),
        timeout=5,
        tick=lambda s: seen.append((s, threading.current_thread().name)),
        every=0.1,
    )
    assert result == "done"
    assert len(seen) >= 2
    assert [s for s, _ in seen] == sorted(s for s, _ in seen)
    assert {name for _, name in seen} == {threading.current_thread().name}


def test_a_quick_run_never_ticks(loop: BackgroundLoop) -> None:
    seen: list[float] = []
    assert loop.run(_sleep_then("quick", 0), timeout=5, tick=seen.append, every=1.0) == "quick"
    assert seen == []


def test_the_timeout_still_holds_with_ticks(loop: BackgroundLoop) -> None:
    seen: list[float] = []
    with pytest.raises(TimeoutError, match=r"did not finish within 0\.3s"):
        loop.run(_sleep_then("late", 5), timeout=0.3, tick=seen.append, every=0.1)
    assert all(s < 0.3 for s in seen)
