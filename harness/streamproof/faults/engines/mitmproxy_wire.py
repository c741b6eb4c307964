"""The mitmproxy engine's only reach into mitmproxy's internals: the client's socket.

mitmproxy's addon API can answer, rewrite, hold and swallow, but it cannot end a response whose
body is already streaming: ``flow.kill()`` is ignored once the body streams (mitmproxy issue
#4711, and the comment in ``Flow.kill``), and returning ``b""`` from the stream callable writes
the chunked terminator, which is a *clean* end. A FIN without the terminator, a TCP reset, and a
terminator written by a timer while upstream sends nothing all need the client connection's
transport, which only the proxyserver addon's connection registry holds.
:func:`client_streams` is that one lookup (checked against mitmproxy 12.3.1, the version
pinned in ``pyproject.toml``); everything done with the streams afterwards is plain asyncio
(:func:`end_connection`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from typing import Any, Final, Literal

__all__ = ["client_streams", "end_connection"]

_RST_FLUSH: Final = 1.0
"""Seconds to let written bytes leave the transport before a reset discards them."""


def client_streams(
    master: Any, client: Any
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """The asyncio reader and writer of a live client connection (a ``mitmproxy.connection.
    Client``) of ``master``, or ``None`` once mitmproxy has let go of it.

    Internals, on purpose and only here: ``Proxyserver.connections`` maps a client's id to its
    ``ProxyConnectionHandler``, whose ``transports`` map each connection to its streams. No
    public API exposes them, and ending a streaming response any other way than cleanly needs
    them (see the module docstring).
    """
    proxyserver = master.addons.get("proxyserver")
    handler = getattr(proxyserver, "connections", {}).get(client.id)
    if handler is None:
        return None
    io = handler.transports.get(client)
    if io is None:
        return None
    reader, writer = io.reader, io.writer
    if not isinstance(reader, asyncio.StreamReader) or not isinstance(writer, asyncio.StreamWriter):
        return None  # a UDP or WireGuard stream: not something this engine listens on
    return reader, writer


async def end_connection(writer: asyncio.StreamWriter, how: Literal["fin", "rst"]) -> None:
    """End a connection under the HTTP layer's feet.

    ``fin``: close after the bytes already written (no chunked terminator follows, so the
    client sees a truncated body). ``rst``: let the written bytes reach the kernel first, then
    ``SO_LINGER (1, 0)`` and ``abort()``, so the kernel sends a reset instead of a FIN.
    """
    transport = writer.transport
    if transport.is_closing():
        return
    if how == "fin":
        transport.close()
        return
    for _ in range(int(_RST_FLUSH / 0.005)):
        if not transport.get_write_buffer_size():
            break
        await asyncio.sleep(0.005)
    if transport.is_closing():
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
