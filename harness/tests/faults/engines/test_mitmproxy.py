"""The mitmproxy engine end to end: what only this engine's tests can say.

The plan items every engine shares (fin/rst after an event, at the headers and on the request,
stall, stall for, delay, split, status, corrupt, end_clean, matching, keep-alive) are run through
mitmproxy, with aiohttp and httpx, by the cases of ``test_conformance.py``; a test here does not
repeat one. What stays: the engine's lifecycle (one shared master, its temporary confdir, ports,
a missing or wrong mitmproxy); pass-through byte for byte and re-chunked; the wire endings on a
raw socket (terminator, EOF, reset, open), on busy and on silent streams; mitmproxy's own record
details (events swallowed by a stall, faults not fired, the full record story of a reset,
connection numbering); variants the shared cases do not run (a stall that resumes, heartbeats,
the other corruptions, triggers on a silent stream, time scale, matching by occurrence lists,
globs and RPC method at once, clients that hang up or reset); what it rejects and why; and its
one use of mitmproxy's internals (``mitmproxy_wire``). Everything runs through a real mitmproxy
master in the test's event loop against the inline engine's upstream (canned event streams with
exact bytes), checked against the client signatures of docs/explanation/wire-facts/engines.md §3
and the link records of :mod:`streamproof.faults.records`. Timings are tens of milliseconds with
wide upper bounds; waits are on records, not on sleeps.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import logging
import socket
import struct
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import httpx
import pytest
from aiohttp import web

from harness.tests.conftest import require_module
from harness.tests.faults.engines.test_inline import (
    Upstream,
    ev,
    fetch,
    raw_get,
    via_aiohttp,
    via_httpx,
)
from streamproof.faults.engines import EngineUnavailable, engine_support, open_engine
from streamproof.faults.plan import parse_plan
from streamproof.faults.records import LinkEvent

if TYPE_CHECKING:
    from streamproof.faults.engines.mitmproxy import MitmproxyEngine, MitmproxyLink

CLIENTS = ["aiohttp", "httpx"]
CUT = {"when": {"after_event": 4}}
STALL_READ_S = 1.0
"""The client's read timeout where a stall must end a stream whose first events arrive in time:
events arrive 10-100 ms apart, but at 0.3 s a worker starved on a loaded machine timed out
before event 2 (make check)."""


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def quiet_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Expected disconnects must never put a traceback or a warning in the logs, mitmproxy's
    included."""
    caplog.set_level(logging.WARNING)
    yield
    records = [*caplog.get_records("setup"), *caplog.get_records("call"), *caplog.records]
    noisy = [
        f"{r.name}: {r.getMessage()}"
        for r in records
        if r.levelno >= logging.WARNING
        and r.name.startswith(("aiohttp", "asyncio", "streamproof", "mitmproxy"))
    ]
    assert not noisy, noisy


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    server = Upstream()
    await server.start()
    yield server
    await server.close()


@pytest.fixture
async def engine() -> AsyncIterator[MitmproxyEngine]:
    require_module("mitmproxy")
    from streamproof.faults.engines.mitmproxy import MitmproxyEngine

    started = open_engine("mitmproxy")
    assert isinstance(started, MitmproxyEngine)
    await started.start()
    yield started
    await started.close()


@pytest.fixture
async def proxy(engine: MitmproxyEngine, upstream: Upstream) -> AsyncIterator[MitmproxyLink]:
    link = engine.link("test", upstream.url)
    await link.start()
    link.set_epoch(time.monotonic())
    yield link
    await link.close()


def plan(link: MitmproxyLink, *faults: dict[str, Any]) -> None:
    link.load(parse_plan(list(faults)))
    link.set_epoch(time.monotonic())


def kinds(events: list[LinkEvent], *wanted: str) -> list[LinkEvent]:
    return [e for e in events if e.kind in wanted]


def the_end(link: MitmproxyLink) -> LinkEvent:
    (end,) = kinds(link.events, "end")
    return end


async def recorded(link: MitmproxyLink, kind: str, count: int = 1, timeout: float = 5.0) -> None:
    """Wait until ``link`` has ``count`` records of ``kind``."""
    deadline = time.monotonic() + timeout
    while len(kinds(link.events, kind)) < count:
        assert time.monotonic() < deadline, f"no {kind} record after {timeout}s: {link.events}"
        await asyncio.sleep(0.01)


def header(seen: Any, name: str) -> str | None:
    return {k.lower(): v for k, v in seen.headers.items()}.get(name.lower())


# --- lifecycle ---------------------------------------------------------------------------------


