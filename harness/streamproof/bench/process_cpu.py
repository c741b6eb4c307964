"""Where a command's CPU goes, by the kind of process that spent it.

Run ``python -m streamproof.bench.process_cpu [--interval 0.5] [--limit 3600] -- COMMAND ...``
(for example ``-- make test``). The command runs as a child; every ``--interval`` seconds the
bench reads ``/proc`` for the command's descendants (a process whose parent it has already
seen, so one that a target started in a session of its own counts too) and keeps each one's
last user + system time. When the command ends it prints one row per kind of process: how many
were started, their CPU seconds in all and each. The kinds are told apart by command line
(:data:`KINDS`): the reference gateway, ``streamproof run``, the reference A2A client, the
Java references, pytest workers, Node, Chromium, anything else Python. A warm start's zygote
and the children it forks keep the zygote's command line, which names the module
(docs/reference/target-files.md#warm-starts): they count as that module's kind.

A process that starts and ends between two samples is missed, and the CPU a process spends
after its last sample is not counted: the figures are a floor, close for the processes that
live for seconds (every kind above). Linux only (``/proc``). The command is killed with its
process group when ``--limit`` seconds have passed.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

KINDS: Final[tuple[tuple[str, str], ...]] = (
    (
        "reference gateway",
        r"streamproof\.suites\.gateway\.reference\.server",
    ),
    ("reference A2A client", r"a2a_client\.reference\.client"),
    ("streamproof run", r"bin/streamproof |-m streamproof(\.cli)? |--module streamproof\.cli( |$)"),
    ("Java", r"(^|/)java "),
    ("pytest worker", r"exec\(eval\(sys\.stdin\.readline"),
    ("pytest", r"-m pytest|bin/pytest"),
    ("Node", r"(^|/)node "),
    ("Chromium", r"chrom"),
    ("Python, other", r"python"),
)
"""A process's kind: the first pattern its command line matches (else ``other``)."""


def kind_of(command_line: str) -> str:
    for kind, pattern in KINDS:
        if re.search(pattern, command_line):
            return kind
    return "other"


@dataclass
class Seen:
    kind: str
    cpu_s: float


def read_stat(pid: str, ticks: int) -> tuple[int, str, float] | None:
    """``(parent pid, start time, CPU seconds)`` of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[19], (int(fields[11]) + int(fields[12])) / ticks


def command_line(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def sample(root: int, seen: dict[tuple[str, str], Seen], ours: set[int], ticks: int) -> None:
    """One pass over ``/proc``: the descendants of ``root`` and their CPU so far."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        stat = read_stat(pid, ticks)
        if stat is None:
            continue
        parent, started, cpu = stat
        key = (pid, started)
        if key in seen:
            seen[key].cpu_s = cpu
            # Read again: a process first seen between its fork and its exec still showed
            # its parent's command line (the sampler's own, for the command itself).
            now = command_line(pid)
            if now:
                seen[key].kind = kind_of(now)
        elif int(pid) == root or parent in ours:
            ours.add(int(pid))
            seen[key] = Seen(kind_of(command_line(pid)), cpu)


def table(seen: Mapping[tuple[str, str], Seen], wall_s: float) -> str:
    rows: dict[str, list[float]] = {}
    for entry in seen.values():
        rows.setdefault(entry.kind, []).append(entry.cpu_s)
    total = sum(sum(v) for v in rows.values())
    lines = [
        f"{len(seen)} processes, {total:.0f} CPU-s in {wall_s:.0f} s of wall clock "
        f"({os.cpu_count()} cores)",
        "",
        "| kind | processes | CPU s | each, mean |",
        "|---|---|---|---|",
    ]
    for kind, cpus in sorted(rows.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"| {kind} | {len(cpus)} | {sum(cpus):.1f} | {sum(cpus) / len(cpus):.2f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.process_cpu",
        description="Where a command's CPU goes, by kind of process (samples /proc).",
    )
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("--limit", type=float, default=3600.0, help="kill the command after")
    parser.add_argument("command", nargs="+", help="the command (after --)")
    args = parser.parse_args(argv)
    if not os.path.isdir("/proc/self"):
        print("process_cpu: needs Linux's /proc", file=sys.stderr)
        return 2
    ticks = os.sysconf("SC_CLK_TCK")
    seen: dict[tuple[str, str], Seen] = {}
    ours: set[int] = set()
    started = time.monotonic()
    try:
        child = subprocess.Popen(args.command, start_new_session=True)
    except OSError as exc:
        print(f"process_cpu: cannot start {args.command[0]}: {exc}", file=sys.stderr)
        return 2
    try:
        while child.poll() is None:
            sample(child.pid, seen, ours, ticks)
            if time.monotonic() - started > args.limit:
                os.killpg(child.pid, signal.SIGKILL)
                print(f"process_cpu: stopped after {args.limit:g} s", file=sys.stderr)
                break
            time.sleep(args.interval)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    print(table(seen, time.monotonic() - started))
    return child.returncode if child.returncode >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
