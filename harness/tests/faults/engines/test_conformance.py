"""Engine conformance: every plan item through every engine that claims it, seen by real clients.

One suite for all engines. Each case is a small plan run against a tiny SSE upstream (loopback)
through a link of the engine, fetched with aiohttp and with httpx; it asserts what the client
sees (the signatures of docs/explanation/wire-facts/engines.md §3: a FIN mid-body is a payload
error, an RST adds a
connection reset, a stall ends in the client's read timeout, a refused connection cannot
connect) and what the link recorded (how the response ended and by whom, and exactly the events
the client got, never one more). A case runs for an engine only when the engine declares every
item of its plan exact or approximate (``catalog``); for an item it rejects, the rejection is
asserted instead. A new engine joins by being importable as ``streamproof.faults.engines.<name>``
and openable with :func:`~streamproof.faults.engines.open_engine`; one this machine cannot run is
skipped, or fails under ``STREAMPROOF_REQUIRE_ALL=1``.

Timing: durations are tens to hundreds of milliseconds with wide bounds, every wait is bounded,
and a case waits for the link to go quiet (an event, not a sleep) before reading its records.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx
import pytest
import pytest_asyncio
from aiohttp import web

from harness.tests.conftest import require_engine
from streamproof.faults.engines import ENGINES, Engine, FaultLink, engine_support
from streamproof.faults.engines.support import PLAN_ITEMS, Support, items_of
from streamproof.faults.plan import parse_plan
from streamproof.faults.records import LinkEvent
from streamproof.protocol import sse

on_module_loop = pytest.mark.asyncio(loop_scope="module")

CLIENTS = ("aiohttp", "httpx")
BUILT = tuple(
    name for name in ENGINES if importlib.util.find_spec(f"streamproof.faults.engines.{name}")
)
"""The engines this streamproof carries out (the others are only declared so far)."""

CASE_BOUND = 20.0
"""No case may take longer than this (seconds), whatever goes wrong."""


# --- the upstream ------------------------------------------------------------------------------


def ev(n: int) -> bytes:
    return sse.encode(json.dumps({"n": n}))


class Upstream:
    """``GET /sse?n=&gap=&pause_after=&pause=``: n events ``{"n": i}``, ``gap`` seconds apart,
    with an extra ``pause`` after event ``pause_after``; ``POST /rpc``: a JSON-RPC call answered
    with 4 events."""

    def __init__(self) -> None:
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/sse", self._sse)
        app.router.add_post("/rpc", self._rpc)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=0.2
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _events(
        self, request: web.Request, items: Iterator[tuple[float, bytes]]
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        try:
            await response.prepare(request)
            for wait, data in items:
                if wait:
                    await asyncio.sleep(wait)
                await response.write(data)
            await response.write_eof()
        except ConnectionError:
            pass
        return response

    async def _sse(self, request: web.Request) -> web.StreamResponse:
        q = request.query
        n, gap = int(q.get("n", "6")), float(q.get("gap", "0.01"))
        pause_after, pause = int(q.get("pause_after", "0")), float(q.get("pause", "0"))

        def items() -> Iterator[tuple[float, bytes]]:
            for i in range(1, n + 1):
                wait = gap if i > 1 else 0.0
                if pause_after and i == pause_after + 1:
                    wait += pause
                yield wait, ev(i)

        return await self._events(request, items())

    async def _rpc(self, request: web.Request) -> web.StreamResponse:
        call = json.loads(await request.read())
        return await self._events(
            request, ((0.01, ev(i)) for i in range(1, 5) if call.get("method"))
        )


# --- the clients -------------------------------------------------------------------------------


@dataclass
class Seen:
    """What one client saw of one request."""

    status: int | None = None
    body: bytearray = field(default_factory=bytearray)
    arrivals: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since the request, bytes) of each read."""
    error: BaseException | None = None
    elapsed: float = 0.0

    @property
    def datas(self) -> list[str]:
        return [e.data for e in sse.decode(bytes(self.body))]

    @property
    def ns(self) -> list[int]:
        return [json.loads(d)["n"] for d in self.datas]

    @property
    def first_byte(self) -> float | None:
        return self.arrivals[0][0] if self.arrivals else None

    def raised(self, kind: type[BaseException]) -> bool:
        exc, seen = self.error, set()
        while exc is not None and id(exc) not in seen:
            if isinstance(exc, kind):
                return True
            seen.add(id(exc))
            exc = exc.__cause__ or exc.__context__
        return False


