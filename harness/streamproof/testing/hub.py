"""The hub of :mod:`streamproof.testing`: one background loop, the servers on it (each started on
first use), their resets, and the errors the fixtures raise for bad input."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from streamproof.fakes.a2a import FakeA2AServer
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.faults.engines.inline import InlineProxy
from streamproof.runtime.loop import BackgroundLoop

__all__ = ["HOST", "OP_S", "START_S", "TOOL_MARKER", "Fakes", "ScriptError", "validated"]


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


def validated[M: BaseModel](
    model: type[M], data: Any, where: str, context: Mapping[str, Any] | None = None
) -> M:
    """``data`` as ``model`` (``context``: pydantic's validation context, e.g. the one that
    lets a model turn read its ``fixture:``); a :class:`ScriptError` naming ``where`` if not."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data, context=dict(context) if context else None)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ScriptError(f"{where}: {problems}") from None


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
