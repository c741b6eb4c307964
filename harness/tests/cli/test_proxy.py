"""``streamproof proxy`` end to end, as a user runs it: real processes, real sockets.

The main test is the seed's worked example with real parts on both sides of the proxy: a real
a2a-sdk 1.3 server (``harness/tests/independent/a2a_sdk_server.py``) streams a three-chunk
summary on the seed's clock at a tenth of it, ``streamproof proxy --fault "rpc message/stream
after 4s: stall"`` goes quiet 4 s into the stream (the seed's 40 s), and the reference client,
pointed at the proxy with a 2.5 s idle watchdog, must recover with ``tasks/get`` and
``tasks/resubscribe`` and finish ``completed`` with the whole artifact, while the proxy's live
output shows the requests and the fault.

The others: Ctrl-C and SIGTERM (exit 130/143, the port freed, no process left), bad input
(exit 2 with the reason and no traceback), an unreachable upstream, and ``--for``.

Every process runs in its own process group, killed at the end whatever happened; waits are
generous (a loaded two-core machine), and nothing depends on a timing closer than a second.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest
import yaml

from harness.tests.conftest import require_module

ROOT = Path(__file__).resolve().parents[3]
START_S = 60.0
"""How long a process may take to say it listens (imports on a loaded machine)."""
STOP_S = 30.0
LISTENING = re.compile(r"^streamproof proxy: listening on (http://\S+) -> (\S+)$")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            return True
    return False


def group_is_gone(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


@dataclass
class Running:
    """A process in its own group, its output read as it comes."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.changed = threading.Condition()
        self.proc = subprocess.Popen(
            self.argv,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read(self, stream: IO[str], into: list[str]) -> None:
        for line in stream:
            with self.changed:
                into.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def wait_for(
        self, pattern: str | re.Pattern[str], timeout: float = START_S, *, stderr: bool = False
    ) -> re.Match[str]:
        """The first stdout (or stderr) line matching ``pattern``; fails with the output if
        none comes."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        lines = self.err if stderr else self.out
        with self.changed:
            while True:
                for line in lines:
                    match = regex.search(line)
                    if match is not None:
                        return match
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reading()):
                    pytest.fail(f"no line matching {regex.pattern!r}:\n{self.output()}")
                self.changed.wait(min(left, 0.5))

    def _reading(self) -> bool:
        return any(reader.is_alive() for reader in self.readers)

    def stop(self, sig: signal.Signals, timeout: float = STOP_S) -> int:
        self.proc.send_signal(sig)
        return self.wait(timeout)

    def wait(self, timeout: float = STOP_S) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running after {timeout:g}s:\n{self.output()}")
        for reader in self.readers:
            reader.join(5)
        return code

    def output(self) -> str:
        return "\n".join(["--- stdout", *self.out, "--- stderr", *self.err])

    def kill(self) -> None:
        if self.proc.poll() is None or not group_is_gone(self.proc.pid):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def proxy(*args: str) -> list[str]:
    return [sys.executable, "-m", "streamproof.cli", "proxy", *args]


@pytest.fixture
def running() -> Iterator[list[Running]]:
    """Every process a test starts, killed (group and all) when it ends."""
    started: list[Running] = []
    yield started
    for process in started:
        process.kill()


def start(started: list[Running], argv: list[str], **env: str) -> Running:
    process = Running(argv, env)
    started.append(process)
    return process


@dataclass(frozen=True)
class Agent:
    url: str
    proxy_port: int
    """The port its card sends clients to, where the story's proxy listens."""


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    """The real a2a-sdk agent at a tenth of the seed's clock; its card names a proxy port."""
    require_module("a2a.server.routes")
    require_module("sse_starlette")
    port = free_port()
    server = Running(
        [
            sys.executable,
            "-m",
            "harness.tests.independent.a2a_sdk_server",
            "--time-scale",
            "0.1",
            "--card-url",
            f"http://127.0.0.1:{port}/",
        ]
    )
    try:
        url = server.wait_for(r"listening on (http://\S+)")[1]
        yield Agent(url, port)
    finally:
        server.kill()


def client_result(proxy_url: str, started: list[Running]) -> tuple[dict[str, Any], Running]:
    """The reference client through the proxy, its deadline far away (a slow machine must not
    turn this into a timeout). Its idle watchdog, 2.5 s, is the seed's 20 s at a tenth with
    room: the agent's longest quiet spell is 1.4 s, so only the proxy's stall sets it off; and
    it fires (at about 6.5 s) well before the task completes (7.8 s), so the client still
    resubscribes."""
    client = start(
        started,
        [sys.executable, "-m", "streamproof.suites.a2a_client.reference.client"],
        STREAMPROOF_A2A_URL=proxy_url,
        STREAMPROOF_PROMPT="A three-section market summary for the quarterly report",
        STREAMPROOF_DEADLINE_S="45",
        STREAMPROOF_IDLE_S="2.5",
    )
    assert client.wait(90) == 0, client.output()
    return json.loads(client.out[-1]), client


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
def test_the_seeds_proxy_timeout_story_with_real_parts(
    agent: Agent, running: list[Running], tmp_path: Path
) -> None:
    from harness.tests.independent.a2a_sdk_server import ARTIFACT_ID, SUMMARY
    from streamproof.suites.loading import parse_scenarios

    written = tmp_path / "captured.yaml"
    fault = "rpc message/stream after 4s: stall"
    the_proxy = start(
        running,
        proxy(
            "--upstream",
            agent.url,
            "--listen",
            f"127.0.0.1:{agent.proxy_port}",
            "--fault",
            fault,
            "--write-scenario",
            str(written),
        ),
    )
    listening = the_proxy.wait_for(LISTENING)
    assert listening[1] == f"http://127.0.0.1:{agent.proxy_port}"
    assert listening[2] == agent.url
    the_proxy.wait_for(f"^streamproof proxy: plan \\[0\\] {fault}$")
    assert the_proxy.out.index(listening[0]) == 0  # first, for a script to read

    result, client = client_result(listening[1], running)
    assert result["status"] == "completed", client.output()
    assert result["artifacts"] == [{"id": ARTIFACT_ID, "name": "Market summary", "text": SUMMARY}]
    assert result["incomplete"] is False
    assert "stream dropped: no event for" in "\n".join(client.err)  # the watchdog, not luck

    resubscribe = the_proxy.wait_for(r"req (\d+)\s+request\s+POST / rpc=tasks/resubscribe")[1]
    the_proxy.wait_for(rf"req {resubscribe}\s+end\s")
    assert the_proxy.stop(signal.SIGINT) == 130, the_proxy.output()
    output = the_proxy.output()
    print(output)  # the live output, for the docs and the curious (pytest -s)
    assert "Traceback" not in output

    lines = the_proxy.out
    requests = [
        (m[1], m[2])
        for m in (re.search(r"req (\d+)\s+request\s+POST / rpc=(\S+)", line) for line in lines)
        if m
    ]
    methods = [method for _, method in requests]
    assert methods[:3] == ["message/stream", "tasks/get", "tasks/resubscribe"], output
    assert methods.count("message/stream") == 1, "the client resent its message"
    stream_request = requests[0][0]

    # The fault fired on the message/stream response, 4 s (or a little more) after it began.
    def at(kind: str) -> float:
        pattern = rf"^\s*([\d.]+)s\s+conn \d+ req {stream_request}\s+{kind}\s"
        times = [float(m[1]) for m in (re.match(pattern, line) for line in lines) if m]
        assert times, f"no {kind} line for req {stream_request}:\n{output}"
        return times[0]

    fault_lines = [line for line in lines if re.search(r"\sfault\s+\[0\] after: 4s -> stall", line)]
    assert len(fault_lines) == 1, output
    assert f" req {stream_request} " in fault_lines[0]
    assert 3.9 <= at("fault") - at("response") < 8.0
    assert re.search(rf"req {stream_request}\s+end\s+fin by client", output), output
    assert lines[-1].startswith("streamproof proxy: stopped after "), output
    assert "(SIGINT)" in lines[-1]
    assert "1 fault fired ([0] rpc message/stream after 4s: stall)" in lines[-1]

    # What it wrote is a scenario to finish: the plan, and the ledger it saw.
    text = written.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert data["kind"] == "a2a-client"
    assert data["links"] == {
        "a2a": [{"when": {"rpc": "message/stream", "after": "4s"}, "do": "stall"}]
    }
    assert data["expect"]["ledger"][:3] == ["message/stream", "tasks/get", "tasks/resubscribe"]
    data.update(
        client={"deadline": "90s", "idle": "20s"},
        task=[{"at": "0s", "status": "submitted"}, {"at": "78s", "status": "completed"}],
    )
    assert parse_scenarios(yaml.safe_dump(data, sort_keys=False), str(written))

    assert port_is_free(agent.proxy_port)
    assert group_is_gone(the_proxy.proc.pid)


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_a_signal_stops_it_cleanly(sig: signal.Signals, code: int, running: list[Running]) -> None:
    """Stopped with a response in progress (a request stalled before upstream): the response
    ends by the proxy, the port is freed and no process is left."""
    the_proxy = start(
        running,
        proxy("--upstream", f"http://127.0.0.1:{free_port()}", "--fault", "on_request: stall"),
    )
    url = the_proxy.wait_for(LISTENING)[1]
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as held:
        held.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        the_proxy.wait_for(r"req 0\s+fault\s+\[0\] on_request -> stall")
        assert the_proxy.stop(sig) == code, the_proxy.output()
        assert held.recv(1024) == b""  # closed, with no response
    output = the_proxy.output()
    assert "Traceback" not in output
    assert re.search(r"req 0\s+end\s+fin by proxy: the proxy was closed", output), output
    assert the_proxy.out[-1].startswith("streamproof proxy: stopped after ")
    assert f"({sig.name}): 1 connection; 1 request (GET /stream); 1 fault fired" in output
    assert port_is_free(port)
    assert group_is_gone(the_proxy.proc.pid)


def test_for_stops_it_by_itself(running: list[Running]) -> None:
    began = time.monotonic()
    the_proxy = start(
        running,
        proxy("--upstream", "http://127.0.0.1:9", "--fault", "after 40s: stall", "--for", "2s"),
    )
    url = the_proxy.wait_for(LISTENING)[1]
    assert the_proxy.wait(START_S) == 0, the_proxy.output()
    assert time.monotonic() - began >= 2.0
    assert the_proxy.out[-1].startswith("streamproof proxy: stopped after 2.")
    assert "(--for 2s): 0 connections; 0 requests; 0 faults fired" in the_proxy.out[-1]
    assert port_is_free(int(url.rsplit(":", 1)[1]))


def test_an_unreachable_upstream_is_said_plainly(running: list[Running]) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    the_proxy = start(
        running, proxy("--upstream", dead, "--fault", "after 4s: stall", "--for", "30s")
    )
    url = the_proxy.wait_for(LISTENING)[1]
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=30) as s:
        s.sendall(b"POST /chat/s1 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
        assert s.recv(1024) == b""  # the connection closes with no response
    line = the_proxy.wait_for(r"req 0\s+end\s+upstream_error: (.*)")[0]
    assert "upstream request failed: ClientConnectorError: Cannot connect to host" in line
    the_proxy.wait_for(f"the upstream {dead} failed a request", stderr=True)
    the_proxy.wait_for(f"warning: the upstream {dead} cannot be reached now", stderr=True)
    assert the_proxy.stop(signal.SIGTERM) == 143
    assert "Traceback" not in the_proxy.output()


def test_a_card_that_bypasses_the_proxy_is_pointed_out(
    agent: Agent, running: list[Running]
) -> None:
    """The agent's card names the story's proxy port; a proxy elsewhere is bypassed."""
    the_proxy = start(running, proxy("--upstream", agent.url, "--fault", "rst", "--for", "30s"))
    url = the_proxy.wait_for(LISTENING)[1]
    warning = the_proxy.wait_for(r"warning: the upstream's agent card .*", stderr=True)[0]
    assert f"advertises http://127.0.0.1:{agent.proxy_port}/" in warning
    assert f"make the server advertise {url}/" in warning
    assert the_proxy.stop(signal.SIGINT) == 130


def run_bad(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        proxy(*args), cwd=ROOT, capture_output=True, text=True, timeout=START_S, check=False
    )
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    assert "listening on" not in done.stdout
    return done


def test_bad_input_is_refused_with_the_reason(tmp_path: Path) -> None:
    up = "http://127.0.0.1:9"
    outside = run_bad("--upstream", up, "--listen", "0.0.0.0:8080", "--fault", "after 4s: stall")
    assert "--listen 0.0.0.0:8080: streamproof proxy listens on loopback only" in outside.stderr

    typo = run_bad("--upstream", up, "--fault", "aftr 40s: stall", "--fault", "after 40s: stal")
    assert "--fault 'aftr 40s: stall': unknown word 'aftr'" in typo.stderr
    assert "(did you mean 'after'?)" in typo.stderr
    assert "--fault 'after 40s: stal': unknown action 'stal' (did you mean 'stall'?)" in typo.stderr

    rejected = run_bad(
        "--upstream", up, "--engine", "toxiproxy", "--fault", "rpc message/stream after 4s: stall"
    )
    assert (
        "--fault 'rpc message/stream after 4s: stall': engine toxiproxy cannot do when.rpc: "
        "toxiproxy applies a toxic to every connection" in rejected.stderr
    )

    plan = tmp_path / "plan.yaml"
    plan.write_text("- {when: {after: 40s}, do: stall}\n- {when: {idle: 2h}, do: {stall: 5}}\n")
    bad_plan = run_bad("--upstream", up, "--plan", str(plan))
    assert f"{plan}:2: [1].do.stall" in bad_plan.stderr

    # Neither --plan nor --fault: a recording proxy that changes nothing.
    neither = subprocess.run(
        proxy("--upstream", up, "--for", "500ms"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=START_S,
    )
    assert neither.returncode == 0, neither.stderr
    assert "no faults: the traffic passes unchanged and is recorded" in neither.stdout

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = run_bad("--upstream", up, "--listen", f"127.0.0.1:{port}", "--fault", "rst")
    assert f"--listen 127.0.0.1:{port}: cannot listen there: " in busy.stderr
