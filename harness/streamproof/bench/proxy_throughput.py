"""What each fault engine costs: the same stream fetched directly and through every engine.

Run ``python -m streamproof.bench.proxy_throughput [--events 20000] [--paths ...]``. One aiohttp
upstream on loopback serves two streams:

* a **burst**: ``--events`` small SSE events written back to back, one write per event (what a
  fast model or A2A server does); the client reads them as fast as it can, which gives
  events/s and MB/s;
* a **paced** stream: ``--paced-events`` events ``--interval`` apart, each carrying the
  monotonic time at which the upstream wrote it; the client's arrival time minus that is the
  per-event latency, with no queue behind it. Time to first byte (the response headers) is
  measured on this stream too: a burst's upstream writes thousands of events before its loop
  yields, which would be charged to the first byte.

The paths, side by side in one run (each round fetches both streams over every path, in an
order that rotates from round to round, and the report gives medians over the rounds):

* ``direct``: no proxy;
* ``inline``: the inline engine's proxy with an empty plan, on the same event loop as the
  upstream and the client, as it runs in the harness (its CPU competes with both ends);
* ``inline-process``: the same proxy in a process of its own (``streamproof proxy``), as a
  team runs it in front of its own stack;
* ``toxiproxy`` and ``mitmproxy``: those engines' links with an empty plan (toxiproxy's link is
  toxiproxy in front of the inline recorder, mitmproxy's runs in this process's loop).

An engine this machine cannot run is left out with the reason. The run stops by itself after
``--rounds`` rounds or ``--time-limit`` seconds, whichever comes first; every request has a
timeout; every process and link it starts is closed. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from streamproof.faults.engines import EngineUnavailable, FaultLink, open_engine
from streamproof.protocol import sse
from streamproof.targets.process import TargetProcess

__all__ = ["main"]

_PAD = "x" * 24
_REQUEST_TIMEOUT = 60.0


async def _burst(request: web.Request) -> web.StreamResponse:
    count = int(request.query["n"])
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for i in range(count):
        await response.write(sse.encode(f'{{"i": {i}, "pad": "{_PAD}"}}'))
    await response.write_eof()
    return response


async def _paced(request: web.Request) -> web.StreamResponse:
    count, interval = int(request.query["n"]), float(request.query["interval"])
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for i in range(count):
        await asyncio.sleep(interval)
        await response.write(sse.encode(json.dumps({"i": i, "t": time.monotonic()})))
    await response.write_eof()
    return response


@dataclass
class Run:
    """One fetch of one stream over one path."""

    events: int = 0
    bytes: int = 0
    seconds: float = 0.0
    first_byte: float = 0.0
    latencies: list[float] = field(default_factory=list)


async def _fetch(session: aiohttp.ClientSession, url: str, *, paced: bool) -> Run:
    run = Run()
    decoder = sse.Decoder()
    t0 = time.monotonic()
    async with session.get(url) as response:
        run.first_byte = time.monotonic() - t0
        async for chunk in response.content.iter_any():
            arrived = time.monotonic()
            run.bytes += len(chunk)
            for event in decoder.feed(chunk):
                run.events += 1
                if paced:
                    run.latencies.append(arrived - json.loads(event.data)["t"])
    run.seconds = time.monotonic() - t0
    return run


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]


@dataclass
class Totals:
    rate: list[float] = field(default_factory=list)
    mbps: list[float] = field(default_factory=list)
    first_byte: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def add(self, burst: Run, paced: Run) -> None:
        self.rate.append(burst.events / burst.seconds)
        self.mbps.append(burst.bytes / burst.seconds / 1e6)
        self.first_byte.append(paced.first_byte)  # a burst's headers wait for its writes
        self.latencies += paced.latencies


PATHS = ("direct", "inline", "inline-process", "toxiproxy", "mitmproxy")


async def _proxy_process(upstream: str, stack: contextlib.AsyncExitStack) -> str:
    """``streamproof proxy`` in a process of its own in front of ``upstream``: its URL."""
    process = TargetProcess(
        "streamproof proxy",
        [sys.executable, "-m", "streamproof.cli", "proxy", "--upstream", upstream],
        dict(os.environ),
    )
    await process.start()
    stack.push_async_callback(process.close)
    match = await process.wait_for_line(re.compile(r"listening on (http://\S+)"), 30.0)
    return match.group(1)


async def _open_paths(
    names: Sequence[str], upstream: str, stack: contextlib.AsyncExitStack
) -> tuple[dict[str, str], list[FaultLink], dict[str, str]]:
    """The base URL of every path that can run here, the links to clear between fetches, and
    why the others cannot."""
    urls: dict[str, str] = {}
    links: list[FaultLink] = []
    missing: dict[str, str] = {}
    for name in names:
        if name == "direct":
            urls[name] = upstream
        elif name == "inline-process":
            urls[name] = await _proxy_process(upstream, stack)
        else:
            try:
                engine = open_engine(name)
            except EngineUnavailable as exc:
                missing[name] = str(exc)
                continue
            await engine.start()
            stack.push_async_callback(engine.close)
            link = engine.link("bench", upstream)
            urls[name] = await link.start()
            stack.push_async_callback(link.close)
            link.load([])
            links.append(link)
    return urls, links, missing


async def _bench(args: argparse.Namespace) -> int:
    app = web.Application()
    app.router.add_get("/burst", _burst)
    app.router.add_get("/paced", _paced)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    upstream = f"http://127.0.0.1:{runner.addresses[0][1]}"
    deadline = time.monotonic() + args.time_limit
    rounds = 0
    timeout = aiohttp.ClientTimeout(total=_REQUEST_TIMEOUT)
    burst_q = f"/burst?n={args.events}"
    paced_q = f"/paced?n={args.paced_events}&interval={args.interval}"
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(runner.cleanup)
        urls, links, missing = await _open_paths(args.paths, upstream, stack)
        totals = {name: Totals() for name in urls}
        async with aiohttp.ClientSession(timeout=timeout) as session:
            # One warm-up of each path (connections, imports, caches) is not counted.
            for base in urls.values():
                await _fetch(session, base + f"/burst?n={min(args.events, 1000)}", paced=False)
            names = list(urls)
            while rounds < args.rounds and time.monotonic() < deadline:
                shift = rounds % len(names)
                for name in names[shift:] + names[:shift]:
                    burst = await _fetch(session, urls[name] + burst_q, paced=False)
                    paced = await _fetch(session, urls[name] + paced_q, paced=True)
                    if burst.events != args.events or paced.events != args.paced_events:
                        print(f"error: {name} lost events ({burst.events}, {paced.events})")
                        return 1
                    totals[name].add(burst, paced)
                    for link in links:
                        link.load([])  # drop the records: one per event
                rounds += 1
    _report(args, rounds, totals, missing)
    return 0


def _report(
    args: argparse.Namespace, rounds: int, totals: dict[str, Totals], missing: dict[str, str]
) -> None:
    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.3f}"

    direct = totals.get("direct")
    names = list(totals)
    print(
        f"fault engine benchmark: {rounds} rounds; burst of {args.events} events, paced "
        f"{args.paced_events} events every {args.interval * 1000:g} ms; loopback; medians"
    )
    width = max(16, *(len(n) + 2 for n in names))
    print(f"{'':28}" + "".join(f"{n:>{width}}" for n in names))

    def row(label: str, values: list[str]) -> None:
        print(f"{label:28}" + "".join(f"{v:>{width}}" for v in values))

    rates = {n: statistics.median(t.rate) for n, t in totals.items()}
    row("events/s", [f"{rates[n]:,.0f}" for n in names])
    if direct is not None:
        row("  ratio to direct", [f"x{rates[n] / rates['direct']:.2f}" for n in names])
    row("MB/s", [f"{statistics.median(t.mbps):.2f}" for t in totals.values()])
    for label, pick in (
        ("first byte ms (median)", lambda t: statistics.median(t.first_byte)),
        ("event latency ms (median)", lambda t: statistics.median(t.latencies)),
        ("event latency ms (p95)", lambda t: _p95(t.latencies)),
    ):
        values = {n: pick(t) for n, t in totals.items()}
        row(label, [ms(values[n]) for n in names])
        if direct is not None:
            base = values["direct"]
            row("  added ms", [f"+{ms(values[n] - base)}" for n in names])
    for name, why in missing.items():
        print(f"{name}: left out: {why}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.proxy_throughput", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--events", type=int, default=20000, help="events in the burst")
    parser.add_argument("--paced-events", type=int, default=200, help="events in the paced run")
    parser.add_argument("--interval", type=float, default=0.002, help="paced gap, seconds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (each fetches every path)")
    parser.add_argument(
        "--paths",
        nargs="+",
        choices=PATHS,
        default=list(PATHS),
        help="the paths to compare (default: all that can run here)",
    )
    parser.add_argument("--time-limit", type=float, default=60.0, help="stop after this, s")
    args = parser.parse_args(argv)
    if min(args.events, args.paced_events, args.rounds) < 1 or args.interval < 0:
        parser.error("counts must be positive and the interval non-negative")
    return asyncio.run(_bench(args))


if __name__ == "__main__":
    raise SystemExit(main())
