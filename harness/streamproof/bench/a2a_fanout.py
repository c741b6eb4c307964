"""The fake A2A server under many concurrent streams, directly and through the inline proxy.

Run ``python -m streamproof.bench.a2a_fanout [--streams 100 300 1000] [--events 20] [--interval
0.05]``. Each measurement starts a fresh server process (:mod:`streamproof.bench.fanout_server`):
the fake A2A server playing a task timeline of ``--events`` status updates ``--interval``
seconds apart, each update carrying the moment the fake published it (its status timestamp).
This process then opens ``S`` ``message/stream`` calls at once (one ``asyncio.gather``, one
connection each) and reads every stream to its end. Figures per path and stream count:

* **events/s**: every SSE event the clients received (the Task snapshot and the updates),
  divided by the time from the first request to the end of the last stream; the **scripted**
  rate beside it is what the timeline asks for (``S`` x ``events`` / its span): a server that
  keeps up delivers close to it;
* **time to first event**: from a stream's request to its first event (the ``submitted`` Task
  snapshot), p50 and p95 over all streams: it grows with the queue of connections to accept;
* **event latency**: the client's arrival time minus the update's status timestamp (the same
  clock: one machine), p50 and p95 over every update of every stream;
* **memory**: the server process's peak RSS (``VmHWM``), and per stream its growth over the
  RSS it had once ready and warmed up (one stream), divided by ``S``;
* **CPU**: the server's and this process's CPU time over the wall time, as a share of one core
  (far below 100% while the run is slow: the machine is busy with something else);
* **listen queue overflows**: connections the kernel dropped because a listen queue was full
  (``ListenOverflows``, for the whole network namespace), each retried a second or more later
  by its client.

The paths, side by side in one run (each round measures every stream count over every path,
the path order rotating from round to round; the table gives medians over rounds, latencies
pooled): ``direct`` (the client talks to the fake) and ``inline`` (the inline proxy with an
empty plan in front of the fake, on the fake's event loop, as the A2A suite runs its ``a2a``
link). The client runs in this process, on one event loop: on a small machine its reading
competes for the same cores, and the figures are of the whole loop back, not of the server
alone.

Before anything starts, the file-descriptor limit is checked: every stream holds one socket in
this process and one (direct) or three (inline) in the server's; a soft limit below what the
largest count needs is raised when the hard limit allows, else the run stops with a message
saying what to do. The run stops by itself after ``--rounds`` rounds or ``--time-limit``
seconds (each stream also has a timeout); every server process is ended. Only 127.0.0.1 is
used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import aiohttp

from streamproof.protocol import sse
from streamproof.targets.errors import TargetError
from streamproof.targets.process import TargetProcess

__all__ = ["PATHS", "fd_budget", "main"]

PATHS = ("direct", "inline")
SOCKETS_PER_STREAM = {"direct": 1, "inline": 3}
"""Sockets one stream holds in the server process: the fake's end, and with the proxy also the
proxy's two (from the client, to the fake)."""
_SPARE_FDS = 128
_READY = re.compile(r"fanout server ready: (http://\S+)")
_START_S = 60.0


def fd_budget(streams: int, paths: Sequence[str]) -> int:
    """File descriptors the busiest process needs for ``streams`` concurrent streams."""
    per_stream = max(1, *(SOCKETS_PER_STREAM[p] for p in paths))
    return streams * per_stream + _SPARE_FDS


def _ensure_fd_limit(needed: int) -> str | None:
    """Raise the soft RLIMIT_NOFILE to ``needed`` if it is lower; None when it is (now) enough,
    else why not. Child processes inherit the raised limit."""
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing to check
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return None
    if hard != resource.RLIM_INFINITY and hard < needed:
        return (
            f"the open-file limit is {soft} (hard limit {hard}) and this run needs {needed} "
            f"file descriptors; raise the hard limit (as root: ulimit -Hn {needed}) or ask "
            "for fewer --streams"
        )
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    except (ValueError, OSError) as exc:
        return f"cannot raise the open-file limit from {soft} to {needed}: {exc}"
    print(f"raised the open-file soft limit from {soft} to {needed}")
    return None