@dataclass(frozen=True)
class Request:
    path: str = "/sse"
    method: str = "GET"
    body: bytes | None = None


class Client:
    """One client library, one connection pool: sequential requests reuse a connection."""

    def __init__(self, kind: str, read_timeout: float) -> None:
        self.kind = kind
        self._read = read_timeout
        self._aiohttp: aiohttp.ClientSession | None = None
        self._httpx: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Client:
        if self.kind == "aiohttp":
            timeout = aiohttp.ClientTimeout(total=15, sock_connect=5, sock_read=self._read)
            self._aiohttp = aiohttp.ClientSession(timeout=timeout)
        else:
            self._httpx = httpx.AsyncClient(timeout=httpx.Timeout(15.0, read=self._read))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._aiohttp is not None:
            await self._aiohttp.close()
        if self._httpx is not None:
            await self._httpx.aclose()

    async def fetch(self, base: str, request: Request) -> Seen:
        seen = Seen()
        t0 = time.monotonic()

        def got(chunk: bytes) -> None:
            seen.body += chunk
            seen.arrivals.append((time.monotonic() - t0, len(chunk)))

        headers = {"Content-Type": "application/json"} if request.body is not None else None
        try:
            if self._aiohttp is not None:
                async with self._aiohttp.request(
                    request.method, base + request.path, data=request.body, headers=headers
                ) as response:
                    seen.status = response.status
                    async for chunk in response.content.iter_any():
                        got(chunk)
            else:
                assert self._httpx is not None
                async with self._httpx.stream(
                    request.method, base + request.path, content=request.body, headers=headers
                ) as response:
                    seen.status = response.status_code
                    async for chunk in response.aiter_raw():
                        got(chunk)
        except Exception as exc:
            seen.error = exc
        seen.elapsed = time.monotonic() - t0
        return seen


# --- what a client sees (docs/explanation/wire-facts/engines.md §3)
# -------------------------------------------------


def fin_mid_body(client: str, seen: Seen) -> None:
    if client == "aiohttp":
        assert isinstance(seen.error, aiohttp.ClientPayloadError), repr(seen.error)
        assert "TransferEncodingError" in str(seen.error)
    else:
        assert isinstance(seen.error, httpx.RemoteProtocolError), repr(seen.error)
        assert "incomplete chunked read" in str(seen.error)


def rst_mid_body(client: str, seen: Seen) -> None:
    if client == "aiohttp":
        assert isinstance(seen.error, aiohttp.ClientPayloadError), repr(seen.error)
        assert "ConnectionResetError" in str(seen.error)
    else:
        assert isinstance(seen.error, httpx.ReadError), repr(seen.error)
        assert seen.raised(ConnectionResetError)


def fin_before_response(client: str, seen: Seen) -> None:
    assert seen.status is None
    if client == "aiohttp":
        assert isinstance(seen.error, aiohttp.ServerDisconnectedError), repr(seen.error)
    else:
        assert isinstance(seen.error, httpx.RemoteProtocolError), repr(seen.error)
        assert "without sending a response" in str(seen.error)


def rst_before_response(client: str, seen: Seen) -> None:
    assert seen.status is None
    if client == "aiohttp":
        assert isinstance(seen.error, aiohttp.ClientOSError), repr(seen.error)
        assert seen.raised(ConnectionResetError) or "104" in str(seen.error)
    else:
        assert isinstance(seen.error, httpx.ReadError), repr(seen.error)


