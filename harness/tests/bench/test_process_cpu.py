"""The process CPU bench: kinds by command line, descendants found, the table printed."""

from __future__ import annotations

import os
import sys
import time

import pytest

from streamproof.bench import process_cpu
from streamproof.bench.process_cpu import Seen, command_line, kind_of, sample


def test_kinds_by_command_line() -> None:
    assert kind_of("/x/.venv/bin/python -m streamproof.suites.gateway.reference.server") == (
        "reference gateway"
    )
    zygote = "/x/python -m streamproof.targets.warm.zygote --socket /t/z.sock --module "
    assert kind_of(zygote + "streamproof.suites.gateway.reference.server") == "reference gateway"
    assert kind_of(zygote + "streamproof.suites.a2a_client.reference.client") == (
        "reference A2A client"
    )
    assert kind_of("/x/.venv/bin/python -m streamproof run scenarios") == "streamproof run"
    assert kind_of("/x/.venv/bin/streamproof run --target t.yaml") == "streamproof run"
    runs = "/x/python -m streamproof.targets.warm.zygote --socket /z --module streamproof.cli"
    assert kind_of(runs + " --preload streamproof.cli.preload") == "streamproof run"
    assert kind_of(runs + "_other") == "Python, other"
    assert kind_of("java -jar target/streamproof-java-client.jar") == "Java"
    assert kind_of("/x/python -u -c import sys;exec(eval(sys.stdin.readline()))") == (
        "pytest worker"
    )
    assert kind_of("/usr/bin/python3 -c pass") == "Python, other"
    assert kind_of("sleep 1") == "other"


def test_a_grandchild_is_counted_with_its_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    # The burn, then a second alive and idle: a sampler that a busy machine kept waiting
    # still sees the process after its burn (a process that is gone can no longer be read).
    burn = (
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
        "time.sleep(1.0)\n"
    )
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}])"
    code = process_cpu.main(["--interval", "0.05", "--", sys.executable, "-c", parent])
    assert code == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| Python, other |"))
    processes, cpu = row.split("|")[2:4]
    assert int(processes) == 2  # the command and the process it started
    assert float(cpu) >= 0.2  # the burn, sampled at least once after most of it


def test_a_command_that_cannot_start_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    assert process_cpu.main(["--", "/no/such/command"]) == 2
    assert "process_cpu: cannot start /no/such/command" in capsys.readouterr().err


def test_a_process_seen_before_its_exec_takes_its_own_kind() -> None:
    # Between its fork and its exec a process shows its parent's command line (or, in the
    # middle of the exec, none): the kind is the program it became.
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: wait for the first sample, then become `sleep`
        os.close(write)
        os.read(read, 1)
        os.execvp("sleep", ["sleep", "2"])
    os.close(read)
    try:
        seen: dict[tuple[str, str], Seen] = {}
        ours: set[int] = set()
        sample(pid, seen, ours, os.sysconf("SC_CLK_TCK"))
        assert [entry.kind for entry in seen.values()] != ["other"]
        os.write(write, b"x")
        deadline = time.monotonic() + 10
        while command_line(str(pid)) != "sleep 2" and time.monotonic() < deadline:
            time.sleep(0.01)
        sample(pid, seen, ours, os.sysconf("SC_CLK_TCK"))
        assert [entry.kind for entry in seen.values()] == ["other"]
    finally:
        os.close(write)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
