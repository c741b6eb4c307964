"""Naming who listens on a port: from the real ``/proc`` and from a hand-made one."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from streamproof.targets.sockets import group_members, group_owns_listener, listener_pids

LINUX = Path("/proc/self/stat").exists()


@pytest.mark.skipif(not LINUX, reason="reads Linux's /proc")
def test_our_own_listening_socket_is_ours_and_a_closed_port_is_nobodys() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert listener_pids(port) == {os.getpid()}
        assert group_owns_listener(os.getpgid(0), port) is True
        assert os.getpid() in (group_members(os.getpgid(0)) or set())
    assert listener_pids(port) == set()
    assert group_owns_listener(os.getpgid(0), port) is False


@pytest.mark.skipif(not LINUX, reason="reads Linux's /proc")
def test_a_bound_socket_that_does_not_listen_is_not_a_listener() -> None:
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        assert listener_pids(bound.getsockname()[1]) == set()


def _fake_proc(root: Path, *, pgid_of: dict[int, int], sockets_of: dict[int, list[str]]) -> Path:
    (root / "self").mkdir(parents=True)
    (root / "self" / "stat").write_text("1 (x) S 0 1 1\n")
    (root / "net").mkdir()
    rest = "00000000:00000000 00:00000000 00000000  1000        0"
    (root / "net" / "tcp").write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        "timeout inode\n"
        # 127.0.0.1:8765 listening (0A), inode 111; the same port connected (01), inode 222
        f"   0: 0100007F:223D 00000000:0000 0A {rest} 111\n"
        f"   1: 0100007F:223D 0100007F:9C40 01 {rest} 222\n"
    )
    for pid, pgid in pgid_of.items():
        (root / str(pid) / "fd").mkdir(parents=True)
        # a command name with spaces and a parenthesis must not shift the fields
        (root / str(pid) / "stat").write_text(f"{pid} (my (odd) name) S 1 {pgid} {pgid} 0\n")
        for n, inode in enumerate(sockets_of.get(pid, [])):
            os.symlink(f"socket:[{inode}]", root / str(pid) / "fd" / str(n))
    return root


def test_a_hand_made_proc_names_the_listener_and_its_group(tmp_path: Path) -> None:
    proc = _fake_proc(
        tmp_path / "proc",
        pgid_of={10: 10, 11: 10, 20: 20},
        sockets_of={11: ["111"], 20: ["222"]},
    )
    assert listener_pids(8765, proc=proc) == {11}
    assert group_members(10, proc=proc) == {10, 11}
    assert group_owns_listener(10, 8765, proc=proc) is True  # a child of the group listens
    assert group_owns_listener(20, 8765, proc=proc) is False  # only a connection, not a listener
    assert group_owns_listener(10, 8766, proc=proc) is False


def test_without_proc_nothing_is_claimed(tmp_path: Path) -> None:
    assert listener_pids(8765, proc=tmp_path) is None
    assert group_members(10, proc=tmp_path) is None
    assert group_owns_listener(10, 8765, proc=tmp_path) is None
