"""Who listens on a loopback port, read from Linux's ``/proc``.

Readiness must mean "the target we started is listening", not "something answers on that
port": a stale server left on a fixed port would otherwise pass readiness and be tested in the
target's place. On Linux, ``/proc/net/tcp{,6}`` lists listening sockets by inode, and
``/proc/<pid>/fd`` links each open socket to its inode, so the owner of a listening port can be
named without any tool. Elsewhere (or when ``/proc`` cannot be read) every function says
``None``: unknown, and the caller falls back to asking over HTTP.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

__all__ = ["free_port", "group_members", "group_owns_listener", "listener_pids"]

_PROC = Path("/proc")


def free_port() -> int:
    """A loopback port nothing listens on right now (for a target started with ``{port}``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


_LISTEN = "0A"


def _listening_inodes(port: int, proc: Path) -> set[str] | None:
    inodes: set[str] = set()
    readable = False
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        readable = True
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            _, _, hex_port = fields[1].rpartition(":")
            if int(hex_port, 16) == port:
                inodes.add(fields[9])
    return inodes if readable else None


def _socket_inodes(pid: int, proc: Path) -> set[str]:
    """The inodes of the sockets ``pid`` holds open (empty when its fds cannot be read)."""
    inodes: set[str] = set()
    fd_dir = proc / str(pid) / "fd"
    with contextlib.suppress(OSError):
        for fd in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                link = os.readlink(fd_dir / fd)
                if link.startswith("socket:["):
                    inodes.add(link[len("socket:[") : -1])
    return inodes


def _pids(proc: Path) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(name) for name in os.listdir(proc) if name.isdigit()]
    return []


def listener_pids(port: int, *, proc: Path = _PROC) -> set[int] | None:
    """The processes holding a socket that listens on ``port`` (any address), as far as they
    can be seen; None when ``/proc`` cannot tell (not Linux)."""
    inodes = _listening_inodes(port, proc)
    if inodes is None:
        return None
    if not inodes:
        return set()
    return {pid for pid in _pids(proc) if _socket_inodes(pid, proc) & inodes}


def group_members(pgid: int, *, proc: Path = _PROC) -> set[int] | None:
    """The live processes of process group ``pgid``; None when ``/proc`` cannot tell."""
    if not (proc / "self" / "stat").exists():
        return None
    members: set[int] = set()
    for pid in _pids(proc):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
            # The command name (field 2) may hold spaces and parentheses: split after the last
            # ")"; then state, ppid, pgrp.
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) == pgid:
                members.add(pid)
    return members


def group_owns_listener(pgid: int, port: int, *, proc: Path = _PROC) -> bool | None:
    """Whether a process of group ``pgid`` holds a socket listening on ``port``; None when
    ``/proc`` cannot tell."""
    inodes = _listening_inodes(port, proc)
    members = group_members(pgid, proc=proc)
    if inodes is None or members is None:
        return None
    if not inodes:
        return False
    return any(_socket_inodes(pid, proc) & inodes for pid in members)
