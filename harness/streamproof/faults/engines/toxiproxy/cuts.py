"""Cutting one connection of a toxiproxy link exactly, though its toxics are shared.

Cuts are exact per connection. Toxiproxy's ``limit_data`` closes a connection when a chunk it
forwards brings that connection's count to the limit, and never otherwise, so while the limit is
lowered for one cut: no byte reaches toxiproxy on any other connection of the link (each
recorder connection holds whatever is written on it, the chunked terminator aiohttp writes
itself included, until the limit is put back), and every other connection at or past the cut
offset is first seen delivered (the kernel's count of bytes the client acknowledged on
toxiproxy's socket, :mod:`~streamproof.faults.engines.tcp_diag`, paired with the connection
through toxiproxy's ``Accepted client`` log lines): a chunk of it still on its way would reach
the limit. Where that cannot be seen (no sock_diag, no log pairing, or a client that does not
read for 5 s), the shared limit is not lowered: the recorder closes its side of the connection
at hand and toxiproxy, reading the end, closes the client's socket after the same bytes (a FIN,
or an RST on an armed connection); the ``end`` record says so. The ``end`` of a cut is recorded
before the limit is lowered: toxiproxy may close the connection at once (its own last bytes
still on their way fill the limit), and the recorder must not take that close for the client
leaving.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any, Final

from streamproof.faults.engines import tcp_diag
from streamproof.faults.engines.inline_exchange import _Exchange
from streamproof.faults.engines.toxiproxy.recorder import Recorder, Wire
from streamproof.faults.engines.toxiproxy.server import ToxiproxyAPI
from streamproof.faults.engines.toxiproxy.toxics import CUT, NO_LIMIT
from streamproof.faults.records import EndHow, FaultRef

__all__ = ["Cuts"]

_log = logging.getLogger(__name__)

_DRAIN_TIMEOUT: Final = 5.0
"""Seconds to wait for a connection's written bytes to be acknowledged by the client."""
_CLOSE_TIMEOUT: Final = 5.0
"""Seconds to wait for toxiproxy to close a connection it was told to cut."""


class Cuts:
    """The cuts of one link's proxy: its ``limit_data`` toxic, lowered for one connection at a
    time, and which client each recorder connection serves (toxiproxy's log)."""

    def __init__(
        self, link: str, proxy: str, recorder: Recorder, api: Callable[[], ToxiproxyAPI]
    ) -> None:
        self._link = link
        self._proxy = proxy
        self._recorder = recorder
        self._api = api
        self.limit = NO_LIMIT
        """The cut toxic's limit, as last set."""
        self.listen: tuple[str, int] | None = None
        """Where the proxy listens, once started: the local end of its client sockets."""
        self._accepted: list[tuple[str, int]] = []
        """Client addresses in the order toxiproxy accepted them (its log)."""

    def on_log(self, entry: dict[str, Any]) -> None:
        """One of toxiproxy's log lines about this link's proxy."""
        message, client = entry.get("message"), entry.get("client")
        if not isinstance(client, str):
            return
        host, _, port = client.rpartition(":")
        if not port.isdigit():
            return
        address = (host.strip("[]"), int(port))
        if message == "Accepted client":
            self._accepted.append(address)
        elif message == "Unable to open connection to upstream" and address in self._accepted:
            self._accepted.remove(address)  # no recorder connection for it

    def client_of(self, wire: Wire) -> tuple[str, int] | None:
        """The client's address of a recorder connection: toxiproxy accepts a client, then
        dials the recorder, one client at a time, so the nth accepted client is the nth
        connection the recorder accepted."""
        if 0 <= wire.connection < len(self._accepted):
            return self._accepted[wire.connection]
        return None

    async def drained(self, wires: Iterable[Wire]) -> bool:
        """Wait until the client has acknowledged every byte written on ``wires`` (or the
        connection is gone); False if that cannot be seen (no sock_diag, no log pairing) or is
        not seen within the timeout."""
        pending = [w for w in wires if w.written and not w.closed.is_set()]
        if not pending:
            return True
        listen = self.listen
        if listen is None or not tcp_diag.available():
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _DRAIN_TIMEOUT
        pause = 0.0005
        while pending:
            waiting = []
            for wire in pending:
                if wire.closed.is_set():
                    continue
                client = self.client_of(wire)
                acked = None if client is None else tcp_diag.bytes_acked(listen, client)
                if client is not None and (acked is None or acked >= wire.written):
                    continue
                waiting.append(wire)
            pending = waiting
            if not pending:
                return True
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.01)
        return True

    async def set_limit(self, limit: int) -> None:
        self.limit = limit
        await self._api().call(
            "PATCH", f"/proxies/{self._proxy}/toxics/{CUT}", {"attributes": {"bytes": limit}}
        )
        if limit == NO_LIMIT:
            self.limit = NO_LIMIT

    async def cut_now(
        self, ex: _Exchange, wire: Wire, ended: EndHow, detail: str, fault: FaultRef
    ) -> None:
        # Exact per connection (the module docstring): nothing reaches toxiproxy on another
        # connection while the limit is low, and one at or past this offset is first seen to
        # have nothing on its way; if that cannot be seen, the limit is left alone.
        self._recorder.hold(keep=wire)
        try:
            ahead = [
                w
                for w in self._recorder.wires.values()
                if w is not wire and w.written >= wire.written
            ]
            if not await self.drained(ahead):
                _log.info(
                    "link %s: another connection is at or past byte %d with bytes not seen "
                    "delivered; toxiproxy's shared limit would cut it too, so the recorder "
                    "closes connection %d itself",
                    self._link,
                    wire.written,
                    wire.connection,
                )
                detail += (
                    "; toxiproxy closed it when the recorder closed its side (another "
                    "connection was at or past this byte with bytes not seen delivered, which "
                    "its shared limit would have cut too)"
                )
                self._recorder.record_end(ex, ended, detail, fault)
                wire.close()
                await self.closed(wire)
                return
            # Recorded first: if this connection's own last bytes are still on their way,
            # toxiproxy closes it as soon as the limit is in place, and the recorder may see
            # that close before the API's answer (it would take it for the client leaving).
            self._recorder.record_end(ex, ended, detail, fault)
            try:
                try:
                    await self.set_limit(wire.written)
                except BaseException:
                    wire.close()  # the cut recorded still happens, after the same bytes
                    raise
                wire.poke()
                await self.closed(wire)
            finally:
                await self.set_limit(NO_LIMIT)
        finally:
            self._recorder.release()

    async def closed(self, wire: Wire) -> None:
        try:
            await asyncio.wait_for(wire.closed.wait(), _CLOSE_TIMEOUT)
        except TimeoutError:
            _log.warning("link %s: toxiproxy did not cut a connection; closing it", self._link)
            wire.abort()