def read_timeout(client: str, seen: Seen) -> None:
    if client == "aiohttp":
        assert isinstance(seen.error, aiohttp.ServerTimeoutError), repr(seen.error)
    else:
        assert isinstance(seen.error, httpx.ReadTimeout), repr(seen.error)


def clean(client: str, seen: Seen) -> None:
    assert seen.error is None, repr(seen.error)
    assert seen.status == 200


# --- the records -------------------------------------------------------------------------------


@dataclass
class Run:
    """One case's outcome: what each request's client saw, and the link's records."""

    engine: str
    client: str
    seen: list[Seen]
    events: list[LinkEvent]
    requests_seen: int
    support: dict[str, Support]
    """How the engine declares the case's items."""

    @property
    def last(self) -> Seen:
        return self.seen[-1]

    def ends(self) -> list[LinkEvent]:
        return [e for e in self.events if e.kind == "end"]

    def end(self) -> tuple[str | None, str | None]:
        ends = self.ends()
        assert ends, f"no end record: {self.events}"
        return ends[-1].how, ends[-1].by

    def recorded(self, request: int | None = None) -> list[int]:
        """The event_index of each event record of ``request`` (default: the last request)."""
        requests = [e.request for e in self.events if e.request is not None]
        if request is None:
            request = max(requests) if requests else None
        return [
            e.event_index
            for e in self.events
            if e.kind == "event" and e.request == request and e.event_index is not None
        ]


@dataclass(frozen=True)
class Case:
    id: str
    plan: list[dict[str, Any]]
    check: Callable[[Run], None]
    requests: tuple[Request, ...] = (Request("/sse?n=6"),)
    read_timeout: float = 2.0

    @property
    def items(self) -> set[str]:
        return {item for fault in parse_plan(self.plan) for item in items_of(fault)}


# --- the cases: one or more per plan item --------------------------------------------------------

ONE_TWO = len(ev(1)) + len(ev(2))


def _fin_after_event(run: Run) -> None:
    assert run.last.ns == [1, 2, 3] and run.last.status == 200
    fin_mid_body(run.client, run.last)
    assert run.end() == ("fin", "proxy")
    assert run.recorded() == [1, 2, 3]


def _rst_after_event(run: Run) -> None:
    assert run.last.ns == [1, 2, 3] and run.last.status == 200
    rst_mid_body(run.client, run.last)
    assert run.end() == ("rst", "proxy")
    assert run.recorded() == [1, 2, 3]


def _fin_at_headers(run: Run) -> None:
    assert run.last.status == 200 and run.last.ns == []
    fin_mid_body(run.client, run.last)
    assert run.end() == ("fin", "proxy")
    assert run.recorded() == []


def _rst_on_request(run: Run) -> None:
    rst_before_response(run.client, run.last)
    assert {e.how for e in run.ends()} == {"rst"} and {e.by for e in run.ends()} == {"proxy"}
    assert not [e for e in run.events if e.kind in ("response_headers", "event")]


def _fin_on_request(run: Run) -> None:
    fin_before_response(run.client, run.last)
    assert {e.how for e in run.ends()} == {"fin"} and {e.by for e in run.ends()} == {"proxy"}
    assert not [e for e in run.events if e.kind in ("response_headers", "event")]


def _fin_after_bytes(run: Run) -> None:
    assert run.last.ns == [1, 2]
    fin_mid_body(run.client, run.last)
    assert run.end() == ("fin", "proxy")
    assert run.recorded() == [1, 2]


def _rst_after(run: Run) -> None:
    ns = run.last.ns
    # 150 ms into a stream of one event every 50 ms: a few events, never all of them.
    assert 1 <= len(ns) < 20 and ns == list(range(1, len(ns) + 1))
    rst_mid_body(run.client, run.last)
    assert run.end() == ("rst", "proxy")
    assert run.recorded() == ns  # exactly what the client got
    assert run.last.elapsed >= 0.14


def _fin_idle(run: Run) -> None:
    assert run.last.ns == [1, 2]
    fin_mid_body(run.client, run.last)
    assert run.end() == ("fin", "proxy")
    assert run.recorded() == [1, 2]
    assert 0.18 <= run.last.elapsed < 2.5  # the idle cut, long before the 3 s pause ends