async def test_a_link_starts_and_stops_without_leaving_a_task_a_port_or_a_folder(
    upstream: Upstream,
) -> None:
    require_module("mitmproxy")
    users_mitmproxy = Path.home() / ".mitmproxy"
    existed = users_mitmproxy.exists()
    before = asyncio.all_tasks()
    from streamproof.faults.engines.mitmproxy import MitmproxyEngine

    t0 = time.monotonic()
    engine = open_engine("mitmproxy")
    assert isinstance(engine, MitmproxyEngine)
    await engine.start()
    link = engine.link("a2a", upstream.url)
    url = await link.start()
    started = time.monotonic() - t0
    confdir = engine.confdir
    assert confdir is not None and confdir.is_dir()
    home = Path.home().resolve()
    assert not confdir.resolve().is_relative_to(home), confdir  # never the user's home
    seen = await via_httpx(url + "/sse?n=3")
    assert seen.error is None and seen.ns == [1, 2, 3]
    t1 = time.monotonic()
    await link.close()
    await engine.close()
    stopped = time.monotonic() - t1
    assert started < 5.0 and stopped < 5.0  # measured ~20 ms and ~5 ms (import apart)
    left = [t for t in asyncio.all_tasks() - before if "aiohttp" not in repr(t.get_coro())]
    assert left == []  # the upstream's own handler may take a moment to see the close
    for _ in range(200):
        if asyncio.all_tasks() == before:
            break
        await asyncio.sleep(0.01)
    assert asyncio.all_tasks() == before
    assert not confdir.exists()
    assert users_mitmproxy.exists() == existed
    host, port = url.removeprefix("http://").split(":")
    with pytest.raises(OSError):
        await asyncio.open_connection(host, int(port))


async def test_engines_and_links_share_one_master(upstream: Upstream) -> None:
    require_module("mitmproxy")
    from streamproof.faults.engines.mitmproxy import MitmproxyEngine

    first, second = open_engine("mitmproxy"), open_engine("mitmproxy")
    assert isinstance(first, MitmproxyEngine) and isinstance(second, MitmproxyEngine)
    await first.start()
    await second.start()
    try:
        a = first.link("browser", upstream.url)
        b = second.link("model", upstream.url)
        c = first.link("a2a", upstream.url)
        urls = [await link.start() for link in (a, b, c)]
        assert len(set(urls)) == 3
        a.load(parse_plan([{**CUT, "do": "fin"}]))
        seen = await asyncio.gather(*(via_httpx(u + "/sse?n=6") for u in urls))
        assert [s.ns for s in seen] == [[1, 2, 3, 4], list(range(1, 7)), list(range(1, 7))]
        assert [link.requests_seen() for link in (a, b, c)] == [1, 1, 1]
        assert first.confdir == second.confdir
        await first.close()  # closes its links; the second engine keeps the master
        seen_b = await via_httpx(urls[1] + "/sse?n=2")
        assert seen_b.ns == [1, 2]
    finally:
        await first.close()
        await second.close()


async def test_open_engine_says_how_to_install_a_missing_mitmproxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(
        EngineUnavailable, match=r"mitmproxy.*a dependency of streamproof: reinstall"
    ):
        open_engine("mitmproxy")
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "11.0.2")
    with pytest.raises(EngineUnavailable, match=r"found mitmproxy 11\.0\.2"):
        open_engine("mitmproxy")


async def test_a_link_binds_loopback_only_and_needs_a_started_engine(upstream: Upstream) -> None:
    require_module("mitmproxy")
    engine = open_engine("mitmproxy")
    with pytest.raises(RuntimeError, match="not started"):
        await engine.link("x", upstream.url).start()
    await engine.start()
    try:
        with pytest.raises(ValueError, match="loopback"):
            await engine.link("x", upstream.url).start(host="0.0.0.0")
        with pytest.raises(ValueError, match="http"):
            engine.link("x", "ftp://example")
    finally:
        await engine.close()


# --- pass-through ------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_pass_through_is_byte_identical_and_chunked(
    client: str, proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy)
    seen = await fetch(client, proxy.base_url + "/sse?n=10")
    assert seen.error is None and seen.status == 200
    assert seen.ns == list(range(1, 11))
    assert bytes(seen.body) == bytes(upstream.served[0].sent)
    assert header(seen, "Transfer-Encoding") == "chunked"
    assert await proxy.wait_quiet(2)
    end = the_end(proxy)
    assert (end.how, end.by) == ("clean", "upstream")


async def test_five_thousand_events_arrive_byte_identical_and_counted(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy)
    seen = await via_aiohttp(proxy.base_url + "/big?n=5000", sock_read=10)
    assert seen.error is None
    assert bytes(seen.body) == bytes(upstream.served[0].sent)
    assert len(seen.events) == 5000
    assert await proxy.wait_quiet(5)
    events = kinds(proxy.events, "event")
    assert len(events) == 5000 and events[-1].event_index == 5000
    assert [e.detail for e in kinds(proxy.events, "comment")] == [" ping"] * 5


