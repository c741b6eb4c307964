"""What is particular to the toxiproxy engine: its build, its server's lifecycle, the wire offset
of a cut on keep-alive connections, its per-proxy hold, and its errors.

What every engine must do is in ``test_conformance.py``; here are the toxiproxy-only promises
of :mod:`streamproof.faults.engines.toxiproxy`: the setup builds or explains, the server is never
left running, a cut lands at the right byte of *this* connection's wire, and an API failure
says which call failed and what toxiproxy answered.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, cast

import aiohttp
import pytest
import pytest_asyncio

from harness.tests.conftest import require_toxiproxy
from harness.tests.faults.engines.test_conformance import (
    Client,
    Request,
    Upstream,
    ev,
    read_timeout,
)
from streamproof.faults.engines import EngineUnavailable, open_engine, tcp_diag
from streamproof.faults.engines.toxiproxy import ToxiproxyEngine, ToxiproxyError, ToxiproxyLink
from streamproof.faults.engines.toxiproxy import server as server_module
from streamproof.faults.engines.toxiproxy.recorder import Wire
from streamproof.faults.engines.toxiproxy.server import ToxiproxyAPI, find_binary
from streamproof.faults.engines.toxiproxy.toxics import CUT, NO_LIMIT
from streamproof.faults.plan import parse_plan

ROOT = Path(__file__).resolve().parents[4]
on_module_loop = pytest.mark.asyncio(loop_scope="module")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def executable(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --- the build ---------------------------------------------------------------------------------


def build(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a copy of scripts/build-toxiproxy in a scratch project (it builds into its own
    .tools/bin), with only ``env``."""
    scripts = tmp_path / "scripts"
    scripts.mkdir(exist_ok=True)
    script = scripts / "build-toxiproxy"
    shutil.copy2(ROOT / "scripts" / "build-toxiproxy", script)
    return subprocess.run(
        [str(script)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


NO_GO_PATH = "/usr/bin:/bin"


@pytest.fixture
def no_go() -> dict[str, str]:
    if shutil.which("go", path=NO_GO_PATH) is not None:
        pytest.skip(f"go is on {NO_GO_PATH}: cannot show a machine without Go")
    return {"PATH": NO_GO_PATH}


def fake_go(tmp_path: Path, install: str) -> Path:
    """A ``go`` that knows no build info and whose ``install`` runs ``install`` (shell)."""
    log = tmp_path / "go.log"
    return executable(
        tmp_path / "fake-go",
        "#!/usr/bin/env bash\n"
        f'echo "$*" >> {log}\n'
        'case "$1" in\n'
        "  version) exit 1 ;;\n"
        "  env) echo go-fake ;;\n"
        f"  install) {install} ;;\n"
        "esac\n",
    )


def test_bootstrap_builds_toxiproxy_with_the_build_script() -> None:
    bootstrap = (ROOT / "scripts" / "bootstrap").read_text(encoding="utf-8")
    assert "scripts/build-toxiproxy" in bootstrap
    script = (ROOT / "scripts" / "build-toxiproxy").read_text(encoding="utf-8")
    assert "github.com/Shopify/toxiproxy/v2" in script and "version=v2.12.0" in script
    assert "GOFLAGS=-mod=mod" in script
    assert ".tools/" in (ROOT / ".gitignore").read_text(encoding="utf-8")


def test_without_go_the_build_says_so_and_still_succeeds(
    tmp_path: Path, no_go: dict[str, str]
) -> None:
    run = build(tmp_path, no_go)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines and all(line.startswith("bootstrap: ") for line in lines)
    assert "Go is not installed" in run.stdout and "engine is unavailable" in run.stdout
    assert "https://go.dev/dl/" in run.stdout and "STREAMPROOF_TOXIPROXY" in run.stdout
    assert not (tmp_path / ".tools" / "bin" / "toxiproxy-server").exists()


def test_without_go_a_binary_already_built_is_kept(tmp_path: Path, no_go: dict[str, str]) -> None:
    (tmp_path / ".tools" / "bin").mkdir(parents=True)
    executable(tmp_path / ".tools" / "bin" / "toxiproxy-server", "#!/bin/sh\n")
    run = build(tmp_path, no_go)
    assert run.returncode == 0 and "keeping .tools/bin/toxiproxy-server" in run.stdout


def test_a_users_own_binary_is_used_and_a_wrong_path_is_named(
    tmp_path: Path, no_go: dict[str, str]
) -> None:
    mine = executable(tmp_path / "my-toxiproxy", "#!/bin/sh\n")
    used = build(tmp_path, {**no_go, "STREAMPROOF_TOXIPROXY": str(mine)})
    assert used.returncode == 0 and f"using STREAMPROOF_TOXIPROXY={mine}" in used.stdout
    wrong = build(tmp_path, {**no_go, "STREAMPROOF_TOXIPROXY": str(tmp_path / "nope")})
    assert wrong.returncode == 0 and "is not an executable file" in wrong.stdout


def test_the_build_installs_the_pinned_module_into_the_project(
    tmp_path: Path, no_go: dict[str, str]
) -> None:
    go = fake_go(tmp_path, 'printf "#!/bin/sh\\n" > "$GOBIN/server" && chmod +x "$GOBIN/server"')
    run = build(tmp_path, {**no_go, "STREAMPROOF_GO": str(go)})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "building toxiproxy-server v2.12.0 with go-fake" in run.stdout
    assert "built .tools/bin/toxiproxy-server" in run.stdout
    assert os.access(tmp_path / ".tools" / "bin" / "toxiproxy-server", os.X_OK)
    calls = (tmp_path / "go.log").read_text(encoding="utf-8")
    assert "install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0" in calls
    assert not list((tmp_path / ".tools").glob("build.*"))  # no scratch folder left


def test_a_failed_build_is_reported_and_setup_goes_on(
    tmp_path: Path, no_go: dict[str, str]
) -> None:
    go = fake_go(tmp_path, "echo 'dial tcp: lookup proxy.golang.org: no such host' >&2; exit 1")
    run = build(tmp_path, {**no_go, "STREAMPROOF_GO": str(go)})
    assert run.returncode == 0
    assert "WARNING: building toxiproxy-server v2.12.0 failed" in run.stdout
    assert "bootstrap:   dial tcp: lookup proxy.golang.org: no such host" in run.stdout
    assert not (tmp_path / ".tools" / "bin" / "toxiproxy-server").exists()


def test_an_up_to_date_build_is_not_rebuilt(tmp_path: Path) -> None:
    binary = require_toxiproxy()
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed: the binary's version cannot be read")
    (tmp_path / ".tools" / "bin").mkdir(parents=True)
    (tmp_path / ".tools" / "bin" / "toxiproxy-server").symlink_to(binary)
    run = build(tmp_path, {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")})
    version = subprocess.run([go, "version", "-m", str(binary)], capture_output=True, text=True)
    if "v2.12.0" not in version.stdout:
        pytest.skip(f"{binary} is not a v2.12.0 build")
    assert run.returncode == 0 and "is v2.12.0 (up to date)" in run.stdout, run.stdout


# --- finding the binary ------------------------------------------------------------------------


def test_no_binary_anywhere_makes_the_engine_unavailable_saying_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STREAMPROOF_TOXIPROXY", raising=False)
    monkeypatch.setattr(server_module, "PROJECT_BINARY", tmp_path / "missing")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EngineUnavailable) as caught:
        open_engine("toxiproxy")
    message = str(caught.value)
    assert "toxiproxy-server v2.12.0" in message and "scripts/bootstrap" in message
    assert "Go >= 1.23" in message and "STREAMPROOF_TOXIPROXY" in message


def test_the_users_binary_comes_first_and_a_wrong_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = executable(tmp_path / "toxiproxy-server", "#!/bin/sh\n")
    monkeypatch.setenv("STREAMPROOF_TOXIPROXY", str(mine))
    assert find_binary() == mine
    monkeypatch.setenv("STREAMPROOF_TOXIPROXY", str(tmp_path / "elsewhere"))
    with pytest.raises(EngineUnavailable, match="elsewhere is not an executable file"):
        find_binary()


# --- the server's lifecycle --------------------------------------------------------------------


async def test_the_server_runs_until_close_and_nothing_is_left() -> None:
    require_toxiproxy()
    engine = ToxiproxyEngine()
    await engine.start()
    pid = engine.pid
    assert pid is not None and alive(pid)
    assert os.getpgid(pid) == pid  # its own process group
    assert await engine.api.call("GET", "/version") == {"version": "git"}
    await engine.close()
    assert not alive(pid)
    await engine.close()  # twice is harmless


async def test_a_server_that_exits_at_once_fails_start_with_its_output(tmp_path: Path) -> None:
    broken = executable(tmp_path / "toxiproxy-server", "#!/bin/sh\necho 'no config here'\nexit 3\n")
    engine = ToxiproxyEngine(str(broken))
    with pytest.raises(ToxiproxyError, match=r"did not start(.|\n)*no config here"):
        await engine.start()
    assert engine.pid is None
    await engine.close()


async def test_a_server_that_never_answers_is_killed_after_a_bounded_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "pid"
    silent = executable(
        tmp_path / "toxiproxy-server", f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n"
    )
    monkeypatch.setattr(server_module, "_READY_TIMEOUT", 0.5)
    engine = ToxiproxyEngine(str(silent))
    t0 = time.monotonic()
    with pytest.raises(ToxiproxyError, match=r"did not answer within 0\.5s"):
        await engine.start()
    assert time.monotonic() - t0 < 10
    assert not alive(int(pid_file.read_text()))


async def test_a_binary_that_cannot_be_run_makes_the_engine_unavailable(tmp_path: Path) -> None:
    garbage = tmp_path / "toxiproxy-server"
    garbage.write_bytes(b"\x00\x01 not a program")
    garbage.chmod(0o755)
    engine = ToxiproxyEngine(str(garbage))
    with pytest.raises(EngineUnavailable, match="cannot run toxiproxy-server"):
        await engine.start()
    await engine.close()


# --- links on one server -----------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def upstream() -> AsyncIterator[Upstream]:
    server = Upstream()
    await server.start()
    yield server
    await server.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine() -> AsyncIterator[ToxiproxyEngine]:
    require_toxiproxy()
    started = ToxiproxyEngine()
    await started.start()
    yield started
    pid = started.pid
    await started.close()
    assert pid is not None and not alive(pid)


@pytest_asyncio.fixture(loop_scope="module")
async def link(engine: ToxiproxyEngine, upstream: Upstream) -> AsyncIterator[ToxiproxyLink]:
    made = engine.link("model", upstream.url, time_scale=1.0)
    await made.start()
    yield made
    await made.close()


def plan(link: ToxiproxyLink, *faults: dict[str, object]) -> None:
    link.load(parse_plan(list(faults)))
    link.set_epoch(time.monotonic())


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


class RawConnection:
    """One keep-alive TCP connection, requests written by hand, every byte read kept."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.received = bytearray()

    @classmethod
    async def open(cls, base: str) -> RawConnection:
        host, port = base.removeprefix("http://").split(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    async def get(self, path: str) -> tuple[bytes, str]:
        """Send one GET; this response's bytes and how it ended: ``complete`` (the chunked
        terminator), ``eof`` or ``reset``."""
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        start = len(self.received)
        try:
            while not self.received[start:].endswith(b"\r\n0\r\n\r\n"):
                chunk = await asyncio.wait_for(self.reader.read(65536), 5.0)
                if not chunk:
                    return bytes(self.received[start:]), "eof"
                self.received += chunk
        except ConnectionResetError:
            return bytes(self.received[start:]), "reset"
        return bytes(self.received[start:]), "complete"

    def close(self) -> None:
        self.writer.close()


def chunks_of(response: bytes) -> tuple[bytes, list[bytes], bytes]:
    """A chunked response split into its head, its complete chunks' data and any tail left."""
    head, _, body = response.partition(b"\r\n\r\n")
    datas = []
    while True:
        size_line, sep, rest = body.partition(b"\r\n")
        if not sep:
            break
        size = int(size_line, 16)
        if size == 0 or len(rest) < size + 2:
            break
        datas.append(rest[:size])
        body = rest[size + 2 :]
    return head, datas, body


def cut_offset(link: ToxiproxyLink) -> int:
    detail = next(e.detail for e in link.events if e.kind == "fault")
    match = re.search(r"toxiproxy cuts at byte (\d+) of the connection", detail)
    assert match, detail
    return int(match.group(1))


@on_module_loop
@pytest.mark.parametrize("load_between", [False, True], ids=["one plan", "plan loaded between"])
async def test_a_cut_after_event_n_lands_there_on_the_second_response_of_a_connection(
    link: ToxiproxyLink, load_between: bool
) -> None:
    """The proof of the wire offset: on one keep-alive connection, a first response (two
    events, under the same plan or before it was loaded), then a second one cut after its third
    event. The client gets exactly the bytes up to the end of event 3's chunk on the wire:
    response 1, the headers of response 2, its chunk framing, and not one byte more."""
    if not load_between:
        plan(link, {"when": {"after_event": 3}, "do": "fin"})
    else:
        plan(link)
    connection = await RawConnection.open(link.base_url)
    try:
        first, how = await connection.get("/sse?n=2")
        assert how == "complete"
        if load_between:
            plan(link, {"when": {"after_event": 3}, "do": "fin"})
        second, how = await connection.get("/sse?n=6&gap=0.005")
    finally:
        connection.close()
    assert how == "eof"
    head, datas, tail = chunks_of(second)
    assert head.startswith(b"HTTP/1.1 200") and tail == b""
    assert b"".join(datas) == ev(1) + ev(2) + ev(3)
    assert len(connection.received) == len(first) + len(second)
    assert cut_offset(link) == len(first) + len(second)
    await link.wait_quiet(5)
    requests = [e for e in link.events if e.kind == "request"]
    assert len({e.connection for e in requests}) == 1
    assert [e.event_index for e in link.events if e.kind == "event"][-3:] == [1, 2, 3]


@on_module_loop
async def test_a_cut_on_one_connection_leaves_the_others_on_the_link_alone(
    link: ToxiproxyLink,
) -> None:
    """toxiproxy's limit is one number for every connection of the proxy: lowering it for one
    cut must not close a connection already further along (here, a keep-alive one with a
    response behind it) nor one that ends before its own cut."""
    plan(link, {"when": {"after_event": 3}, "do": "fin"})
    async with Client("aiohttp", 2.0) as a, Client("httpx", 2.0) as b, Client("httpx", 2.0) as c:
        warm = await b.fetch(link.base_url, Request("/sse?n=2"))
        assert warm.error is None
        slow = asyncio.ensure_future(b.fetch(link.base_url, Request("/sse?n=8&gap=0.08")))
        short = asyncio.ensure_future(c.fetch(link.base_url, Request("/sse?n=2&gap=0.08")))
        fast = await a.fetch(link.base_url, Request("/sse?n=8&gap=0.002"))
        behind, done = await slow, await short
    assert fast.ns == [1, 2, 3] and isinstance(fast.error, aiohttp.ClientPayloadError)
    assert behind.ns == [1, 2, 3] and behind.error is not None
    assert done.error is None and done.ns == [1, 2]
    await link.wait_quiet(5)
    ends = sorted((e.how, e.by) for e in link.events if e.kind == "end")
    assert ends == [("clean", "upstream")] * 2 + [("fin", "proxy")] * 2


class Late:
    """A recorder connection's socket whose writes are kept back while ``keeping``: the bytes
    are still on their way to toxiproxy. Makes the window between a write and toxiproxy
    forwarding it as wide as a test needs."""

    def __init__(self, inner: asyncio.Transport) -> None:
        self._inner = inner
        self.keeping = False
        self._kept: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.keeping:
            self._kept.append(bytes(data))
        else:
            self._inner.write(data)

    def writelines(self, chunks: Iterable[bytes | bytearray | memoryview]) -> None:
        for chunk in chunks:
            self.write(chunk)

    def release(self) -> None:
        self.keeping = False
        for data in self._kept:
            self._inner.write(data)
        self._kept.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def late_sockets(link: ToxiproxyLink, monkeypatch: pytest.MonkeyPatch) -> list[Late]:
    """Every recorder connection of ``link`` from now on is a :class:`Late`, in accept order."""
    recorder = link._recorder
    wrap = recorder._wrap_transport
    made: list[Late] = []

    def late_wrap(transport: asyncio.BaseTransport) -> asyncio.BaseTransport:
        made.append(Late(cast(asyncio.Transport, transport)))
        return wrap(cast(asyncio.Transport, made[-1]))

    monkeypatch.setattr(recorder, "_wrap_transport", late_wrap)
    return made


def on_lowered_limit(
    engine: ToxiproxyEngine,
    monkeypatch: pytest.MonkeyPatch,
    then: Callable[[], Coroutine[Any, Any, None]],
) -> None:
    """Run ``then`` once toxiproxy has answered a call lowering a cut limit, before the engine
    reads the answer."""
    api = engine.api
    real = api.call

    async def call(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        answer = await real(method, path, body)
        if method == "PATCH" and path.endswith(f"/toxics/{CUT}") and body is not None:
            if body["attributes"]["bytes"] != NO_LIMIT:
                await then()
        return answer

    monkeypatch.setattr(api, "call", call)


@on_module_loop
async def test_a_cut_is_the_proxys_even_if_toxiproxy_closes_before_its_api_answers(
    engine: ToxiproxyEngine, link: ToxiproxyLink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection's own last bytes reach toxiproxy only once the limit is lowered, so
    toxiproxy closes the connection at once (no poke needed), and the recorder sees the close
    before the API's answer: the end is still the proxy's cut, not a client leaving."""
    lates = late_sockets(link, monkeypatch)

    async def deliver_then_wait_for_the_close() -> None:
        lates[0].release()
        await until(lambda: link.open_connections == 0)

    on_lowered_limit(engine, monkeypatch, deliver_then_wait_for_the_close)
    plan(link, {"when": {"after_event": 3}, "do": "fin"})
    connection = await RawConnection.open(link.base_url)
    try:
        await until(lambda: len(lates) == 1)
        lates[0].keeping = True
        response, how = await connection.get("/sse?n=6&gap=0.005")
    finally:
        connection.close()
    assert how == "eof"
    assert b"".join(chunks_of(response)[1]) == ev(1) + ev(2) + ev(3)
    await link.wait_quiet(5)
    ends = [(e.how, e.by) for e in link.events if e.kind == "end"]
    assert ends == [("fin", "proxy")]


@on_module_loop
async def test_a_cut_waits_for_a_connection_at_its_offset_with_bytes_on_their_way(
    engine: ToxiproxyEngine, link: ToxiproxyLink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two keep-alive connections at the same wire offset: the second response of ``behind``
    (two events, then a pause) and the cut of ``cut`` after event 3. If ``behind``'s last bytes
    reached toxiproxy while the lowered limit is in place, they would fill it and toxiproxy
    would close ``behind`` too; the engine first sees them delivered."""
    if not tcp_diag.available():
        pytest.skip("sock_diag is not available here (not Linux, or netlink not allowed)")
    lates = late_sockets(link, monkeypatch)
    acked = tcp_diag.bytes_acked

    def bytes_acked(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
        lates[0].release()  # the bytes on their way arrive, however long that takes
        return acked(local, remote)

    async def arrive_now() -> None:
        # If the engine did not wait, they go through toxiproxy while the limit is low.
        lates[0].release()
        await until(lambda: ev(2) in behind.received)

    monkeypatch.setattr(tcp_diag, "bytes_acked", bytes_acked)
    on_lowered_limit(engine, monkeypatch, arrive_now)
    plan(link, {"when": {"after_event": 3}, "do": "fin"})
    behind = await RawConnection.open(link.base_url)
    cut = await RawConnection.open(link.base_url)
    try:
        first, how = await behind.get("/sse?n=1")
        assert how == "complete" and len(lates) == 2
        lates[0].keeping = True
        second = asyncio.ensure_future(behind.get("/sse?n=3&pause_after=2&pause=2"))
        await until(lambda: sum(e.kind == "event" and e.request == 1 for e in link.events) == 2)
        empty, how = await cut.get("/sse?n=0")
        assert how == "complete"
        cut_response, how = await cut.get("/sse?n=6&gap=0.005")
        assert how == "eof"
        behind_response, how = await second
    finally:
        behind.close()
        cut.close()
    assert b"".join(chunks_of(behind_response)[1]) == ev(1) + ev(2) + ev(3)
    event_3 = f"{len(ev(3)):x}\r\n".encode() + ev(3) + b"\r\n"
    at_the_cut = len(first) + behind_response.index(event_3)
    assert cut_offset(link) == len(empty) + len(cut_response) == at_the_cut  # the premise
    await link.wait_quiet(5)
    ends = sorted((e.how, e.by) for e in link.events if e.kind == "end")
    assert ends == [("clean", "upstream")] * 2 + [("fin", "proxy")] * 2


@on_module_loop
async def test_where_delivery_cannot_be_seen_the_recorder_closes_the_connection_itself(
    link: ToxiproxyLink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without sock_diag the engine cannot know that a connection further along has nothing on
    its way through toxiproxy, so it does not lower the shared limit: the recorder closes its
    side of the connection to cut, toxiproxy closes the client's after the same bytes, and the
    end says so. The other connections are left alone, as with the limit."""
    monkeypatch.setattr(tcp_diag, "available", lambda: False)
    plan(link, {"when": {"after_event": 3}, "do": "fin"})
    async with Client("aiohttp", 2.0) as a, Client("httpx", 2.0) as b:
        warm = await b.fetch(link.base_url, Request("/sse?n=2"))
        assert warm.error is None
        slow = asyncio.ensure_future(b.fetch(link.base_url, Request("/sse?n=8&gap=0.08")))
        fast = await a.fetch(link.base_url, Request("/sse?n=8&gap=0.002"))
        behind = await slow
    assert fast.ns == [1, 2, 3] and isinstance(fast.error, aiohttp.ClientPayloadError)
    assert behind.ns == [1, 2, 3] and behind.error is not None
    await link.wait_quiet(5)
    ends = [e for e in link.events if e.kind == "end"]
    assert sorted((e.how, e.by) for e in ends) == [("clean", "upstream")] + [("fin", "proxy")] * 2
    kept_alive = ends[0].connection  # warm's, then slow's
    fast_end = next(e for e in ends if e.by == "proxy" and e.connection != kept_alive)
    slow_end = next(e for e in ends if e.by == "proxy" and e.connection == kept_alive)
    assert "the recorder closed its side" in fast_end.detail
    assert "the recorder closed its side" not in slow_end.detail  # nothing was ahead of it


class Socket(asyncio.Transport):
    """What a held :class:`Wire` hands on, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[object] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.calls.append(bytes(data))

    def write_eof(self) -> None:
        self.calls.append("eof")

    def close(self) -> None:
        self.calls.append("close")

    def is_closing(self) -> bool:
        return "close" in self.calls


def test_a_held_wire_hands_nothing_to_toxiproxy_until_released() -> None:
    """While another connection's cut has the limit low, a connection gets no byte from any
    path: the chunked terminator aiohttp writes itself and a close wait too, in order."""
    inner = Socket()
    wire = Wire(inner, armed=False)
    wire.write(b"abc")
    wire.hold()
    wire.writelines([b"de", b"f"])
    wire.write_eof()
    wire.close()
    assert inner.calls == [b"abc"] and wire.written == 3 and wire.is_closing()
    wire.release()
    assert inner.calls == [b"abc", b"de", b"f", "eof", "close"] and wire.written == 6


@on_module_loop
async def test_a_reset_plan_closes_idle_connections_toxiproxy_did_not_arm(
    link: ToxiproxyLink,
) -> None:
    """toxiproxy makes a close a reset only on connections that start with reset_peer armed:
    an idle keep-alive connection from before the plan is closed, so the client's next request
    opens an armed one and gets the RST."""
    plan(link)
    async with Client("aiohttp", 2.0) as http:
        first = await http.fetch(link.base_url, Request("/sse?n=2"))
        assert first.error is None and link.open_connections == 1
        plan(link, {"when": {"after_event": 2}, "do": "rst"})
        await until(lambda: link.open_connections == 0)
        second = await http.fetch(link.base_url, Request("/sse?n=6"))
    assert second.ns == [1, 2] and "ConnectionResetError" in str(second.error)
    await link.wait_quiet(5)
    ends = [(e.how, e.by) for e in link.events if e.kind == "end"]
    assert ends == [("rst", "proxy")]


@on_module_loop
async def test_a_stall_holds_only_its_own_connection(link: ToxiproxyLink) -> None:
    """Why the stall is the recorder's, not a toxiproxy latency toxic (which acts on every
    connection of the proxy): while one response is stalled, a request on another connection
    is answered, as a client recovering from a proxy's idle cut needs."""
    plan(link, {"when": {"after": "200ms"}, "do": "stall"})
    async with Client("aiohttp", 0.8) as stalled, Client("httpx", 2.0) as beside:
        first = asyncio.ensure_future(stalled.fetch(link.base_url, Request("/sse?n=40&gap=0.02")))
        await until(lambda: any(e.kind == "fault" for e in link.events))
        other = await beside.fetch(link.base_url, Request("/sse?n=3"))
        assert first.done() is False
        seen = await first
    assert other.error is None and other.ns == [1, 2, 3]
    read_timeout("aiohttp", seen)
    assert 3 <= len(seen.ns) < 40
    await link.wait_quiet(5)
    stalled_events = [e for e in link.events if e.kind == "event" and e.request == 0]
    assert [e.event_index for e in stalled_events] == seen.ns


@on_module_loop
async def test_plan_durations_are_scaled_as_on_the_inline_engine(
    engine: ToxiproxyEngine, upstream: Upstream
) -> None:
    """At time scale 0.1 a 3 s delay (a latency toxic) is 0.3 s and a cut after 2 s (the
    recorder's timer) comes at 0.2 s."""
    scaled = engine.link("browser", upstream.url, time_scale=0.1)
    base = await scaled.start()
    try:
        plan(scaled, {"do": {"delay": "3s"}}, {"when": {"after": "2s"}, "do": "fin"})
        async with Client("aiohttp", 5.0) as http:
            seen = await http.fetch(base, Request("/sse?n=100&gap=0.02"))
    finally:
        await scaled.close()
    assert seen.first_byte is not None and 0.28 <= seen.first_byte < 1.5
    assert isinstance(seen.error, aiohttp.ClientPayloadError)
    assert 0.45 <= seen.elapsed < 2.5  # 0.3 s late, then cut 0.2 s into the response
    assert 3 <= len(seen.ns) < 100


@on_module_loop
async def test_refuse_disables_the_proxy_and_the_next_plan_enables_it_again(
    link: ToxiproxyLink,
) -> None:
    plan(link, {"do": "refuse"})
    async with Client("aiohttp", 2.0) as http:
        refused = await http.fetch(link.base_url, Request("/sse?n=2"))
        assert isinstance(refused.error, aiohttp.ClientConnectorError)
        plan(link)
        served = await http.fetch(link.base_url, Request("/sse?n=2"))
    assert served.error is None and served.ns == [1, 2]


@on_module_loop
async def test_a_plan_the_engine_cannot_do_is_refused_at_load(link: ToxiproxyLink) -> None:
    with pytest.raises(ValueError, match=r"links.model\[0\]: engine toxiproxy cannot do do.status"):
        link.load(parse_plan([{"do": {"status": 502}}]))


# --- API errors --------------------------------------------------------------------------------


@on_module_loop
async def test_a_busy_port_is_reported_with_toxiproxys_answer(
    engine: ToxiproxyEngine, upstream: Upstream
) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        link = engine.link("browser", upstream.url)
        with pytest.raises(ToxiproxyError) as caught:
            await link.start(port=port)
    message = str(caught.value)
    assert message.startswith("toxiproxy API POST /proxies answered 500: ")
    assert "address already in use" in message
    await link.close()


@on_module_loop
async def test_api_errors_name_the_call_and_what_toxiproxy_said(engine: ToxiproxyEngine) -> None:
    with pytest.raises(ToxiproxyError, match=r"PATCH /proxies/nope/toxics/x answered 404: proxy"):
        await engine.api.call("PATCH", "/proxies/nope/toxics/x", {"attributes": {}})
    with pytest.raises(ToxiproxyError, match=r"GET /version at http://127.0.0.1:9 failed"):
        async with aiohttp.ClientSession() as session:
            await ToxiproxyAPI("http://127.0.0.1:9", session).call("GET", "/version")
    with pytest.raises(ToxiproxyError, match=r"POST /proxies answered 400"):
        engine.api.call_blocking("POST", "/proxies", {"name": 3})


@on_module_loop
async def test_the_api_refuses_a_browser_so_the_engine_does_not_look_like_one(
    engine: ToxiproxyEngine,
) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.get(engine.api.base_url + "/version", headers={"User-Agent": "Mozilla/5.0"}) as r,
    ):
        assert r.status == 403
    assert await engine.api.call("GET", "/version") == {"version": "git"}


@on_module_loop
async def test_closing_the_engine_closes_a_link_left_open(upstream: Upstream) -> None:
    require_toxiproxy()
    engine = ToxiproxyEngine()
    await engine.start()
    link = engine.link("a2a", upstream.url)
    url = await link.start()
    pid = engine.pid
    assert pid is not None
    await engine.close()
    assert not alive(pid)
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, signal.SIG_DFL)


# --- seeing delivery ---------------------------------------------------------------------------


def test_sock_diag_counts_what_a_peer_acknowledged() -> None:
    if not tcp_diag.available():
        pytest.skip("sock_diag is not available here (not Linux, or netlink not allowed)")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            accepted, _ = server.accept()
            with accepted:
                accepted.sendall(b"x" * 5000)
                got = 0
                while got < 5000:
                    got += len(client.recv(65536))
                deadline = time.monotonic() + 2
                while tcp_diag.bytes_acked(accepted.getsockname(), accepted.getpeername()) != 5000:
                    assert time.monotonic() < deadline
                    time.sleep(0.005)
    assert tcp_diag.bytes_acked(("127.0.0.1", 1), ("127.0.0.1", 2)) is None