def _stall_after_event(run: Run) -> None:
    assert run.last.ns == [1, 2, 3] and run.last.status == 200
    read_timeout(run.client, run.last)
    assert run.end() == ("fin", "client")
    assert run.recorded() == [1, 2, 3]  # what the stall held back is not recorded


def _stall_on_request(run: Run) -> None:
    assert run.last.ns == []
    read_timeout(run.client, run.last)
    assert run.end()[1] == "client"
    assert not [e for e in run.events if e.kind in ("response_headers", "event")]
    assert run.requests_seen >= 1


def _stall_for(run: Run) -> None:
    clean(run.client, run.last)
    ns = run.last.ns
    assert ns[:2] == [1, 2] and ns == sorted(set(ns))
    times = [t for t, _ in run.last.arrivals]
    if len(ns) > 2:  # what came during the stall is dropped, the stream resumes after it
        assert times[-1] - times[0] >= 0.25
    assert run.recorded() == ns
    assert run.end() == ("clean", "upstream")


def _delay(run: Run) -> None:
    clean(run.client, run.last)
    assert run.last.ns == list(range(1, 7))
    assert run.last.first_byte is not None and run.last.first_byte >= 0.28
    assert [e.fault.action for e in run.events if e.fault is not None] == ["delay"]
    assert run.end() == ("clean", "upstream")
    assert run.recorded() == list(range(1, 7))


def _drip(run: Run) -> None:
    clean(run.client, run.last)
    assert run.last.ns == list(range(1, 6))
    # Five events 10 ms apart from upstream; dripped 80 ms apart (inline: before each event;
    # toxiproxy: after each chunk it forwards, and chunks that queued meanwhile go together).
    assert run.last.elapsed >= 0.16
    assert run.recorded() == list(range(1, 6))


def _split(run: Run) -> None:
    clean(run.client, run.last)
    assert run.last.ns == [1, 2, 3]
    # Each event (200 ms apart) reaches the client in several reads, 30 ms apart; mitmproxy
    # writes the pieces back to back (its stream callable cannot wait, as its declaration
    # says), so TCP may join them again: there, only the content and the records are judged.
    if run.engine != "mitmproxy":
        assert len(run.last.arrivals) >= 2 * 3, run.last.arrivals
    assert run.recorded() == [1, 2, 3]


def _refuse(run: Run) -> None:
    exact = run.support["do.refuse"].fit == "exact"
    assert run.last.status is None and run.last.ns == []
    if exact:  # a true ECONNREFUSED: nothing reached the link
        if run.client == "aiohttp":
            assert isinstance(run.last.error, aiohttp.ClientConnectorError), repr(run.last.error)
        else:
            assert isinstance(run.last.error, httpx.ConnectError), repr(run.last.error)
        assert run.requests_seen == 0 and not run.ends()
        assert [e.fault.action for e in run.events if e.fault is not None] == ["refuse"]
    else:  # accepted, then closed without a response
        fin_before_response(run.client, run.last)
        assert {e.how for e in run.ends()} == {"refused"}


def _status(run: Run) -> None:
    assert run.last.error is None and run.last.status == 502 and run.last.ns == []
    assert run.end() == ("clean", "proxy")


def _corrupt(run: Run) -> None:
    clean(run.client, run.last)
    datas = run.last.datas
    assert json.loads(datas[0]) == {"n": 1}
    with pytest.raises(ValueError):
        json.loads(datas[1])  # event 2 cut off mid-JSON
    # Every engine that corrupts records which event it damaged (the client could not read it).
    last = max(e.request for e in run.events if e.request is not None)
    damage = {
        e.event_index: e.damage
        for e in run.events
        if e.kind == "event" and e.request == last and e.event_index is not None
    }
    assert [i for i, d in damage.items() if d is not None] == [2], damage
    assert str(damage[2]).startswith("altered (truncate_json)")