async def test_a_plain_body_with_a_length_goes_out_chunked(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy)
    seen = await via_httpx(proxy.base_url + "/json")
    assert seen.error is None and bytes(seen.body) == bytes(upstream.served[0].sent)
    assert header(seen, "Transfer-Encoding") == "chunked" and header(seen, "Content-Length") is None


async def test_an_upstream_with_a_base_path(engine: MitmproxyEngine) -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=request.path_qs)

    app = web.Application()
    app.router.add_get("/{tail:.*}", echo)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    link = engine.link("based", f"http://127.0.0.1:{runner.addresses[0][1]}/base/")
    try:
        await link.start()
        seen = await via_httpx(link.base_url + "/sse?n=1")
        assert bytes(seen.body) == b"/base/sse?n=1"
        assert kinds(link.events, "request")[0].path == "/sse"
    finally:
        await link.close()
        await runner.cleanup()


# --- each action, as the clients see it (docs/explanation/wire-facts/engines.md §3)
# ----------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_stall_keeps_the_socket_open_until_the_read_timeout(
    client: str, proxy: MitmproxyLink
) -> None:
    plan(proxy, {**CUT, "do": "stall"})
    seen = await fetch(client, proxy.base_url + "/sse?n=10", sock_read=STALL_READ_S)
    assert seen.ns == [1, 2, 3, 4]
    if client == "aiohttp":
        assert isinstance(seen.error, aiohttp.SocketTimeoutError)
    else:
        assert isinstance(seen.error, httpx.ReadTimeout)
    assert STALL_READ_S <= seen.t_end < STALL_READ_S + 3.0
    assert await proxy.wait_quiet(2)
    end = the_end(proxy)
    # upstream's body ended during the stall (10 events in 0.2 s): the response hook held it
    assert end.by == "client" and "6 events swallowed" in end.detail


async def test_a_stall_does_not_hold_other_requests(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"occurrence": 1, "after_event": 1}, "do": "stall"})
    stalled = asyncio.create_task(via_httpx(proxy.base_url + "/sse?n=5", read=3.0))
    await recorded(proxy, "fault")
    t0 = time.monotonic()
    other = await via_httpx(proxy.base_url + "/sse?n=5&gap=0.005")
    assert other.error is None and other.ns == [1, 2, 3, 4, 5]
    assert time.monotonic() - t0 < 2.0
    assert not stalled.done()
    seen = await stalled
    assert seen.ns == [1] and isinstance(seen.error, httpx.ReadTimeout)


