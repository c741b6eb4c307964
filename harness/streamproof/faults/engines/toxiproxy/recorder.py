"""The recorder behind toxiproxy: the inline proxy running the same plan with the same trigger
logic, on connections whose transport counts every byte written (toxiproxy's ``limit_data``
count), handing each action to its owner, the toxiproxy link (see
:mod:`~streamproof.faults.engines.toxiproxy`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Literal, Protocol, cast

from streamproof.core.durations import TimeScale
from streamproof.faults.engines.inline import InlineProxy
from streamproof.faults.engines.inline_exchange import _Exchange
from streamproof.faults.plan import Fault
from streamproof.faults.records import EndHow, FaultRef
from streamproof.faults.shaper import Fired

__all__ = ["Recorder", "RecorderOwner", "Wire"]


class RecorderOwner(Protocol):
    """What the recorder hands its actions to (the toxiproxy link)."""

    @property
    def armed(self) -> bool: ...

    async def cut(
        self, ex: _Exchange, how: Literal["fin", "rst"], detail: str, fault: FaultRef
    ) -> None: ...

    async def fired(self, ex: _Exchange, op: Fired) -> None: ...

    async def before_write(self, data: bytes | None) -> None: ...


class Wire(asyncio.Transport):
    """A recorder connection's transport (its peer is toxiproxy), counting the bytes written.

    While held (:meth:`hold`), nothing reaches toxiproxy: writes, the end of the body and a
    close wait, in order, until :meth:`release`. A cut on another connection of the link holds
    this one, because toxiproxy's lowered limit would end any connection whose bytes reached it
    meanwhile, whatever path wrote them (aiohttp writes the chunked terminator and its own error
    pages without the recorder's write hook)."""

    def __init__(self, inner: asyncio.Transport, *, armed: bool, held: bool = False) -> None:
        super().__init__()
        self._inner = inner
        self.armed = armed
        """Whether toxiproxy had ``reset_peer`` armed when this connection started."""
        self.written = 0
        """Bytes handed to toxiproxy on the connection since it opened (held ones are not):
        toxiproxy's limit_data count once they have gone through it."""
        self.connection = -1
        self.closed = asyncio.Event()
        self._held: list[bytes | Literal["eof", "close"]] | None = [] if held else None
        self._closing = False

    def poke(self) -> None:
        """One byte past a cut: toxiproxy's limit_data drops it and closes at once."""
        if not self._inner.is_closing():
            self._inner.write(b"\0")

    def hold(self) -> None:
        """Keep what is written from toxiproxy until :meth:`release`."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Hand toxiproxy what was held, in the order it came."""
        held, self._held = self._held, None
        for item in held or ():
            if item == "eof":
                self._inner.write_eof()
            elif item == "close":
                self._inner.close()
            elif isinstance(item, bytes):
                self.written += len(item)
                self._inner.write(item)

    def lost(self) -> None:
        """The connection is gone: what was held goes nowhere."""
        self._held = None
        self.closed.set()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._held is not None:
            self._held.append(bytes(data))
            return
        self.written += len(data)
        self._inner.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        chunks = list(list_of_data)
        if self._held is not None:
            self._held.extend(bytes(chunk) for chunk in chunks)
            return
        self.written += sum(len(chunk) for chunk in chunks)
        self._inner.writelines(chunks)

    def is_closing(self) -> bool:
        return self._closing or self._inner.is_closing()

    def close(self) -> None:
        if self._held is not None:
            self._closing = True
            self._held.append("close")
            return
        self._inner.close()

    def abort(self) -> None:
        self._held = None  # an abort discards what is buffered, held bytes too
        self._inner.abort()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._inner.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._inner.pause_reading()

    def resume_reading(self) -> None:
        self._inner.resume_reading()

    def is_reading(self) -> bool:
        return self._inner.is_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._inner.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self._inner.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._inner.get_write_buffer_limits()

    def can_write_eof(self) -> bool:
        return self._inner.can_write_eof()

    def write_eof(self) -> None:
        if self._held is not None:
            self._held.append("eof")
            return
        self._inner.write_eof()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._inner.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._inner.get_protocol()


class Recorder(InlineProxy):
    """The inline proxy behind toxiproxy: same plan, same trigger logic, same records; the
    actions are carried out by the toxiproxy link through toxiproxy."""

    __test__ = False
    _delegated = frozenset({"drip", "split"})

    def __init__(
        self, link: str, upstream: str, *, time_scale: TimeScale, owner: RecorderOwner
    ) -> None:
        super().__init__(link, upstream, time_scale=time_scale)
        self._owner = owner
        self.wires: dict[int, Wire] = {}
        """The open connections, by connection id."""
        self._holding = False

    def hold(self, keep: Wire) -> None:
        """Hold every connection but ``keep`` (:meth:`Wire.hold`), and those that open before
        :meth:`release`."""
        self._holding = True
        for wire in self.wires.values():
            if wire is not keep:
                wire.hold()

    def release(self) -> None:
        self._holding = False
        for wire in list(self.wires.values()):
            wire.release()

    def _wrap_transport(self, transport: asyncio.BaseTransport) -> asyncio.BaseTransport:
        return Wire(cast(asyncio.Transport, transport), armed=self._owner.armed, held=self._holding)

    def _connected(self, transport: asyncio.BaseTransport) -> None:
        super()._connected(transport)
        if isinstance(transport, Wire):
            transport.connection = self._conns[transport]
            self.wires[transport.connection] = transport

    def _disconnected(self, transport: asyncio.BaseTransport, exc: Exception | None) -> None:
        super()._disconnected(transport, exc)
        if isinstance(transport, Wire):
            self.wires.pop(transport.connection, None)
            transport.lost()

    def busy(self, wire: Wire) -> bool:
        return any(ex.transport is wire for ex in self._active)

    async def _delay(self, ex: _Exchange, seconds: float) -> None:
        return None  # toxiproxy's latency toxic holds the request or the response

    async def _cut(
        self, ex: _Exchange, how: Literal["fin", "rst"], detail: str, fault: FaultRef
    ) -> None:
        await self._owner.cut(ex, how, detail, fault)

    async def _fired(self, ex: _Exchange, op: Fired) -> None:
        await self._owner.fired(ex, op)

    async def _before_write(self, ex: _Exchange, data: bytes | None) -> None:
        await self._owner.before_write(data)

    def record_fault(self, ex: _Exchange, index: int, fault: Fault, note: str) -> None:
        self._record_fault(ex, index, fault, note)

    def record_end(self, ex: _Exchange, how: EndHow, detail: str, fault: FaultRef) -> None:
        self._end(ex, how, "proxy", detail, fault=fault)
