"""streamproof's fakes and fault proxy for a team's own Python tests, without YAML.

The pytest plugin ships these as fixtures (:mod:`harness.pytest_fixtures`, the way
pytest-httpserver ships its server): ``fake_model``, ``fake_a2a``, ``fault_link``,
``gateway_env`` and ``a2a_env``. This module holds what those fixtures hand out; it can also be
used without pytest (``with Fakes() as fakes: ...``).

Everything runs on one :class:`~harness.loop.BackgroundLoop`, an asyncio loop on a daemon
thread, so a test may be a plain function or a coroutine run by any async plugin: the methods
here are synchronous and return in bounded time (:data:`OP_S`), and each wait has an ``_async``
twin for a test whose own client runs on the test's event loop (a blocking wait there would
stop that client too). Servers bind 127.0.0.1 only, start once per :class:`Fakes` (per pytest
session) on first use, within :data:`START_S`, and are closed by :meth:`Fakes.close`.

Reset (what each fixture does before every test): the fake model forgets its script and calls
(an unscripted call answers HTTP 500), the fake A2A server unloads its script (the card answers
503, calls -32603) and forgets its ledger, every fault link drops its plan and records.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from harness.durations import TimeScale
from harness.fakes.a2a import A2ALedger, A2AScript, FakeA2AServer, RequestRecord, TaskRecord
from harness.fakes.model import FakeModel
from harness.fakes.records import ModelCall, ToolCall
from harness.fakes.tools import FakeTools
from harness.faults.engines.inline import InlineProxy
from harness.faults.plan import Fault, PlanError, parse_plan
from harness.faults.records import LinkEvent
from harness.faults.shorthand import parse_fault
from harness.loop import BackgroundLoop
from harness.protocol import a2a
from harness.protocol.gemini import (
    CallChunk,
    ErrorChunk,
    FunctionCall,
    GoogleError,
    ModelTurn,
    TextChunk,
)

__all__ = [
    "OP_S",
    "START_S",
    "TOOL_MARKER",
    "A2AEnv",
    "A2ALedger",
    "A2AScript",
    "CallChunk",
    "ErrorChunk",
    "FakeA2A",
    "FakeModelServer",
    "Fakes",
    "FaultLink",
    "FaultLinks",
    "FunctionCall",
    "GatewayEnv",
    "GoogleError",
    "LinkEvent",
    "ModelCall",
    "ModelTurn",
    "ScriptError",
    "TextChunk",
    "function_call",
    "stream_error",
    "text",
]

START_S: Final = 10.0
"""Seconds a fake or a link may take to start listening."""
OP_S: Final = 10.0
"""Seconds any other operation on the loop (scripting, reading records, closing) may take."""
HOST: Final = "127.0.0.1"
TOOL_MARKER: Final = "SP-SECRET-fixture"
"""What a tool payload's ``{{marker}}`` becomes in :class:`GatewayEnv`."""

T = TypeVar("T")


class ScriptError(ValueError):
    """A script, turn or fault given to a fixture is invalid; the message says which call."""


def _validated[M: BaseModel](model: type[M], data: Any, where: str) -> M:
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ScriptError(f"{where}: {problems}") from None


# --- chunks of a model turn ---------------------------------------------------------------------


def text(value: str, *, delay: float | str | None = None) -> TextChunk:
    """A text chunk; ``delay`` (seconds, or ``"50ms"``) is waited before it is written."""
    return _validated(TextChunk, {"text": value, "delay": delay}, "text()")


def function_call(
    name: str, args: Mapping[str, Any] | None = None, *, delay: float | str | None = None
) -> CallChunk:
    """A chunk carrying a ``functionCall`` part."""
    data = {"function_call": {"name": name, "args": dict(args or {})}, "delay": delay}
    return _validated(CallChunk, data, "function_call()")


def stream_error(
    code: int = 503,
    status: str = "UNAVAILABLE",
    message: str = "The model is overloaded.",
    *,
    delay: float | str | None = None,
) -> ErrorChunk:
    """A ``data: {"error": ...}`` line in the middle of the stream (how Gemini fails mid-way)."""
    data = {"error": {"code": code, "status": status, "message": message}, "delay": delay}
    return _validated(ErrorChunk, data, "stream_error()")


