"""The server side of :mod:`streamproof.bench.a2a_fanout`, in a process of its own.

Run by the benchmark as ``python -m streamproof.bench.fanout_server --events N --interval S
[--proxy]``: the fake A2A server playing a task timeline of ``N`` status updates ``S`` seconds
apart (``working`` with a message, then ``completed``), and with ``--proxy`` the inline fault
proxy with an empty plan in front of it, on the same event loop, as the A2A suite runs them.
Its own process, so the benchmark can read the memory of the fake (and the proxy) alone.

It prints ``fanout server ready: <url>`` (the proxy's URL with ``--proxy``, else the fake's),
serves on 127.0.0.1 only, and stops on SIGTERM or SIGINT, or by itself after
``--max-seconds`` (an orphaned server never outlives its benchmark for long).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Sequence
from typing import Any

from streamproof.fakes.a2a import A2AScript, FakeA2AServer
from streamproof.faults.engines.inline import InlineProxy

__all__ = ["main", "script"]

HOST = "127.0.0.1"


def script(events: int, interval: float) -> A2AScript:
    """The task timeline every stream plays: ``events`` status updates ``interval`` seconds
    apart, each carrying its timestamp (the moment the fake published it); the last one ends
    the task."""
    steps: list[dict[str, Any]] = [
        {"at": i * interval, "status": "working", "message": f"step {i}"} for i in range(1, events)
    ]
    steps.append({"at": events * interval, "status": "completed", "message": "done"})
    return A2AScript.model_validate({"server": {"wire": "0.3"}, "task": steps})


async def _serve(args: argparse.Namespace) -> None:
    fake = FakeA2AServer()
    proxy: InlineProxy | None = None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        url = await fake.start(HOST, 0)
        fake.load(script(args.events, args.interval))
        if args.proxy:
            proxy = InlineProxy("a2a", url)
            url = await proxy.start(HOST, 0)
            proxy.load(())
        print(f"fanout server ready: {url}", flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), args.max_seconds)
    finally:
        if proxy is not None:
            await proxy.close()
        await fake.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.fanout_server", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--events", type=int, required=True, help="status updates per task")
    parser.add_argument("--interval", type=float, required=True, help="seconds between them")
    parser.add_argument("--proxy", action="store_true", help="serve through the inline proxy")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="stop after this, s")
    args = parser.parse_args(argv)
    if args.events < 1 or args.interval < 0 or args.max_seconds <= 0:
        parser.error("--events and --max-seconds must be positive, --interval non-negative")
    asyncio.run(_serve(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