def _end_clean(run: Run) -> None:
    clean(run.client, run.last)
    assert run.last.ns == [1, 2]
    assert run.end() == ("clean", "proxy")


def _match_second_get(run: Run) -> None:
    first, second = run.seen
    clean(run.client, first)
    assert first.ns == list(range(1, 7))
    assert second.ns == [1, 2]
    fin_mid_body(run.client, second)
    assert run.end() == ("fin", "proxy")


def _match_rpc(run: Run) -> None:
    assert run.last.ns == [1]
    fin_mid_body(run.client, run.last)
    assert run.end() == ("fin", "proxy")


def _keep_alive(how: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        short, long = run.seen
        clean(run.client, short)
        assert short.ns == [1, 2] and long.ns == [1, 2, 3]
        (fin_mid_body if how == "fin" else rst_mid_body)(run.client, long)
        assert run.recorded(0) == [1, 2] and run.recorded(1) == [1, 2, 3]
        requests = [e for e in run.events if e.kind == "request"]
        assert len(requests) == 2 and requests[0].connection == requests[1].connection, (
            "the second request should reuse the first one's connection"
        )
        assert [(e.how, e.by) for e in run.ends()] == [("clean", "upstream"), (how, "proxy")]

    return check


SECOND_GET = {"method": "GET", "path": "/sse", "occurrence": 2}
RPC = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "message/stream"}).encode()

CASES = [
    Case("fin after_event", [{"when": {"after_event": 3}, "do": "fin"}], _fin_after_event),
    Case("rst after_event", [{"when": {"after_event": 3}, "do": "rst"}], _rst_after_event),
    Case("fin on_response_headers", [{"do": "fin"}], _fin_at_headers),
    Case("rst on_request", [{"when": {"on_request": True}, "do": "rst"}], _rst_on_request),
    Case("fin on_request", [{"when": {"on_request": True}, "do": "fin"}], _fin_on_request),
    Case("fin after_bytes", [{"when": {"after_bytes": ONE_TWO}, "do": "fin"}], _fin_after_bytes),
    Case(
        "rst after",
        [{"when": {"after": "150ms"}, "do": "rst"}],
        _rst_after,
        (Request("/sse?n=20&gap=0.05"),),
    ),
    Case(
        "fin idle",
        [{"when": {"idle": "200ms"}, "do": "fin"}],
        _fin_idle,
        (Request("/sse?n=6&pause_after=2&pause=3"),),
    ),
    Case(
        "stall after_event",
        [{"when": {"after_event": 3}, "do": "stall"}],
        _stall_after_event,
        read_timeout=1.0,  # the three events first (10 ms apart), on a loaded machine too
    ),
    Case(
        "stall on_request",
        [{"when": {"on_request": True}, "do": "stall"}],
        _stall_on_request,
        read_timeout=0.5,
    ),
    Case(
        "stall for",
        [{"when": {"after_event": 2}, "do": {"stall": {"for": "300ms"}}}],
        _stall_for,
        (Request("/sse?n=8&gap=0.03"),),
    ),
    Case("delay on_request", [{"do": {"delay": "300ms"}}], _delay),
    Case(
        "delay on_response_headers",
        [{"when": {"on_response_headers": True}, "do": {"delay": "300ms"}}],
        _delay,
    ),
    Case("drip", [{"do": {"drip": "80ms"}}], _drip, (Request("/sse?n=5"),)),
    Case(
        "split",
        [{"do": {"split": {"pieces": 3, "gap": "30ms"}}}],
        _split,
        (Request("/sse?n=3&gap=0.2"),),
    ),
    Case("refuse", [{"do": "refuse"}], _refuse),
    Case("status", [{"do": {"status": 502}}], _status),
    Case("corrupt", [{"when": {"after_event": 1}, "do": {"corrupt": "truncate_json"}}], _corrupt),
    Case("end_clean", [{"when": {"after_event": 2}, "do": "end_clean"}], _end_clean),
    Case(
        "match method path occurrence",
        [{"when": {**SECOND_GET, "after_event": 2}, "do": "fin"}],
        _match_second_get,
        (Request("/sse?n=6"), Request("/sse?n=6")),
    ),
    Case(
        "match rpc",
        [{"when": {"rpc": "message/stream", "after_event": 1}, "do": "fin"}],
        _match_rpc,
        (Request("/rpc", "POST", RPC),),
    ),
    *(
        Case(
            f"keep-alive {how}",
            [{"when": {"after_event": 3}, "do": how}],
            _keep_alive(how),
            (Request("/sse?n=2"), Request("/sse?n=6")),
        )
        for how in ("fin", "rst")
    ),
]