def _memory_kib(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of process ``pid`` in KiB, from /proc; None where there is no /proc."""
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    values = dict(
        (line.split(":")[0], int(line.split()[1]))
        for line in text.splitlines()
        if line.startswith(("VmRSS:", "VmHWM:"))
    )
    if "VmRSS" not in values or "VmHWM" not in values:
        return None
    return values["VmRSS"], values["VmHWM"]


def _listen_overflows() -> int | None:
    """The kernel's count of connections dropped because a listen queue was full (this network
    namespace, every listener: another program's drops count too); None where unknown."""
    try:
        lines = Path("/proc/net/netstat").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:], strict=False))
            found = table.get("ListenOverflows")
            return int(found) if found is not None else None
    return None


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds process ``pid`` has used, from /proc; None without it."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _body(index: int) -> bytes:
    message = {
        "kind": "message",
        "role": "user",
        "messageId": f"bench-{index}",
        "parts": [{"kind": "text", "text": f"stream {index}"}],
    }
    call = {
        "jsonrpc": "2.0",
        "id": index,
        "method": "message/stream",
        "params": {"message": message},
    }
    return json.dumps(call).encode()


@dataclass
class Stream:
    """What one client saw of one stream."""

    events: int = 0
    first_event: float | None = None
    latencies: list[float] = field(default_factory=list)
    final_state: str | None = None


async def _stream(session: aiohttp.ClientSession, url: str, index: int) -> Stream:
    seen = Stream()
    decoder = sse.Decoder()
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    t0 = time.monotonic()
    async with session.post(url, data=_body(index), headers=headers) as response:
        if response.status != 200:
            raise RuntimeError(f"stream {index}: HTTP {response.status}")
        async for chunk in response.content.iter_any():
            arrived = time.time()
            for event in decoder.feed(chunk):
                if seen.first_event is None:
                    seen.first_event = time.monotonic() - t0
                seen.events += 1
                result = json.loads(event.data).get("result", {})
                status = result.get("status", {})
                seen.final_state = status.get("state")
                stamp = status.get("timestamp")
                if result.get("kind") == "status-update" and stamp:
                    seen.latencies.append(arrived - datetime.fromisoformat(stamp).timestamp())
    return seen


@dataclass
class Measurement:
    """One path at one stream count, one round."""

    streams: int
    seconds: float
    events: int
    first_event: list[float]
    latencies: list[float]
    rss_ready_kib: int | None
    hwm_kib: int | None
    server_cpu: float | None
    client_cpu: float
    overflows: int | None


async def _measure(args: argparse.Namespace, path: str, streams: int) -> Measurement:
    argv = [
        sys.executable,
        "-m",
        "streamproof.bench.fanout_server",
        "--events",
        str(args.events),
        "--interval",
        str(args.interval),
        "--max-seconds",
        str(args.time_limit + 60),
    ]
    if path == "inline":
        argv.append("--proxy")
    server = TargetProcess(f"fanout server ({path})", argv, dict(os.environ))
    span = args.events * args.interval
    timeout = aiohttp.ClientTimeout(total=span + 60.0 + streams * 0.05)
    await server.start()
    try:
        url = (await server.wait_for_line(_READY, _START_S)).group(1) + "/"
        assert server.pid is not None
        connector = aiohttp.TCPConnector(limit=0, force_close=True)
        async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
            await _stream(session, url, -1)  # warm-up: imports, first task, first connection
            ready = _memory_kib(server.pid)
            cpu0, own0, drops0 = _cpu_seconds(server.pid), time.process_time(), _listen_overflows()
            t0 = time.monotonic()
            outcomes = await asyncio.gather(
                *(_stream(session, url, i) for i in range(streams)), return_exceptions=True
            )
            seconds = time.monotonic() - t0
            cpu1, own1, drops1 = _cpu_seconds(server.pid), time.process_time(), _listen_overflows()
            memory = _memory_kib(server.pid)
    finally:
        await server.close()
    seen: list[Stream] = []
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            raise RuntimeError(f"{path}: stream {i} failed: {type(outcome).__name__}: {outcome}")
        seen.append(outcome)
    for i, one in enumerate(seen):
        if one.events != args.events + 1 or one.final_state != "completed":
            raise RuntimeError(
                f"{path}: stream {i} got {one.events} events ending {one.final_state!r}, "
                f"not {args.events + 1} ending 'completed'"
            )
    return Measurement(
        streams=streams,
        seconds=seconds,
        events=sum(s.events for s in seen),
        first_event=[s.first_event for s in seen if s.first_event is not None],
        latencies=[x for s in seen for x in s.latencies],
        rss_ready_kib=ready[0] if ready else None,
        hwm_kib=memory[1] if memory else None,
        server_cpu=None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
        client_cpu=own1 - own0,
        overflows=None if drops0 is None or drops1 is None else drops1 - drops0,
    )


def _pct(values: Sequence[float], pct: int) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * pct // 100) - 1)]


