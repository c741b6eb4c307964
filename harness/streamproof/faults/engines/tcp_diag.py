"""How many bytes a TCP socket of another process has delivered: Linux's sock_diag, read-only.

The toxiproxy engine needs to know when the bytes it handed to toxiproxy have actually reached
the client (before it lowers the byte limit all of a proxy's connections share, to cut one of
them). Toxiproxy does not say; the kernel does: ``tcpi_bytes_acked`` of toxiproxy's
client-facing socket is the count of bytes the client's TCP stack has acknowledged. On loopback
that is what reached the client.

One exact lookup per call (an ``inet_diag`` request for one 4-tuple over a netlink socket,
about 20 µs). Nothing here changes any socket. Elsewhere than Linux, or where netlink is not
allowed, :func:`available` is false and the toxiproxy engine does not lower that shared limit
(it cuts by closing the connection behind toxiproxy instead).
"""

from __future__ import annotations

import functools
import socket
import struct
import time
from typing import Final

__all__ = ["available", "bytes_acked"]

_NETLINK_SOCK_DIAG: Final = 4
_SOCK_DIAG_BY_FAMILY: Final = 20
_NLM_F_REQUEST: Final = 0x1
_NLMSG_ERROR: Final = 2
_INET_DIAG_INFO: Final = 2
_INET_DIAG_NOCOOKIE: Final = 0xFFFFFFFF
_HEADER: Final = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
_REQUEST: Final = struct.Struct("=BBBxI")  # inet_diag_req_v2: family, protocol, ext, states
_MSG_BEFORE_ATTRS: Final = 4 + 48 + 20  # inet_diag_msg: 4 bytes, the socket id, 5 u32
_ATTR: Final = struct.Struct("=HH")  # rtattr: len, type
_BYTES_ACKED_AT: Final = 120
"""Offset of ``tcpi_bytes_acked`` (u64) in ``struct tcp_info`` (Linux >= 4.1)."""


def _query(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    src = socket.inet_aton(local[0]) + bytes(12)
    dst = socket.inet_aton(remote[0]) + bytes(12)
    sock_id = (
        struct.pack("!HH", local[1], remote[1])
        + src
        + dst
        + struct.pack("=III", 0, _INET_DIAG_NOCOOKIE, _INET_DIAG_NOCOOKIE)
    )
    request = (
        _REQUEST.pack(socket.AF_INET, socket.IPPROTO_TCP, 1 << (_INET_DIAG_INFO - 1), 0xFFFFFFFF)
        + sock_id
    )
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(1.0)
        nl.send(
            _HEADER.pack(_HEADER.size + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0)
            + request
        )
        data = nl.recv(65536)
    length, kind, _, _, _ = _HEADER.unpack_from(data, 0)
    if kind == _NLMSG_ERROR:
        return None  # no such socket (closed, or never existed)
    body = data[_HEADER.size : length]
    at = _MSG_BEFORE_ATTRS
    while at + _ATTR.size <= len(body):
        attr_len, attr_type = _ATTR.unpack_from(body, at)
        if attr_len < _ATTR.size:
            break
        if attr_type == _INET_DIAG_INFO and attr_len >= _ATTR.size + _BYTES_ACKED_AT + 8:
            acked: int = struct.unpack_from("=Q", body, at + _ATTR.size + _BYTES_ACKED_AT)[0]
            return acked
        at += (attr_len + 3) & ~3
    return None


def bytes_acked(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """Bytes sent on the IPv4 TCP socket ``local`` -> ``remote`` that the peer acknowledged;
    ``None`` if there is no such socket (or the kernel cannot say)."""
    try:
        return _query(local, remote)
    except OSError:
        return None


@functools.cache
def available() -> bool:
    """Whether this machine answers sock_diag queries (Linux, netlink allowed)."""
    if not hasattr(socket, "AF_NETLINK"):
        return False
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=1.0) as client:
            accepted, _ = server.accept()
            with accepted:
                accepted.sendall(b"x")
                client.recv(1)
                for _ in range(100):  # the client's ACK may be delayed a little
                    acked = bytes_acked(accepted.getsockname(), accepted.getpeername())
                    if acked is None or acked > 1:
                        return False
                    if acked == 1:
                        return True
                    time.sleep(0.005)
                return False
