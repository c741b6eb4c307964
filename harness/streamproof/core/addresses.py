"""How a connection's address is written in every record: ``host:port``. A fault link's
``connect`` record, the proxy's own upstream connections and a fake's refused handshakes are
matched on it, so all of them write it here. Core: no I/O."""

from __future__ import annotations

__all__ = ["address"]


def address(peer: object) -> str:
    """``host:port`` of a socket address (what ``getpeername``/``getsockname`` give, or
    asyncio's ``peername``/``sockname`` extra info); empty when there is none."""
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return ""