async def _bench(args: argparse.Namespace) -> tuple[int, dict[tuple[str, int], list[Measurement]]]:
    deadline = time.monotonic() + args.time_limit
    done: dict[tuple[str, int], list[Measurement]] = {}
    rounds = 0
    paths = list(args.paths)
    while rounds < args.rounds and time.monotonic() < deadline:
        shift = rounds % len(paths)
        for streams in args.streams:
            for path in paths[shift:] + paths[:shift]:
                if time.monotonic() >= deadline:
                    break
                done.setdefault((path, streams), []).append(await _measure(args, path, streams))
        rounds += 1
    return rounds, done


def _report(
    args: argparse.Namespace, rounds: int, done: dict[tuple[str, int], list[Measurement]]
) -> None:
    columns = [(p, s) for s in args.streams for p in args.paths if (p, s) in done]
    span = args.events * args.interval
    print(
        f"A2A fan-out benchmark: {rounds} round(s); each stream a task of {args.events} status "
        f"updates {args.interval * 1000:g} ms apart; loopback; medians over rounds, "
        "latencies pooled"
    )
    width = 14
    print(f"{'':30}" + "".join(f"{f'{p} x{s}':>{width}}" for p, s in columns))

    def row(label: str, values: list[str]) -> None:
        print(f"{label:30}" + "".join(f"{v:>{width}}" for v in values))

    def med(key: tuple[str, int], pick: str) -> float | None:
        values = [getattr(m, pick) for m in done[key]]
        known = [v for v in values if v is not None]
        return statistics.median(known) if known else None

    row(
        "events/s",
        [f"{statistics.median(m.events / m.seconds for m in done[k]):,.0f}" for k in columns],
    )
    row(
        "  scripted events/s",
        [f"{s * args.events / span:,.0f}" if span else "burst" for _, s in columns],
    )
    row("stream wall s", [f"{statistics.median(m.seconds for m in done[k]):.2f}" for k in columns])
    for label, pick, pct in (
        ("first event ms (p50)", "first_event", 50),
        ("first event ms (p95)", "first_event", 95),
        ("event latency ms (p50)", "latencies", 50),
        ("event latency ms (p95)", "latencies", 95),
    ):
        row(
            label,
            [
                f"{_pct([x for m in done[k] for x in getattr(m, pick)], pct) * 1000:.1f}"
                for k in columns
            ],
        )
    peaks, per_stream = [], []
    for key in columns:
        hwm, ready = med(key, "hwm_kib"), med(key, "rss_ready_kib")
        peaks.append("n/a" if hwm is None else f"{hwm / 1024:.1f}")
        growth = None if hwm is None or ready is None else (hwm - ready) / key[1]
        per_stream.append("n/a" if growth is None else f"{growth:.1f}")
    row("server peak RSS MiB", peaks)
    row("  KiB per stream", per_stream)

    def share(key: tuple[str, int], pick: str) -> str:
        values = [getattr(m, pick) / m.seconds for m in done[key] if getattr(m, pick) is not None]
        return f"{statistics.median(values) * 100:.0f}%" if values else "n/a"

    row("server CPU (of one core)", [share(k, "server_cpu") for k in columns])
    row("client CPU (of one core)", [share(k, "client_cpu") for k in columns])
    drops = []
    for key in columns:
        counts = [m.overflows for m in done[key] if m.overflows is not None]
        drops.append(f"{statistics.median(counts):g}" if counts else "n/a")
    row("listen queue overflows", drops)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.a2a_fanout", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--streams", type=int, nargs="+", default=[100, 300, 1000], help="concurrent streams"
    )
    parser.add_argument("--events", type=int, default=20, help="status updates per task")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between them")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (each measures all)")
    parser.add_argument(
        "--paths", nargs="+", choices=PATHS, default=list(PATHS), help="the paths to compare"
    )
    parser.add_argument("--time-limit", type=float, default=300.0, help="stop after this, s")
    args = parser.parse_args(argv)
    if min(*args.streams, args.events, args.rounds) < 1 or args.interval < 0:
        parser.error("counts must be positive and the interval non-negative")
    if args.time_limit <= 0:
        parser.error("--time-limit must be positive")
    problem = _ensure_fd_limit(fd_budget(max(args.streams), args.paths))
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        rounds, done = asyncio.run(_bench(args))
    except (RuntimeError, TargetError, aiohttp.ClientError, TimeoutError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if not done:
        print("error: the time limit passed before anything was measured", file=sys.stderr)
        return 1
    _report(args, rounds, done)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:  # every server process was ended on the way out
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
