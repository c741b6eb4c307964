"""When a started gateway counts as ready: its own process group listens on its port, or the
declared ready path answers 2xx; a stranger on the port never passes for it."""

from __future__ import annotations

import asyncio
import socket
import sys
import textwrap
from pathlib import Path

import pytest

from streamproof.suites.gateway.target.config import GatewayTarget
from streamproof.suites.gateway.target.running import start_gateway
from streamproof.targets.errors import TargetConfigError, TargetError

ROOT = Path(__file__).resolve().parents[4]

# A tiny HTTP server: answers ``status`` (a list consumed one per request, the last repeated)
# on every path; prints its URL only when told to.
SERVER = textwrap.dedent(
    """
    import http.server, os, sys
    statuses = [int(s) for s in sys.argv[1].split(",")]
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            code = statuses.pop(0) if len(statuses) > 1 else statuses[0]
            self.send_response(code); self.send_header("Content-Length", "0"); self.end_headers()
        def log_message(self, *a): pass
    server = http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    """
)


def _target(tmp_path: Path, command: list[str], **extra: object) -> GatewayTarget:
    (tmp_path / "server.py").write_text(SERVER)
    return GatewayTarget.model_validate({"name": "tiny", "command": command, **extra})


async def test_a_declared_ready_path_must_answer_2xx(tmp_path: Path) -> None:
    server = str(tmp_path / "server.py")
    target = _target(
        tmp_path, [sys.executable, server, "404"], ready={"path": "/healthz", "timeout": "1s"}
    )
    with pytest.raises(
        TargetError,
        match=r"was not ready within 1s \(GET http://127\.0\.0\.1:\d+/healthz answered 404\)",
    ):
        await start_gateway(target, {})


async def test_a_declared_ready_path_is_polled_until_it_answers_2xx(tmp_path: Path) -> None:
    server = str(tmp_path / "server.py")
    target = _target(tmp_path, [sys.executable, server, "503,503,200"], ready={"path": "/healthz"})
    gateway = await start_gateway(target, {})
    try:
        assert gateway.base_url.startswith("http://127.0.0.1:")
    finally:
        await gateway.close()


async def test_without_a_ready_path_a_child_of_the_started_group_listening_is_ready(
    tmp_path: Path,
) -> None:
    # The command is a shell that starts the server as its child: the group, not only the
    # process started, owns the socket. The server answers 404 everywhere: without a declared
    # path, the status does not matter.
    script = f"{sys.executable} {tmp_path / 'server.py'} 404 & wait"
    gateway = await start_gateway(_target(tmp_path, ["sh", "-c", script]), {})
    await gateway.close()


async def test_a_stranger_on_the_announced_port_is_never_taken_for_the_gateway(
    tmp_path: Path,
) -> None:
    with socket.socket() as stranger:
        stranger.bind(("127.0.0.1", 0))
        stranger.listen()
        port = stranger.getsockname()[1]
        # The command announces the stranger's port but never listens itself.
        command = ["sh", "-c", f"echo listening on http://127.0.0.1:{port}; exec sleep 30"]
        target = _target(tmp_path, command, ready={"timeout": "1s"})
        with pytest.raises(TargetError) as caught:
            await start_gateway(target, {})
    message = str(caught.value)
    assert f"port {port} is held by pid" in message
    assert "not by the target's process group" in message and "declare ready.path" in message


def test_a_ready_path_must_be_absolute() -> None:
    with pytest.raises(ValueError, match="must start with '/'"):
        GatewayTarget.model_validate({"command": ["x"], "ready": {"path": "healthz"}})


def test_a_gateway_that_lists_its_bugs_takes_only_those() -> None:
    """A reference of its own (the Java gateway) names its mutants; --bug with any other is bad
    input before anything starts, and the suite passes a listed one through."""
    from streamproof.suites import known_bugs
    from streamproof.suites.gateway.suite import environment

    own = GatewayTarget(command=("java",), bug_env="B", bugs=("no-dispose", "java-only"))
    with pytest.raises(TargetConfigError, match="has no such mutant; its bugs: no-dispose, java"):
        asyncio.run(start_gateway(own, {}, bug="tidy-message-text"))
    java = ROOT / "targets" / "java-gateway.yaml"
    assert "tidy-message-text" not in known_bugs(java)
    assert "aggregate-as-delta" in known_bugs(java)
    assert environment(java, bug="no-dispose", time_scale=0.1).bug == "no-dispose"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"bugs": ["no-dispose"]}, "set bug_env too"),
        ({"bug_env": "B", "bugs": ["x", "x"]}, "x: listed more than once"),
        ({"bug_env": "B", "bugs": [" "]}, "a mutant name is empty"),
    ],
)
def test_bad_bug_lists_are_refused(extra: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GatewayTarget.model_validate({"command": ["x"], **extra})