Chunk = str | TextChunk | CallChunk | ErrorChunk
FinishReason = Literal["STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER"]


# --- the hub: one loop, the fakes, the links ----------------------------------------------------


class Fakes:
    """The loop and every server the fixtures use; each server starts on first use."""

    def __init__(self) -> None:
        self.loop = BackgroundLoop("streamproof-fixtures")
        self._model: FakeModel | None = None
        self._tools: FakeTools | None = None
        self._a2a: FakeA2AServer | None = None
        self._links: dict[str, InlineProxy] = {}
        self._closed = False

    def run(self, make: Callable[[], Coroutine[Any, Any, T]], timeout: float = OP_S) -> T:
        if self._closed:
            raise RuntimeError("the streamproof fakes are closed (the pytest session ended)")
        return self.loop.run(make(), timeout=timeout)

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the loop's thread, where the servers change their records."""

        async def _do() -> T:
            return fn()

        return self.run(_do)

    def wait_async(self, make: Callable[[], Coroutine[Any, Any, T]]) -> Awaitable[T]:
        """Run ``make()`` on the fakes' loop, awaitable from another event loop."""
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(make(), self.loop.loop))

    def _start(self, what: str, start: Callable[[str, int], Awaitable[str]]) -> None:
        async def _go() -> str:
            return await start(HOST, 0)

        try:
            self.run(_go, timeout=START_S)
        except TimeoutError:
            raise RuntimeError(f"{what} did not start within {START_S:g}s") from None

    def model(self) -> FakeModel:
        if self._model is None:
            model = FakeModel()
            self._start("the fake model", model.start)
            self._model = model
        return self._model

    def tools(self) -> FakeTools:
        if self._tools is None:
            tools = FakeTools()
            self._start("the fake tool service", tools.start)
            self._tools = tools
        return self._tools

    def a2a(self) -> FakeA2AServer:
        if self._a2a is None:
            server = FakeA2AServer()
            self._start("the fake A2A server", server.start)
            self._a2a = server
        return self._a2a

    def link(self, upstream: str) -> InlineProxy:
        """The session's fault proxy in front of ``upstream`` (one per upstream URL)."""
        key = upstream.rstrip("/")
        proxy = self._links.get(key)
        if proxy is None:
            try:
                proxy = InlineProxy("fault_link", key)
            except ValueError as exc:
                raise ScriptError(f"fault_link({upstream!r}): {exc}") from None
            self._start(f"the fault link to {key}", proxy.start)
            self._links[key] = proxy
        return proxy

    def reset_model(self) -> None:
        model, tools = self.model(), self._tools
        self.call(lambda: model.load(()))
        if tools is not None:
            self.call(lambda: tools.load({}, TOOL_MARKER))

    def reset_a2a(self) -> None:
        server = self.a2a()
        self.call(lambda: server.load(None))

    def reset_links(self) -> None:
        proxies = list(self._links.values())

        def _drop() -> None:
            for proxy in proxies:
                proxy.load(())

        self.call(_drop)

    def close(self) -> None:
        """Close every link, then every fake, then the loop; each within :data:`OP_S`."""
        if self._closed:
            return
        closers: list[Callable[[], Coroutine[Any, Any, None]]] = [
            p.close for p in self._links.values()
        ]
        closers += [f.close for f in (self._model, self._tools, self._a2a) if f is not None]
        try:
            for close in closers:
                try:
                    self.loop.run(close(), timeout=OP_S)
                except Exception:  # a stuck close must not keep the others open
                    pass
        finally:
            self._closed = True
            self.loop.close()

    def __enter__(self) -> Fakes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- fake_model ---------------------------------------------------------------------------------