def _judged(engine: str, case: Case) -> dict[str, Support]:
    support = engine_support(engine)
    judged: dict[str, Support] = {}
    for fault in parse_plan(case.plan):
        judged.update(support.judge(fault))
    return judged


def _claimed(engine: str, case: Case) -> bool:
    return all(s.fit != "rejected" for s in _judged(engine, case).values())


RUNS = [
    pytest.param(engine, case, client, id=f"{engine}-{case.id}-{client}")
    for engine in BUILT
    for case in CASES
    if _claimed(engine, case)
    for client in CLIENTS
]
REJECTED = [
    pytest.param(engine, case, id=f"{engine}-{case.id}")
    for engine in ENGINES
    for case in CASES
    if not _claimed(engine, case)
]


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def quiet_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Faults an engine was asked for are not errors: no warning may reach the logs."""
    caplog.set_level(logging.WARNING)
    yield
    noisy = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith(("aiohttp", "asyncio", "streamproof"))
    ]
    assert not noisy, noisy


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def upstream() -> AsyncIterator[Upstream]:
    server = Upstream()
    await server.start()
    yield server
    await server.close()


class Engines:
    """The engines of this module, each started on first use and closed at the end."""

    def __init__(self) -> None:
        self._started: dict[str, Engine] = {}

    async def get(self, name: str) -> Engine:
        if name not in self._started:
            engine = require_engine(name)
            await engine.start()
            self._started[name] = engine
        return self._started[name]

    async def close(self) -> None:
        for engine in self._started.values():
            await engine.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engines() -> AsyncIterator[Engines]:
    started = Engines()
    yield started
    await started.close()


# --- the tests ---------------------------------------------------------------------------------


def test_the_cases_cover_every_plan_item() -> None:
    covered = set().union(*(case.items for case in CASES))
    assert covered == set(PLAN_ITEMS), sorted(set(PLAN_ITEMS) - covered)


def test_every_built_engine_is_in_the_suite() -> None:
    assert "inline" in BUILT and "toxiproxy" in BUILT
    for engine in BUILT:
        assert any(param.values[0] == engine for param in RUNS)


@pytest.mark.parametrize(("engine", "case"), REJECTED)
def test_an_item_the_engine_does_not_claim_is_rejected_at_load(engine: str, case: Case) -> None:
    problems = engine_support(engine).rejections(parse_plan(case.plan), "links.browser")
    assert problems
    assert all(p.startswith(f"links.browser[0]: engine {engine} cannot do ") for p in problems)


@on_module_loop
@pytest.mark.parametrize(("engine", "case", "client"), RUNS)
async def test_the_engine_does_what_it_claims(
    engine: str, case: Case, client: str, upstream: Upstream, engines: Engines
) -> None:
    started = await engines.get(engine)
    link: FaultLink = started.link("browser", upstream.url, time_scale=1.0)
    base = await link.start()
    try:
        async with asyncio.timeout(CASE_BOUND):
            link.load(parse_plan(case.plan))
            link.set_epoch(time.monotonic())
            async with Client(client, case.read_timeout) as http:
                seen = [await http.fetch(base, request) for request in case.requests]
            assert await link.wait_quiet(5.0), "the link never went quiet"
            run = Run(engine, client, seen, link.events, link.requests_seen(), {})
            run.support = _judged(engine, case)
            case.check(run)
    finally:
        await link.close()