async def test_stall_swallows_heartbeats_too(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after_event": 2}, "do": "stall"})
    seen = await via_aiohttp(proxy.base_url + "/sse?n=10&gap=0.1&hb=0.02", sock_read=STALL_READ_S)
    assert seen.ns == [1, 2]
    assert b": ping" in seen.body  # the ones between events 1 and 2
    assert isinstance(seen.error, aiohttp.SocketTimeoutError)


async def test_stall_for_resumes_with_whole_events(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after_event": 2}, "do": {"stall": {"for": "100ms"}}})
    seen = await via_aiohttp(proxy.base_url + "/sse?n=10&gap=0.03")
    assert seen.error is None
    ns = seen.ns  # every event that arrives decodes: none is cut in half
    assert ns[:2] == [1, 2] and ns[-1] == 10 and 3 < len(ns) < 10
    assert ns == sorted(ns)


async def test_a_stall_for_that_outlives_the_upstream_body_ends_cleanly(
    proxy: MitmproxyLink,
) -> None:
    plan(proxy, {"when": {"after_event": 2}, "do": {"stall": {"for": "300ms"}}})
    seen = await via_httpx(proxy.base_url + "/sse?n=5&gap=0.01")
    assert seen.error is None and seen.ns == [1, 2]
    assert seen.t_end >= 0.29
    end = the_end(proxy)
    assert (end.how, end.by) == ("clean", "upstream") and "3 events swallowed" in end.detail


async def test_end_clean_is_a_silent_cut_and_the_connection_is_not_reused(
    proxy: MitmproxyLink,
) -> None:
    """The clients' clean end and the record are conformance's "end_clean"; the header is
    mitmproxy's own."""
    plan(proxy, {**CUT, "do": "end_clean"})
    seen = await via_httpx(proxy.base_url + "/sse?n=10")
    assert seen.error is None and seen.ns == [1, 2, 3, 4]
    assert header(seen, "Connection") == "close"


async def test_after_end_clean_the_next_request_of_a_session_gets_a_whole_response(
    proxy: MitmproxyLink,
) -> None:
    """Measured: without ``Connection: close`` mitmproxy writes its own terminator once upstream
    ends, into what a keep-alive client takes for the next response (aiohttp: 400 Bad status
    line)."""
    plan(proxy, {"when": {"occurrence": 1, "after_event": 2}, "do": "end_clean"})
    async with aiohttp.ClientSession() as session:
        bodies = []
        for _ in range(3):
            async with session.get(proxy.base_url + "/sse?n=4&gap=0.005") as response:
                assert response.status == 200
                bodies.append(await response.read())
    assert bodies == [ev(1) + ev(2), *[b"".join(ev(i) for i in range(1, 5))] * 2]


@pytest.mark.parametrize(
    ("fault", "ending"),
    [
        (None, "terminator"),
        ("end_clean", "terminator"),
        ("fin", "eof"),
        ("rst", "reset"),
        ("stall", "open"),
    ],
)
async def test_wire_endings_on_a_raw_socket(
    fault: str | None, ending: str, proxy: MitmproxyLink
) -> None:
    plan(proxy, *([{**CUT, "do": fault}] if fault else []))
    data, how = await raw_get(proxy.base_url, "/sse?n=10", wait=0.5)
    assert how == ending
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Transfer-Encoding: chunked\r\n" in data
    body = data.split(b"\r\n\r\n", 1)[1]
    assert body.count(b"data: ") == (10 if fault is None else 4)


@pytest.mark.parametrize(("fault", "ending"), [("fin", "eof"), ("rst", "reset"), ("stall", "open")])
async def test_endings_right_after_the_headers_on_a_silent_stream(
    fault: str, ending: str, proxy: MitmproxyLink
) -> None:
    """on_response_headers fires once the headers have gone out, with no body chunk to run on."""
    plan(proxy, {"when": {"on_response_headers": True}, "do": fault})
    data, how = await raw_get(proxy.base_url, "/silent", wait=0.5)
    assert how == ending
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and body == b""


async def test_end_clean_right_after_the_headers_on_a_silent_stream(proxy: MitmproxyLink) -> None:
    plan(proxy, {"do": "end_clean"})
    seen = await via_httpx(proxy.base_url + "/silent")
    assert seen.error is None and seen.status == 200 and bytes(seen.body) == b""
    assert seen.t_end < 2.0
    assert (the_end(proxy).how, the_end(proxy).by) == ("clean", "proxy")


async def test_status_502_answers_without_contacting_upstream(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    """Each client's 502 is conformance's "status"; here the body, its type, the untouched
    upstream and the status in the end record."""
    plan(proxy, {"do": {"status": 502, "body": "<html>bad gateway</html>"}})
    seen = await via_httpx(proxy.base_url + "/sse?n=10")
    assert seen.error is None and seen.status == 502
    assert bytes(seen.body) == b"<html>bad gateway</html>"
    assert header(seen, "Content-Type") == "text/html"
    assert upstream.served == []
    end = the_end(proxy)
    assert (end.how, end.by, end.status) == ("clean", "proxy", 502)


async def test_status_answers_alternate_on_one_keep_alive_session(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy, {"when": {"occurrence": [2, 4]}, "do": {"status": 502}})
    async with httpx.AsyncClient() as client:
        statuses = [(await client.get(proxy.base_url + "/sse?n=1")).status_code for _ in range(4)]
    assert statuses == [200, 502, 200, 502]
    assert len(upstream.served) == 2


@pytest.mark.parametrize(
    ("fault", "client", "error", "attempts"),
    [
        ("rst", "aiohttp", aiohttp.ClientOSError, 2),  # aiohttp retries an idempotent request
        ("rst", "httpx", httpx.ReadError, 1),
        ("fin", "aiohttp", aiohttp.ServerDisconnectedError, 2),
        ("fin", "httpx", httpx.RemoteProtocolError, 1),
        ("stall", "aiohttp", aiohttp.SocketTimeoutError, 1),
        ("stall", "httpx", httpx.ReadTimeout, 1),
    ],
)
async def test_endings_before_any_response(
    fault: str,
    client: str,
    error: type[BaseException],
    attempts: int,
    proxy: MitmproxyLink,
    upstream: Upstream,
) -> None:
    plan(proxy, {"when": {"on_request": True}, "do": fault})
    seen = await fetch(client, proxy.base_url + "/sse?n=3", sock_read=0.3)
    assert isinstance(seen.error, error) and seen.status is None
    assert await proxy.wait_quiet(2)
    assert proxy.requests_seen() == attempts and upstream.served == []
    ends = {(e.how, e.by) for e in kinds(proxy.events, "end")}
    assert ends == ({("fin", "client")} if fault == "stall" else {(fault, "proxy")})


async def test_split_sends_each_event_in_smaller_chunks(proxy: MitmproxyLink) -> None:
    """That the clients still get every event is conformance's "split", which cannot count the
    pieces through mitmproxy (TCP may join them again); the chunked framing on the wire can."""
    plan(proxy, {"do": {"split": {"pieces": 3, "gap": "5ms"}}})
    data, _ = await raw_get(proxy.base_url, "/sse?n=2&gap=0.03", wait=0.5)
    body = data.split(b"\r\n\r\n", 1)[1]
    # each event went out as three chunks: three chunk-size lines per event
    sizes = [int(line, 16) for line in body.split(b"\r\n")[::2] if line and line != b"0"]
    assert len(sizes) == 6 and sum(sizes) == 2 * len(ev(1)) and max(sizes) < len(ev(1))


@pytest.mark.parametrize("client", CLIENTS)
async def test_delay_holds_back_the_first_byte(
    client: str, proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy, {"do": {"delay": "150ms"}})
    t0 = time.monotonic()
    seen = await fetch(client, proxy.base_url + "/sse?n=3")
    assert seen.error is None and seen.ns == [1, 2, 3]
    assert seen.t_headers is not None and seen.t_headers >= 0.149
    assert upstream.served[0].t - t0 >= 0.149  # on_request: upstream is contacted late


async def test_delay_on_response_headers_contacts_upstream_at_once(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    # 600 ms, not 150: a delay applied on the request could not contact upstream before
    # 0.6 s, so "at once" can be < 0.45 s, room for a loaded machine's scheduling stalls.
    plan(proxy, {"when": {"on_response_headers": True}, "do": {"delay": "600ms"}})
    t0 = time.monotonic()
    seen = await via_aiohttp(proxy.base_url + "/sse?n=3&gap=0.01")
    assert seen.error is None and seen.ns == [1, 2, 3]
    assert seen.t_headers is not None and seen.t_headers >= 0.599
    assert upstream.served[0].t - t0 < 0.45
    records = kinds(proxy.events, "response_headers", "first_byte")
    assert records[1].t - records[0].t >= 0.599


async def test_corrupt_drop_blank_line_merges_two_events(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after_event": 3}, "do": {"corrupt": "drop_blank_line"}})
    seen = await via_aiohttp(proxy.base_url + "/sse?n=10")
    assert seen.error is None
    data = [e.data for e in seen.events]
    assert len(data) == 9 and data[3] == '{"n": 4}\n{"n": 5}'


async def test_corrupt_truncate_json_garbles_one_event(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after_event": 3}, "do": {"corrupt": "truncate_json"}})
    seen = await via_httpx(proxy.base_url + "/sse?n=10")
    assert seen.error is None
    data = [e.data for e in seen.events]
    assert len(data) == 10 and data[3] == '{"n"'


async def test_corrupt_cr_only_keeps_events_for_a_spec_decoder(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after_event": 2}, "do": {"corrupt": "cr_only"}})
    seen = await via_aiohttp(proxy.base_url + "/sse?n=10")
    assert seen.error is None and seen.ns == list(range(1, 11))
    head = ev(1) + ev(2)
    assert bytes(seen.body).startswith(head) and b"\n" not in seen.body[len(head) :]


async def test_corrupt_bom_mid_stream_loses_the_next_event(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after_event": 2}, "do": {"corrupt": "bom"}})
    seen = await via_aiohttp(proxy.base_url + "/sse?n=10")
    assert seen.error is None and seen.ns == [1, 2, *range(4, 11)]
    plan(proxy, {"do": {"corrupt": "bom"}})
    start = await via_aiohttp(proxy.base_url + "/sse?n=10")
    assert bytes(start.body).startswith("\ufeff".encode())
    assert start.ns == list(range(1, 11))


# --- triggers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_after_fires_while_upstream_sends_nothing(client: str, proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after": "100ms"}, "do": "fin"})
    seen = await fetch(client, proxy.base_url + "/silent")
    assert seen.status == 200 and seen.events == []
    assert seen.error is not None
    assert 0.09 <= seen.t_end < 1.5


async def test_after_end_clean_writes_the_terminator_on_a_silent_stream(
    proxy: MitmproxyLink,
) -> None:
    plan(proxy, {"when": {"after": "100ms"}, "do": "end_clean"})
    data, how = await raw_get(proxy.base_url, "/silent", wait=2.0)
    assert how == "terminator" and data.endswith(b"\r\n\r\n0\r\n\r\n")


async def test_timers_follow_the_time_scale(engine: MitmproxyEngine, upstream: Upstream) -> None:
    link = engine.link("scaled", upstream.url, time_scale=0.1)
    await link.start()
    try:
        plan(link, {"when": {"after": "1s"}, "do": "end_clean"})
        seen = await via_aiohttp(link.base_url + "/silent")
        assert seen.error is None and 0.09 <= seen.t_end < 0.9
    finally:
        await link.close()


async def test_idle_cuts_a_quiet_stream_only(proxy: MitmproxyLink) -> None:
    # A 1 s idle cut against 30 ms gaps (not 150 ms: one scheduling stall on a loaded machine
    # can outlast that, and the cut would fire between events), and a 5 s pause it must cut.
    plan(proxy, {"when": {"idle": "1s"}, "do": "end_clean"})
    seen = await via_aiohttp(proxy.base_url + "/sse?n=6&gap=0.03&pause_after=3&pause=5")
    assert seen.error is None and seen.ns == [1, 2, 3]  # 30 ms gaps never tripped it
    assert 1.0 <= seen.t_end < 4.5
    fault = kinds(proxy.events, "fault")[0]
    last = kinds(proxy.events, "event")[-1]
    assert fault.t - last.t >= 0.999


async def test_after_bytes_cuts_a_plain_body_at_the_byte(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy, {"when": {"after_bytes": 1000}, "do": "fin"})
    seen = await via_aiohttp(proxy.base_url + "/json")
    assert isinstance(seen.error, aiohttp.ClientPayloadError)
    assert bytes(seen.body) == bytes(upstream.served[0].sent[:1000])


async def test_after_bytes_mid_event(proxy: MitmproxyLink, upstream: Upstream) -> None:
    plan(proxy, {"when": {"after_bytes": 40}, "do": "end_clean"})
    seen = await via_httpx(proxy.base_url + "/sse?n=10")
    assert seen.error is None
    assert bytes(seen.body) == bytes(upstream.served[0].sent[:40])
    assert seen.ns == [1, 2]


async def test_occurrence_applies_the_fault_to_the_chosen_request(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"occurrence": 2, "after_event": 2}, "do": "fin"})
    seen = [await via_httpx(proxy.base_url + "/sse?n=5&gap=0.005") for _ in range(3)]
    assert [s.ns for s in seen] == [[1, 2, 3, 4, 5], [1, 2], [1, 2, 3, 4, 5]]
    assert [type(s.error) for s in seen] == [type(None), httpx.RemoteProtocolError, type(None)]
    assert [e.request for e in kinds(proxy.events, "fault")] == [1]


async def test_rpc_method_and_path_matching(proxy: MitmproxyLink, upstream: Upstream) -> None:
    plan(
        proxy,
        {"when": {"rpc": "message/stream", "after_event": 2}, "do": "rst"},
        {"when": {"method": "get", "path": "/s*"}, "do": {"status": 503}},
    )
    stream = b'{"jsonrpc": "2.0", "id": 7, "method": "message/stream", "params": {}}'
    other = b'{"jsonrpc": "2.0", "id": 8, "method": "tasks/get", "params": {"id": "t"}}'
    hit = await via_aiohttp(proxy.base_url + "/rpc", method="POST", body=stream)
    miss = await via_aiohttp(proxy.base_url + "/rpc", method="POST", body=other)
    get = await via_httpx(proxy.base_url + "/sse?n=1")
    assert isinstance(hit.error, aiohttp.ClientPayloadError)
    assert [json.loads(e.data)["result"]["n"] for e in hit.events] == [1, 2]
    assert miss.error is None and len(miss.events) == 5
    assert get.status == 503
    assert [s.body for s in upstream.served] == [stream, other]  # forwarded unchanged
    assert proxy.requests_seen(rpc="message/stream") == 1
    assert proxy.requests_seen(method="POST", path="/rpc") == 2


# --- records and housekeeping ------------------------------------------------------------------


async def test_link_events_tell_the_story_of_a_reset(proxy: MitmproxyLink) -> None:
    plan(proxy, {**CUT, "do": "rst"})
    await via_aiohttp(proxy.base_url + "/sse?n=10")
    assert await proxy.wait_quiet(2)
    records = proxy.events
    assert [e.kind for e in records] == [
        "connect",
        "request",
        "response_headers",
        "first_byte",
        *["event"] * 4,
        "fault",
        "end",
    ]
    assert [e.t for e in records] == sorted(e.t for e in records)
    assert all(e.link == "test" for e in records)
    assert len({e.connection for e in records}) == 1
    assert records[0].request is None and {e.request for e in records[1:]} == {0}
    request = records[1]
    assert (request.method, request.path, request.rpc) == ("GET", "/sse", None)
    assert records[2].status == 200 and records[3].status == 200
    assert [e.event_index for e in kinds(records, "event")] == [1, 2, 3, 4]
    assert [e.detail for e in kinds(records, "event")] == ["message"] * 4
    fault, end = records[-2:]
    assert fault.fault is not None and (fault.fault.index, fault.fault.action) == (0, "rst")
    assert fault.detail == "after_event: 4 -> rst"
    assert (end.how, end.by) == ("rst", "proxy") and end.fault == fault.fault
    assert end.detail == "after_event: 4 -> rst; 4 events forwarded"


async def test_connections_are_numbered_across_plans(proxy: MitmproxyLink) -> None:
    plan(proxy)
    async with httpx.AsyncClient() as client:
        for _ in range(2):
            assert (await client.get(proxy.base_url + "/sse?n=2&gap=0.001")).status_code == 200
        assert proxy.open_connections == 1  # one keep-alive connection, two requests
    assert await proxy.wait_quiet(1)
    assert proxy.requests_seen() == 2 and proxy.requests_seen(path="/other") == 0
    assert [e.request for e in kinds(proxy.events, "request")] == [0, 1]
    assert {e.connection for e in proxy.events} == {0}
    plan(proxy, {"do": "rst"})
    assert proxy.events == [] and proxy.requests_seen() == 0
    assert proxy.faults[0].action == "rst"
    await via_httpx(proxy.base_url + "/sse?n=1")
    assert {e.connection for e in proxy.events} == {1}
    assert [e.request for e in kinds(proxy.events, "request")] == [0]


async def test_a_fault_that_never_fired_is_named_in_the_end_record(proxy: MitmproxyLink) -> None:
    plan(proxy, {"when": {"after_event": 50}, "do": "rst"})
    seen = await via_aiohttp(proxy.base_url + "/sse?n=3")
    assert seen.error is None and seen.ns == [1, 2, 3]
    end = the_end(proxy)
    assert (end.how, end.by) == ("clean", "upstream")
    assert "faults not fired: 0" in end.detail and kinds(proxy.events, "fault") == []


async def test_a_client_that_hangs_up_closes_the_upstream_request(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy)
    seen = await via_aiohttp(proxy.base_url + "/sse?n=200&gap=0.05", stop_after=2)
    left = time.monotonic()
    assert seen.error is None and seen.ns == [1, 2]
    assert await proxy.wait_quiet(2)
    end = the_end(proxy)
    assert end.by == "client" and end.how in ("fin", "rst")
    for _ in range(200):
        if upstream.served[0].gone_at is not None:
            break
        await asyncio.sleep(0.01)
    gone_at = upstream.served[0].gone_at
    assert gone_at is not None and gone_at - left < 1.0
    assert not upstream.served[0].done


async def test_a_client_that_resets_during_a_stall_is_recorded_as_a_reset(
    proxy: MitmproxyLink,
) -> None:
    plan(proxy, {"when": {"after_event": 1}, "do": "stall"})
    host, port = proxy.base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    try:
        sock.sendall(f"GET /sse?n=3 HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        await recorded(proxy, "fault")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        sock.close()
    await recorded(proxy, "end")
    assert (the_end(proxy).how, the_end(proxy).by) == ("rst", "client")


async def test_a_client_that_leaves_during_an_on_request_stall(
    proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy, {"when": {"on_request": True}, "do": "stall"})
    seen = await via_httpx(proxy.base_url + "/sse?n=3", read=0.2)
    assert isinstance(seen.error, httpx.ReadTimeout)
    assert await proxy.wait_quiet(2)
    assert (the_end(proxy).how, the_end(proxy).by) == ("fin", "client")
    assert upstream.served == []


@pytest.mark.parametrize("client", CLIENTS)
async def test_an_upstream_failure_becomes_a_fin(
    client: str, proxy: MitmproxyLink, upstream: Upstream
) -> None:
    plan(proxy)
    seen = await fetch(client, proxy.base_url + "/broken")
    assert seen.ns == [1, 2, 3]
    if client == "aiohttp":
        assert isinstance(seen.error, aiohttp.ClientPayloadError)
    else:
        assert isinstance(seen.error, httpx.RemoteProtocolError)
    assert await proxy.wait_quiet(2)
    end = the_end(proxy)
    assert (end.how, end.by) == ("upstream_error", "upstream")


async def test_an_unreachable_upstream_gives_no_response(engine: MitmproxyEngine) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    link = engine.link("dead", f"http://127.0.0.1:{port}")
    await link.start()
    try:
        seen = await via_httpx(link.base_url + "/sse")
        assert isinstance(seen.error, httpx.RemoteProtocolError)  # not mitmproxy's 502 page
        assert await link.wait_quiet(2)
        end = the_end(link)
        assert (end.how, end.by) == ("upstream_error", "upstream")
    finally:
        await link.close()


async def test_closing_the_link_ends_a_stalled_stream(
    engine: MitmproxyEngine, upstream: Upstream
) -> None:
    link = engine.link("closing", upstream.url)
    await link.start()
    plan(link, {"when": {"after_event": 1}, "do": "stall"})
    fetching = asyncio.create_task(via_aiohttp(link.base_url + "/sse?n=5", sock_read=5))
    await recorded(link, "fault")
    assert link.in_flight == 1 and link.open_connections == 1
    await link.close()
    seen = await fetching
    assert seen.ns == [1] and isinstance(seen.error, aiohttp.ClientPayloadError)
    assert (the_end(link).how, the_end(link).by) == ("fin", "proxy")
    assert link.open_connections == 0


# --- what the engine cannot do -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "item", "why"),
    [
        ({"do": "refuse"}, "do.refuse", "always accepts a connection"),
        ({"do": {"drip": "100ms"}}, "do.drip", "synchronous"),
        ({"when": {"after_event": 2}, "do": {"drip": "1s"}}, "do.drip", "synchronous"),
    ],
)
async def test_what_mitmproxy_cannot_do_is_rejected_with_its_reason(
    fault: dict[str, Any], item: str, why: str, engine: MitmproxyEngine, upstream: Upstream
) -> None:
    faults = parse_plan([fault])
    (problem,) = engine_support("mitmproxy").rejections(faults, "links.a2a")
    assert problem.startswith(f"links.a2a[0]: engine mitmproxy cannot do {item}: ")
    assert why in problem
    link = engine.link("a2a", upstream.url)
    with pytest.raises(ValueError, match=why):
        link.load(faults)


def test_every_other_item_is_claimed() -> None:
    items = engine_support("mitmproxy").items
    assert sorted(i for i, s in items.items() if s.fit == "rejected") == ["do.drip", "do.refuse"]
    assert sorted(i for i, s in items.items() if s.fit == "approximate") == [
        "do.end_clean",
        "do.split",
    ]


# --- the one use of mitmproxy's internals ------------------------------------------------------


async def test_client_streams_finds_the_socket_of_a_live_client(
    engine: MitmproxyEngine, upstream: Upstream
) -> None:
    from mitmproxy.connection import Client

    from streamproof.faults.engines.mitmproxy_wire import client_streams

    class Peek:
        name = "peek"

        def __init__(self) -> None:
            self.clients: list[Client] = []

        def client_connected(self, client: Client) -> None:
            self.clients.append(client)

    link = engine.link("peek", upstream.url)
    await link.start()
    master = engine._running().master
    peek = Peek()
    master.addons.add(peek)
    try:
        host, port = link.base_url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        for _ in range(200):
            if peek.clients:
                break
            await asyncio.sleep(0.01)
        (client,) = peek.clients
        streams = client_streams(master, client)
        assert streams is not None
        assert streams[1].get_extra_info("peername") == writer.get_extra_info("sockname")
        writer.close()
        await writer.wait_closed()
        for _ in range(200):
            if client_streams(master, client) is None:
                break
            await asyncio.sleep(0.01)
        assert client_streams(master, client) is None
        del reader
    finally:
        master.addons.remove(peek)
        await link.close()


@pytest.mark.parametrize(("how", "seen"), [("fin", "eof"), ("rst", "reset")])
async def test_end_connection_sends_what_it_says_after_the_written_bytes(
    how: str, seen: str
) -> None:
    require_module("mitmproxy")
    from streamproof.faults.engines.mitmproxy_wire import end_connection

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"x" * 20_000)
        await end_connection(writer, "fin" if how == "fin" else "rst")

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        got = 0
        ending = "eof"
        try:
            while chunk := await asyncio.wait_for(reader.read(65536), 5):
                got += len(chunk)
        except ConnectionResetError:
            ending = "reset"
        writer.close()
        assert ending == seen
        # every byte written before the end arrived (a reset drops what the kernel has not
        # sent yet: 20 kB fit in loopback's buffers, 200 kB did not)
        assert got == 20_000
    finally:
        server.close()
        await server.wait_closed()


async def test_a_port_already_taken_is_a_clear_error_and_the_engine_goes_on(
    engine: MitmproxyEngine, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        link = engine.link("busy", upstream.url)
        with pytest.raises(OSError, match=f"127.0.0.1:{port}"):
            await link.start(port=port)
    caplog.clear()  # mitmproxy logs the failure itself, as an error
    url = await link.start()
    try:
        seen = await via_httpx(url + "/sse?n=2")
        assert seen.ns == [1, 2]
    finally:
        await link.close()
