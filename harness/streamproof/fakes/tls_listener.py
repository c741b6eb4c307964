"""An HTTPS listener for a fake that sees every TLS handshake, the refused ones too.

Why not aiohttp's own TLS site: asyncio's TLS server finishes the handshake before the
application hears of a connection, and a client that does not trust the certificate leaves
without a word the server's code can hear (Python's and Node's clients close the socket with
no TLS alert). A gateway that ignores its corporate proxy and goes straight to the fake model
does exactly that (docs/reference/gateway-contract.md#through-a-corporate-proxy), and only
this listener can say so. Each connection is accepted as plain TCP, then upgraded with
``loop.start_tls``: the upgrade's outcome is the handshake's. A refused one is reported with
the client's address; a completed one goes to the aiohttp server as any connection would.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

from aiohttp import web

from streamproof.core.addresses import address
from streamproof.fakes.serving import LISTEN_BACKLOG

__all__ = ["HANDSHAKE_TIMEOUT", "TlsListener"]

HANDSHAKE_TIMEOUT = 10.0
"""Seconds a client may take over its handshake before it counts as refused."""

OnRefused = Callable[[str, str], None]
"""Told ``(peer, reason)`` of each handshake a client gave up."""


class TlsListener:
    """Serves ``server``'s application over TLS with ``context``; ``on_refused`` hears of every
    handshake that did not complete."""

    def __init__(self, server: web.Server, context: ssl.SSLContext, on_refused: OnRefused) -> None:
        self._server = server
        self._context = context
        self._on_refused = on_refused
        self._listening: asyncio.Server | None = None
        self._upgrades: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (port 0: any free port); the port bound."""
        loop = asyncio.get_running_loop()
        self._listening = await loop.create_server(
            lambda: _Accepted(self), host, port, backlog=LISTEN_BACKLOG
        )
        bound: int = self._listening.sockets[0].getsockname()[1]
        return bound

    async def close(self) -> None:
        """Stop listening and abandon the handshakes in progress (not reported). Connections
        already handed over are the aiohttp server's to end."""
        listening, self._listening = self._listening, None
        if listening is None:
            return
        listening.close()
        for task in list(self._upgrades):
            task.cancel()
        if self._upgrades:
            await asyncio.gather(*self._upgrades, return_exceptions=True)

    def upgrade(self, transport: asyncio.Transport) -> None:
        """Take ``transport``, just accepted, through its TLS handshake."""
        task = asyncio.get_running_loop().create_task(self._handshake(transport))
        self._upgrades.add(task)
        task.add_done_callback(self._upgrades.discard)

    async def _handshake(self, transport: asyncio.Transport) -> None:
        peer = address(transport.get_extra_info("peername")) or "unknown"
        handler = self._server()
        try:
            secure = await asyncio.get_running_loop().start_tls(
                transport,
                handler,
                self._context,
                server_side=True,
                ssl_handshake_timeout=HANDSHAKE_TIMEOUT,
            )
        except asyncio.CancelledError:
            transport.abort()
            raise
        except OSError as exc:  # an SSLError, a reset, the handshake's timeout
            transport.abort()
            self._on_refused(peer, _why(exc))
            return
        if secure is None:  # the connection ended as the handshake did
            self._on_refused(peer, "the client closed the connection during the handshake")
            return
        handler.connection_made(secure)


class _Accepted(asyncio.Protocol):
    """A connection just accepted: reading stops at once, so that the client's first bytes (its
    TLS hello) wait for the TLS layer instead of arriving here."""

    def __init__(self, listener: TlsListener) -> None:
        self._listener = listener

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.pause_reading()
        self._listener.upgrade(transport)

    def data_received(self, data: bytes) -> None:  # reading is paused: never called
        raise AssertionError("bytes before the TLS upgrade")


def _why(exc: OSError) -> str:
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    if isinstance(exc, ConnectionAbortedError):  # asyncio's own: the handshake timed out
        return f"the handshake was aborted: {exc}"
    if isinstance(exc, ConnectionError):
        return "the client closed the connection during the handshake"
    return f"{type(exc).__name__}: {exc}"
