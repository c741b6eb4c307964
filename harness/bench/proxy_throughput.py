"""What the inline fault proxy costs: the same stream fetched directly and through the proxy.

Run ``python -m harness.bench.proxy_throughput [--events 20000]``. One aiohttp upstream on
loopback serves two streams:

* a **burst**: ``--events`` small SSE events written back to back, one write per event (what a
  fast model or A2A server does); the client reads them as fast as it can, which gives
  events/s and MB/s;
* a **paced** stream: ``--paced-events`` events ``--interval`` apart, each carrying the
  monotonic time at which the upstream wrote it; the client's arrival time minus that is the
  per-event latency, with no queue behind it. Time to first byte (the response headers) is
  measured on this stream too: a burst's upstream writes thousands of events before its loop
  yields, which would be charged to the first byte.

Each round fetches both streams directly and through an :class:`InlineProxy` with an empty
plan (alternating which goes first), and the report gives medians over the rounds, the
proxy/direct ratio and the latency the hop adds (to the first byte, and per event: median and
p95). Upstream, proxy and client share one event loop, as they do in the harness, so the
figures include the proxy's CPU cost competing with both ends. The run stops by itself after
``--rounds`` rounds or ``--time-limit`` seconds, whichever comes first; every request has a
timeout. Only 127.0.0.1 is used.

faults.md §2.5 measured 120k-154k events/s direct on this kind of machine and 38k-62k through
mitmproxy; the point is that the proxy is never what limits a conformance run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from harness import sse
from harness.faults.engines.inline import InlineProxy

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


async def _bench(args: argparse.Namespace) -> int:
    app = web.Application()
    app.router.add_get("/burst", _burst)
    app.router.add_get("/paced", _paced)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    upstream = f"http://127.0.0.1:{runner.addresses[0][1]}"
    proxy = InlineProxy("bench", upstream)
    via_proxy = await proxy.start()
    proxy.load([])
    totals = {"direct": Totals(), "proxy": Totals()}
    paths = {"direct": upstream, "proxy": via_proxy}
    deadline = time.monotonic() + args.time_limit
    rounds = 0
    timeout = aiohttp.ClientTimeout(total=_REQUEST_TIMEOUT)
    burst_q = f"/burst?n={args.events}"
    paced_q = f"/paced?n={args.paced_events}&interval={args.interval}"
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            # One warm-up of each path (connections, imports, caches) is not counted.
            for base in paths.values():
                await _fetch(session, base + f"/burst?n={min(args.events, 1000)}", paced=False)
            while rounds < args.rounds and time.monotonic() < deadline:
                order = ("direct", "proxy") if rounds % 2 == 0 else ("proxy", "direct")
                for name in order:
                    burst = await _fetch(session, paths[name] + burst_q, paced=False)
                    paced = await _fetch(session, paths[name] + paced_q, paced=True)
                    if burst.events != args.events or paced.events != args.paced_events:
                        print(f"error: {name} lost events ({burst.events}, {paced.events})")
                        return 1
                    totals[name].add(burst, paced)
                    proxy.load([])  # drop the records: one per event
                rounds += 1
    finally:
        await proxy.close()
        await runner.cleanup()
    _report(args, rounds, totals["direct"], totals["proxy"])
    return 0


def _report(args: argparse.Namespace, rounds: int, direct: Totals, proxy: Totals) -> None:
    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.3f} ms"

    rows = [
        (
            "events/s (median)",
            f"{statistics.median(direct.rate):,.0f}",
            f"{statistics.median(proxy.rate):,.0f}",
            f"x{statistics.median(proxy.rate) / statistics.median(direct.rate):.2f}",
        ),
        (
            "MB/s (median)",
            f"{statistics.median(direct.mbps):.2f}",
            f"{statistics.median(proxy.mbps):.2f}",
            f"x{statistics.median(proxy.mbps) / statistics.median(direct.mbps):.2f}",
        ),
    ]
    for label, pick in (
        ("first byte (median)", lambda t: statistics.median(t.first_byte)),
        ("first byte (p95)", lambda t: _p95(t.first_byte)),
        ("event latency (median)", lambda t: statistics.median(t.latencies)),
        ("event latency (p95)", lambda t: _p95(t.latencies)),
    ):
        d, p = pick(direct), pick(proxy)
        rows.append((label, ms(d), ms(p), f"+{ms(p - d)} (x{p / d:.2f})"))
    print(
        f"inline proxy benchmark: {rounds} rounds; burst of {args.events} events, "
        f"paced {args.paced_events} events every {args.interval * 1000:g} ms; "
        "loopback, upstream + proxy + client on one event loop"
    )
    print(f"{'':24}{'direct':>16}{'proxy':>16}   proxy vs direct")
    for label, d_text, p_text, ratio in rows:
        print(f"{label:24}{d_text:>16}{p_text:>16}   {ratio}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.bench.proxy_throughput", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--events", type=int, default=20000, help="events in the burst")
    parser.add_argument("--paced-events", type=int, default=200, help="events in the paced run")
    parser.add_argument("--interval", type=float, default=0.002, help="paced gap, seconds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (each fetches both paths)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="stop after this, s")
    args = parser.parse_args(argv)
    if min(args.events, args.paced_events, args.rounds) < 1 or args.interval < 0:
        parser.error("counts must be positive and the interval non-negative")
    return asyncio.run(_bench(args))


if __name__ == "__main__":
    raise SystemExit(main())