class FakeModelServer:
    """The fake Gemini endpoint (``fake_model``): script turns, read the calls it received.

    Point google-genai (ADK) at :attr:`base_url` (``GOOGLE_GEMINI_BASE_URL``); it serves
    ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` and ``:generateContent``.
    Each call consumes the next turn; a call past the script answers HTTP 500.
    """

    __test__ = False

    def __init__(self, fakes: Fakes) -> None:
        self._fakes = fakes
        self._fake = fakes.model()

    @property
    def base_url(self) -> str:
        return self._fake.base_url

    def reset(self) -> None:
        """Forget the script and the calls."""
        self._fakes.call(lambda: self._fake.load(()))

    def script(self, *turns: ModelTurn | Mapping[str, Any]) -> None:
        """Replace the script with ``turns`` (models or their YAML-shaped dicts), forgetting
        the calls."""
        checked = [
            _validated(ModelTurn, t, f"fake_model.script(turn {i})") for i, t in enumerate(turns)
        ]
        self._fakes.call(lambda: self._fake.load(checked))

    def add(self, turn: ModelTurn | Mapping[str, Any]) -> ModelTurn:
        """Append one turn to the script; the calls so far are kept."""
        checked = _validated(ModelTurn, turn, "fake_model.add()")
        self._fakes.call(lambda: self._fake.extend([checked]))
        return checked

    def reply(
        self,
        *chunks: Chunk,
        finish_reason: FinishReason | None = "STOP",
        chunk_delay: float | str = 0.0,
        times: int | Literal["forever"] = 1,
    ) -> ModelTurn:
        """Append a streamed turn: ``chunks`` are texts (a ``str`` or :func:`text`),
        :func:`function_call` and :func:`stream_error` chunks, in order; ``finish_reason``
        goes on the last chunk (``None``: the stream ends without one); ``chunk_delay`` is
        waited before every chunk without its own ``delay``."""
        data = {
            "chunks": [{"text": c} if isinstance(c, str) else c for c in chunks],
            "finish_reason": finish_reason,
            "chunk_delay": chunk_delay,
            "times": times,
        }
        return self.add(_validated(ModelTurn, data, "fake_model.reply()"))

    def fail(
        self,
        code: int = 503,
        status: str = "UNAVAILABLE",
        message: str = "The model is overloaded.",
        *,
        times: int | Literal["forever"] = 1,
    ) -> ModelTurn:
        """Append a turn answered by an HTTP error status with a Google error body."""
        data = {"http_error": {"code": code, "status": status, "message": message}, "times": times}
        return self.add(_validated(ModelTurn, data, "fake_model.fail()"))

    @property
    def calls(self) -> list[ModelCall]:
        """Every call since the last reset or :meth:`script`, in order (streams in progress
        included): path, model, the request body, what was sent, whether the caller left
        early."""
        return self._fakes.call(lambda: self._fake.calls)

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait until no answer is being written; ``TimeoutError`` if ``timeout`` passes."""
        if not self._fakes.run(lambda: self._fake.wait_idle(timeout), timeout + OP_S):
            raise TimeoutError(f"fake_model: an answer was still being written after {timeout:g}s")

    async def wait_idle_async(self, timeout: float = 5.0) -> None:
        """:meth:`wait_idle` for a coroutine test (it does not block the test's loop)."""
        if not await self._fakes.wait_async(lambda: self._fake.wait_idle(timeout)):
            raise TimeoutError(f"fake_model: an answer was still being written after {timeout:g}s")


# --- fake_a2a -----------------------------------------------------------------------------------


class FakeA2A:
    """The fake A2A agent (``fake_a2a``): play a task timeline or a reply, read the ledger.

    Clients discover it at :attr:`card_url` and call JSON-RPC at :attr:`rpc_url`. Until a script
    is played the card answers 503 and every call -32603 "no scenario is loaded".
    """

    __test__ = False

    def __init__(self, fakes: Fakes) -> None:
        self._fakes = fakes
        self._fake = fakes.a2a()
        self.advertised_url: str | None = None
        """The JSON-RPC URL the card names from the next play on (``None``: the address the
        client used to fetch the card). :class:`A2AEnv` sets it to its link."""

    @property
    def base_url(self) -> str:
        return self._fake.base_url

    @property
    def card_url(self) -> str:
        return self._fake.card_url

    @property
    def rpc_url(self) -> str:
        return self.base_url + "/"

    def reset(self) -> None:
        """Unload the script: tasks stop, open streams are cut, the ledger empties."""
        self._fakes.call(lambda: self._fake.load(None))

    def play(
        self,
        task: Sequence[Mapping[str, Any]] | None = None,
        *,
        reply: str | Mapping[str, Any] | None = None,
        wire: Literal["0.3", "1.0", "both"] = "0.3",
        server: Mapping[str, Any] | None = None,
        time_scale: float = 1.0,
    ) -> A2AScript:
        """Play a task timeline (steps as a scenario writes them: ``{"at": "2s", "status":
        "working"}``...) or a direct ``reply``, on ``wire``; ``server`` sets the other
        behaviours of :class:`~harness.fakes.a2a.ServerBehaviour`. Replaces any earlier script
        and forgets the ledger."""
        data: dict[str, Any] = {"server": {"wire": wire, **dict(server or {})}}
        if task is not None:
            data["task"] = list(task)
        if reply is not None:
            data["reply"] = reply
        script = _validated(A2AScript, data, "fake_a2a.play()")
        self.load(script, time_scale=time_scale)
        return script

    def load(self, script: A2AScript | Mapping[str, Any], *, time_scale: float = 1.0) -> None:
        """Play a whole script (an :class:`A2AScript` or a scenario's ``a2a:`` mapping)."""
        checked = _validated(A2AScript, script, "fake_a2a.load()")
        if not time_scale > 0:
            raise ScriptError(f"fake_a2a: time_scale must be positive, not {time_scale!r}")
        public = self.advertised_url
        self._fakes.call(lambda: self._fake.load(checked, time_scale=time_scale, public_url=public))

    @property
    def ledger(self) -> A2ALedger:
        """Everything the server recorded since the last play or reset."""
        return self._fakes.call(lambda: self._fake.ledger)

    @property
    def requests(self) -> tuple[RequestRecord, ...]:
        return self.ledger.requests

    @property
    def tasks(self) -> tuple[TaskRecord, ...]:
        """The tasks created, in order."""
        return self.ledger.tasks

    def task(self, task_id: str) -> a2a.Task | None:
        """The task as ``tasks/get`` would return it now."""
        return self._fakes.call(lambda: self._fake.task(task_id))

    def wait_quiet(self, timeout: float = 5.0) -> None:
        """Wait until no request is in progress; ``TimeoutError`` if ``timeout`` passes."""
        if not self._fakes.run(lambda: self._fake.wait_quiet(timeout), timeout + OP_S):
            raise TimeoutError(f"fake_a2a: a request was still open after {timeout:g}s")

    async def wait_quiet_async(self, timeout: float = 5.0) -> None:
        if not await self._fakes.wait_async(lambda: self._fake.wait_quiet(timeout)):
            raise TimeoutError(f"fake_a2a: a request was still open after {timeout:g}s")


# --- fault_link ---------------------------------------------------------------------------------


def _fault(value: str | Fault | Mapping[str, Any], where: str) -> Fault:
    if isinstance(value, Fault):
        return value
    try:
        if isinstance(value, str):
            return parse_fault(value)
        return parse_plan([dict(value)])[0]
    except (ValueError, PlanError) as exc:  # ShorthandError is a ValueError
        raise ScriptError(f"{where}: {exc}") from None


class FaultLink:
    """A fault proxy in front of one upstream: send requests to :attr:`url` instead."""

    __test__ = False

    def __init__(self, fakes: Fakes, proxy: InlineProxy) -> None:
        self._fakes = fakes
        self._proxy = proxy

    @property
    def url(self) -> str:
        """The proxy's base URL; a request's path and query are appended to the upstream's."""
        return self._proxy.base_url

    @property
    def upstream(self) -> str:
        return self._proxy.upstream

    def plan(self, *faults: str | Fault | Mapping[str, Any], time_scale: float = 1.0) -> None:
        """Replace the plan with ``faults`` (``--fault`` shorthand such as ``"after_event 3:
        rst"``, a plan item's dict, or a :class:`~harness.faults.plan.Fault`) and forget the
        records. Durations in the plan are multiplied by ``time_scale``."""
        checked = [_fault(f, f"fault_link plan item {i}") for i, f in enumerate(faults)]
        if not time_scale > 0:
            raise ScriptError(f"fault_link: time_scale must be positive, not {time_scale!r}")

        def _load() -> None:
            self._proxy.time_scale = TimeScale(time_scale)
            self._proxy.load(checked)
            self._proxy.set_epoch(time.monotonic())

        self._fakes.call(_load)

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self._fakes.call(lambda: self._proxy.faults)

    @property
    def events(self) -> list[LinkEvent]:
        """Everything the link recorded since the last plan, in order."""
        return self._fakes.call(lambda: self._proxy.events)

    @property
    def fired(self) -> list[LinkEvent]:
        """The ``fault`` records: which plan item fired (``.fault.index``), when, why."""
        return [e for e in self.events if e.kind == "fault"]

    @property
    def forwarded(self) -> list[LinkEvent]:
        """The SSE events forwarded downstream (``.detail``: the event type)."""
        return [e for e in self.events if e.kind == "event"]

    @property
    def endings(self) -> list[LinkEvent]:
        """How each response ended (``.how``: clean, fin, rst...; ``.by``: who ended it)."""
        return [e for e in self.events if e.kind == "end"]

    def requests_seen(
        self, method: str | None = None, path: str | None = None, rpc: str | None = None
    ) -> int:
        return self._fakes.call(lambda: self._proxy.requests_seen(method, path, rpc))

    def wait_quiet(self, timeout: float = 5.0) -> None:
        """Wait until no request is in progress; ``TimeoutError`` if ``timeout`` passes."""
        if not self._fakes.run(lambda: self._proxy.wait_quiet(timeout), timeout + OP_S):
            raise TimeoutError(f"fault_link: a request was still in progress after {timeout:g}s")

    async def wait_quiet_async(self, timeout: float = 5.0) -> None:
        if not await self._fakes.wait_async(lambda: self._proxy.wait_quiet(timeout)):
            raise TimeoutError(f"fault_link: a request was still in progress after {timeout:g}s")


class FaultLinks:
    """The ``fault_link`` fixture: ``fault_link(upstream, *faults)`` gives the link to
    ``upstream`` with that plan. One proxy per upstream URL per session, reset per test."""

    __test__ = False

    def __init__(self, fakes: Fakes) -> None:
        self._fakes = fakes

    def __call__(
        self, upstream: str, *faults: str | Fault | Mapping[str, Any], time_scale: float = 1.0
    ) -> FaultLink:
        link = FaultLink(self._fakes, self._fakes.link(upstream))
        link.plan(*faults, time_scale=time_scale)
        return link


# --- ready environments -------------------------------------------------------------------------


class GatewayEnv:
    """What a gateway under test needs (``gateway_env``): the fake model behind a fault link,
    and the fake tool service. Give the gateway :attr:`env`."""

    __test__ = False

    def __init__(self, fakes: Fakes, model: FakeModelServer, link: FaultLink) -> None:
        self._fakes = fakes
        self.model = model
        self.link = link
        self._tools = fakes.tools()

    @property
    def model_url(self) -> str:
        """The link's URL: what ``GOOGLE_GEMINI_BASE_URL`` should name."""
        return self.link.url

    @property
    def tools_url(self) -> str:
        return self._tools.base_url

    @property
    def env(self) -> dict[str, str]:
        """Environment variables for a gateway process (the reference gateway reads these)."""
        return {
            "GOOGLE_GEMINI_BASE_URL": self.model_url,
            "GOOGLE_API_KEY": "streamproof-fake-key",
            "STREAMPROOF_TOOL_URL": self.tools_url,
        }

    def tools(self, payloads: Mapping[str, Any]) -> None:
        """Script each tool's JSON answer (``{{marker}}`` becomes :data:`TOOL_MARKER`)."""
        self._fakes.call(lambda: self._tools.load(dict(payloads), TOOL_MARKER))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self._fakes.call(lambda: self._tools.calls)


class A2AEnv:
    """What an A2A client under test needs (``a2a_env``): the fake agent behind a fault link.
    The card names the link's URL (:attr:`FakeA2A.advertised_url`), so a client that follows
    it stays on the link: the proxy forwards requests with the upstream's own ``Host``."""

    __test__ = False

    def __init__(self, agent: FakeA2A, link: FaultLink) -> None:
        self.agent = agent
        self.link = link
        agent.advertised_url = self.rpc_url

    @property
    def card_url(self) -> str:
        return self.link.url + a2a.AGENT_CARD_PATH

    @property
    def rpc_url(self) -> str:
        return self.link.url + "/"
