"""The zygote: imports a target's module once, then forks a child per start that becomes
``python -m MODULE args`` with that start's environment, output and process group.

``python -m streamproof.targets.warm.zygote --socket PATH --module MODULE [--preload M ...]``
(``--preload``: modules the command imports later anyway, imported here too). It listens on the
Unix socket ``PATH`` (created under a temporary name and renamed once the module is imported,
so the socket's existence means ready). Each connection is one start: the harness sends a
request (:mod:`.request`) with three file descriptors (the child's stdin, stdout and stderr);
the zygote answers ``{"pid": N}`` or ``{"refused": why}``, and later ``{"exit": code}`` (as
``subprocess`` reports it: negative for a signal). A child whose requester hangs up is killed
with its process group; when the zygote's stdin closes (the harness is gone) it kills its live
children's groups and ends.

A child is what a fresh start would be because the zygote refuses every request that differs
in what an interpreter fixes at start-up (the interpreter, the module and its preloads, the
working folder, the ``PYTHON*`` and locale variables) and forks only while it is the one
thread; the child then starts its own session (``start_new_session``), takes the start's
descriptors, environment and arguments, forgets the imported copy of the module, and runs it
as ``__main__`` the way ``-m`` does. What it shares with the zygote is the modules imported
before any start's environment was known: a module that reads the environment while it is
imported must not be started warm (docs/reference/target-files.md#warm-starts).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field

from streamproof.targets.warm.request import HEADER, decode_length, encode, interpreter_env

_REQUEST_TIMEOUT_S = 5.0


@dataclass
class _Child:
    pid: int
    pidfd: int
    conn: socket.socket | None


@dataclass
class _Request:
    module: str
    args: list[str]
    env: dict[str, str]
    fds: list[int] = field(default_factory=list)


def _reply(conn: socket.socket | None, message: dict[str, object]) -> None:
    if conn is None:
        return
    with contextlib.suppress(OSError):
        conn.sendall(encode(message))


def _read_request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    conn.settimeout(_REQUEST_TIMEOUT_S)
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < HEADER.size:
        more = conn.recv(1 << 16)
        if not more:
            raise ValueError("the request ended early")
        data += more
    length = decode_length(data[: HEADER.size])
    while len(data) < HEADER.size + length:
        more = conn.recv(1 << 16)
        if not more:
            raise ValueError("the request ended early")
        data += more
    message = json.loads(data[HEADER.size : HEADER.size + length])
    if not isinstance(message, dict):
        raise ValueError("the request is not a JSON object")
    return message, list(fds)


def _refusal(
    message: dict[str, object], module: str, preload: list[str], fds: list[int]
) -> str | None:
    if len(fds) != 3:
        return f"expected 3 file descriptors, got {len(fds)}"
    if message.get("python") != sys.executable:
        return f"the zygote runs {sys.executable}, the command {message.get('python')}"
    if message.get("module") != module:
        return f"the zygote imported {module}, the command runs {message.get('module')}"
    if message.get("preload", []) != preload:
        return f"the zygote preloaded {preload}, the command asks for {message.get('preload')}"
    if message.get("cwd") != os.getcwd():
        return f"the zygote runs in {os.getcwd()}, the command in {message.get('cwd')}"
    env = message.get("env")
    if not isinstance(env, dict) or interpreter_env(env) != interpreter_env(os.environ):
        return "the command's PYTHON* or locale variables differ from the zygote's"
    threads = _threads()
    if threads != 1:
        return f"the zygote has {threads} threads; it forks only with one"
    return None


def _threads() -> int:
    """The process's threads, native ones included (a library's C thread counts too)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _serve(listener: socket.socket, module: str, preload: list[str], owner: int | None) -> _Request:
    """Answer starts until the harness (or the owner of a shared zygote) is gone; returns only
    in a forked child."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    if owner is None:
        selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "harness")
    else:
        try:
            selector.register(os.pidfd_open(owner), selectors.EVENT_READ, "owner")
        except ProcessLookupError:
            os._exit(0)
    children: dict[int, _Child] = {}
    while True:
        for key, _ in selector.select():
            what = key.data
            if what == "accept":
                conn, _ = listener.accept()
                request = _start(conn, module, preload, selector, children)
                if request is not None:
                    return request
            elif what == "owner" or (what == "harness" and not os.read(sys.stdin.fileno(), 4096)):
                for child in children.values():
                    with contextlib.suppress(OSError):
                        os.killpg(child.pid, signal.SIGKILL)
                if owner is None:
                    # Its own folder (socket and log), which a harness that died without its
                    # exit handlers could not remove; a shared folder is its owner's to remove.
                    shutil.rmtree(os.path.dirname(listener.getsockname()), ignore_errors=True)
                os._exit(0)
            elif isinstance(what, _Child):
                if key.fileobj is what.conn:
                    # The requester hung up: nothing is left to own this child.
                    with contextlib.suppress(OSError):
                        if not what.conn.recv(1):
                            selector.unregister(what.conn)
                            what.conn.close()
                            what.conn = None
                            os.killpg(what.pid, signal.SIGKILL)
                else:
                    _pid, status = os.waitpid(what.pid, 0)
                    selector.unregister(what.pidfd)
                    os.close(what.pidfd)
                    if what.conn is not None:
                        _reply(what.conn, {"exit": os.waitstatus_to_exitcode(status)})
                        selector.unregister(what.conn)
                        what.conn.close()
                    del children[what.pid]


def _start(
    conn: socket.socket,
    module: str,
    preload: list[str],
    selector: selectors.BaseSelector,
    children: dict[int, _Child],
) -> _Request | None:
    fds: list[int] = []
    try:
        message, fds = _read_request(conn)
    except (OSError, ValueError) as exc:
        _reply(conn, {"refused": f"unreadable request: {exc}"})
        for fd in fds:
            os.close(fd)
        conn.close()
        return None
    refusal = _refusal(message, module, preload, fds)
    if refusal is not None:
        _reply(conn, {"refused": refusal})
        for fd in fds:
            os.close(fd)
        conn.close()
        return None
    args = message.get("args")
    env = message.get("env")
    assert isinstance(args, list) and isinstance(env, dict)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        selector.close()
        for child in children.values():
            os.close(child.pidfd)
            if child.conn is not None:
                child.conn.close()
        conn.close()
        os.setsid()
        os.write(ready_w, b"1")
        os.close(ready_w)
        return _Request(
            module, [str(a) for a in args], {str(k): str(v) for k, v in env.items()}, fds
        )
    os.close(ready_w)
    for fd in fds:
        os.close(fd)
    # Answer once the child leads its own process group, so the harness's killpg reaches it.
    os.read(ready_r, 1)
    os.close(ready_r)
    child = _Child(pid, os.pidfd_open(pid), conn)
    children[pid] = child
    _reply(conn, {"pid": pid})
    conn.settimeout(None)
    selector.register(child.pidfd, selectors.EVENT_READ, child)
    selector.register(conn, selectors.EVENT_READ, child)
    return None


def _become(request: _Request) -> None:
    """In the child: be ``python -m MODULE args`` as a fresh start with this environment."""
    stdin, stdout, stderr = request.fds
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
    for fd in set(request.fds) - {0, 1, 2}:
        os.close(fd)
    os.environ.clear()
    os.environ.update(request.env)
    # ``-m`` runs a module as ``__main__`` without importing it under its name (a package: its
    # ``__main__``), so the zygote's imported copy is forgotten.
    imported = sys.modules.get(request.module)
    main_module = f"{request.module}.__main__" if hasattr(imported, "__path__") else request.module
    sys.modules.pop(main_module, None)
    sys.argv = [request.module, *request.args]
    runpy.run_module(request.module, run_name="__main__", alter_sys=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m streamproof.targets.warm.zygote")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--module", required=True)
    parser.add_argument(
        "--preload", action="append", default=[], help="a module to import too (repeatable)"
    )
    parser.add_argument("--owner", type=int, help="end when this process ends (a shared zygote)")
    args = parser.parse_args(argv)
    importlib.import_module(args.module)
    for name in args.preload:
        importlib.import_module(name)
    gc.collect()
    # The imported modules' objects are left out of every collection, the zygote's and its
    # children's (children stay frozen, as the gc module's docs advise for a fork without an
    # exec): a child's collections neither walk them (pytest alone collects five times over
    # the heap at the end of a run) nor write to their pages, which stay shared.
    gc.freeze()
    staging = f"{args.socket}.starting"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(staging)
    listener.listen(64)
    os.rename(staging, args.socket)
    request = _serve(listener, args.module, args.preload, args.owner)
    listener.close()
    _become(request)


if __name__ == "__main__":
    main()
