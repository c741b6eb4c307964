"""The harness's side of warm starts: one zygote per kind of start, and a started child.

:func:`start_warm` returns a :class:`WarmChild` (what :class:`asyncio.subprocess.Process` gives:
``pid``, ``returncode``, ``wait()``, ``stdout``, ``stderr``), or the reason the command must be
started the ordinary way. Zygotes are plain processes, not tied to an event loop, so the tests'
many loops share them; each is started in its own session, ends when this process's end closes
its stdin, and is killed at exit with its folder removed.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

from streamproof.targets.warm.request import (
    HEADER,
    WarmCommand,
    decode_length,
    encode,
    interpreter_env,
    warm_command,
    zygote_env,
)

__all__ = ["SHARED", "SWITCH", "WarmChild", "sharing", "start_warm"]

SWITCH: Final = "STREAMPROOF_WARM_START"
"""``0`` in the harness's environment turns warm starts off (every start is an ordinary one)."""
SHARED: Final = "STREAMPROOF_WARM_SHARED"
"""Set by :func:`sharing`: the folder of the zygotes shared with the process that owns it."""
READY_TIMEOUT_S: Final = 60.0
"""How long a zygote may take to import its module (a target's own readiness bound)."""
_REPLY_TIMEOUT_S: Final = 10.0
_ZYGOTE: Final = "streamproof.targets.warm.zygote"

_Key = tuple[str, str, tuple[str, ...], str, tuple[tuple[str, str], ...]]


class _Zygote:
    """A zygote this process started: its own, or one it shares under an ``owner``."""

    def __init__(
        self,
        command: WarmCommand,
        env: Mapping[str, str],
        cwd: str,
        *,
        socket_path: str | None = None,
        owner: int | None = None,
    ) -> None:
        self.folder = _socket_folder("streamproof-warm-")
        self.socket = socket_path or os.path.join(self.folder, "zygote.sock")
        self.log = os.path.join(self.folder, "zygote.log")
        self.broken: str | None = None
        argv = [command.python, "-m", _ZYGOTE, "--socket", self.socket, "--module", command.module]
        for name in command.preload:
            argv += ["--preload", name]
        if owner is not None:
            argv += ["--owner", str(owner)]
        with open(self.log, "wb") as log:
            self.popen = subprocess.Popen(
                argv,
                env=zygote_env(env),
                cwd=cwd,
                # Its own ends when this process ends (its stdin closes); a shared one when
                # its owner does.
                stdin=subprocess.PIPE if owner is None else subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )

    def gone(self) -> bool:
        return self.popen.poll() is not None

    def listening(self) -> bool:
        """Its socket is there: the zygote renames it into place once the module is imported."""
        return os.path.exists(self.socket)

    async def ready(self) -> str | None:
        """None once the zygote listens; else why it cannot be used (and it is closed)."""
        if self.broken is not None:
            return self.broken
        loop = asyncio.get_running_loop()
        deadline = loop.time() + READY_TIMEOUT_S
        while not self.listening():
            if self.gone() or loop.time() > deadline:
                self.broken = self._why_not()
                self.close()
                return self.broken
            await asyncio.sleep(0.02)
        return None

    def _why_not(self) -> str:
        if not self.gone():
            return f"its zygote did not import the module within {READY_TIMEOUT_S:g}s"
        try:
            with open(self.log, encoding="utf-8", errors="replace") as log:
                tail = log.read().strip().splitlines()[-3:]
        except OSError:
            tail = []
        said = "; ".join(tail) if tail else "no output"
        return f"its zygote exited with code {self.popen.returncode} ({said})"

    def forget(self) -> None:
        """Leave a shared zygote to its owner: only this process's log folder goes."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        if self.popen.stdin is not None:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()
        shutil.rmtree(self.folder, ignore_errors=True)


_SOCKET_PATH_MAX: Final = 107
"""The longest Unix socket path Linux binds (``sun_path`` holds 108 bytes with its NUL)."""
_SOCKET_NAME_MAX: Final = len("/0123456789abcdef.sock.starting")


def _socket_folder(prefix: str) -> str:
    """A new private folder for zygote sockets: in the temporary folder, or in ``/tmp`` when
    that one's path is too long for a socket path (a test runner's nested TMPDIR)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    if len(folder.encode()) + _SOCKET_NAME_MAX <= _SOCKET_PATH_MAX or not os.path.isdir("/tmp"):
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


_POOL: dict[_Key, _Zygote] = {}
_LOCK = threading.Lock()


def _close_all() -> None:
    with _LOCK:
        for zygote in _POOL.values():
            zygote.close()
        _POOL.clear()


atexit.register(_close_all)


@contextlib.contextmanager
def sharing() -> Iterator[str]:
    """Share zygotes with every streamproof process started inside (through the environment):
    for a process that runs many ``streamproof run`` commands (``streamproof mutants``, a test
    suite). The zygotes live until this process leaves the block or ends."""
    folder = _socket_folder("streamproof-warm-shared-")
    with open(os.path.join(folder, "owner"), "w", encoding="ascii") as owner:
        owner.write(str(os.getpid()))
    before = os.environ.get(SHARED)
    os.environ[SHARED] = folder
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop(SHARED, None)
        else:
            os.environ[SHARED] = before
        for name in os.listdir(folder):
            if name.endswith(".pid"):
                with contextlib.suppress(OSError, ValueError):
                    with open(os.path.join(folder, name), encoding="ascii") as pid:
                        os.killpg(int(pid.read()), signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


def _shared() -> tuple[str, int] | None:
    """The shared folder and its owner's pid, when this process runs inside :func:`sharing`."""
    folder = os.environ.get(SHARED)
    if not folder:
        return None
    try:
        with open(os.path.join(folder, "owner"), encoding="ascii") as owner:
            pid = int(owner.read())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return folder, pid


class _SharedEntry:
    """The files of one shared zygote: ``<name>.sock`` (it listens), ``.pid``, ``.broken`` (why
    it cannot be used), ``.lock`` (held while one process starts it)."""

    def __init__(self, folder: str, key: _Key) -> None:
        self.name = os.path.join(folder, hashlib.sha256(repr(key).encode()).hexdigest()[:16])
        self.socket = f"{self.name}.sock"
        self._lock: int | None = None

    def try_lock(self) -> bool:
        fd = os.open(f"{self.name}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock = fd
        return True

    def unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the lock
            self._lock = None

    def settled(self) -> bool:
        return os.path.exists(self.socket) or os.path.exists(f"{self.name}.broken")

    def write(self, suffix: str, text: str) -> None:
        with open(f"{self.name}{suffix}", "w", encoding="utf-8") as file:
            file.write(text)

    def broken(self) -> str | None:
        try:
            with open(f"{self.name}.broken", encoding="utf-8") as file:
                return file.read()
        except OSError:
            return None


async def _shared_zygote(
    entry: _SharedEntry, owner: int, command: WarmCommand, env: Mapping[str, str], cwd: str
) -> None:
    """Start the shared zygote unless a process has (or found it cannot be used)."""
    # Another process may hold the lock (for at most its zygote's READY_TIMEOUT_S): a file
    # lock has no event to wait on, so poll it.
    while not entry.try_lock():  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    try:
        if not entry.settled():
            zygote = _Zygote(command, env, cwd, socket_path=entry.socket, owner=owner)
            entry.write(".pid", str(zygote.popen.pid))
            problem = await zygote.ready()
            if problem is not None:
                entry.write(".broken", problem)
            zygote.forget()
    finally:
        entry.unlock()


class WarmChild:
    """A child a zygote forked: the start, as far as the harness can tell, of ``argv``."""

    def __init__(self, pid: int, connection: socket.socket) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.stdout = asyncio.StreamReader()
        self.stderr = asyncio.StreamReader()
        self._connection = connection
        self._exited = asyncio.Event()
        self._watch: asyncio.Task[None] | None = None

    async def _attach(self, out_r: int, err_r: int) -> None:
        loop = asyncio.get_running_loop()
        for fd, reader in ((out_r, self.stdout), (err_r, self.stderr)):
            pipe = os.fdopen(fd, "rb", buffering=0)
            await loop.connect_read_pipe(_protocol(reader), pipe)
        self._watch = asyncio.create_task(self._watch_exit())

    async def _watch_exit(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            message = await _receive(loop, self._connection, timeout=None)
            code = message.get("exit")
            self.returncode = int(code) if isinstance(code, int) else -signal.SIGKILL
        except (OSError, ValueError, EOFError):
            # The zygote is gone, and with it the only one that could learn how the child
            # ended: end the child too rather than leave a process nobody watches.
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            self.returncode = -signal.SIGKILL
        finally:
            self._connection.close()
            self._exited.set()

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode


def _protocol(reader: asyncio.StreamReader) -> Callable[[], asyncio.StreamReaderProtocol]:
    return lambda: asyncio.StreamReaderProtocol(reader)


async def _receive(
    loop: asyncio.AbstractEventLoop, sock: socket.socket, timeout: float | None
) -> dict[str, object]:
    async def read(count: int) -> bytes:
        data = b""
        while len(data) < count:
            more = await loop.sock_recv(sock, count - len(data))
            if not more:
                raise EOFError("the zygote closed the connection")
            data += more
        return data

    async def message() -> dict[str, object]:
        length = decode_length(await read(HEADER.size))
        value = json.loads(await read(length))
        if not isinstance(value, dict):
            raise ValueError("the zygote's answer is not a JSON object")
        return value

    return await asyncio.wait_for(message(), timeout)


def _folder(cwd: str | None) -> str:
    return os.path.realpath(cwd if cwd is not None else os.getcwd())


def _key(command: WarmCommand, env: Mapping[str, str], cwd: str) -> _Key:
    shaping = tuple(sorted(interpreter_env(env).items()))
    return (command.python, command.module, command.preload, cwd, shaping)


async def start_warm(
    argv: Sequence[str], env: Mapping[str, str], cwd: str | None, preload: Sequence[str] = ()
) -> WarmChild | str:
    """Start ``argv`` as a child of a zygote (which imported ``preload`` too), or say why it
    must be started cold."""
    if os.environ.get(SWITCH, "1") == "0":
        return f"warm starts are off ({SWITCH}=0)"
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"):
        return "warm starts need Linux"
    command = warm_command(argv, preload)
    if command is None:
        return "the command is not [python, -m, MODULE, ...]"
    where = _folder(cwd)
    key = _key(command, env, where)
    shared = _shared()
    if shared is not None:
        folder, owner = shared
        entry = _SharedEntry(folder, key)
        await _shared_zygote(entry, owner, command, env, where)
        problem = entry.broken()
        if problem is not None:
            return problem
        return await _fork(entry.socket, command, env, where)
    with _LOCK:
        zygote = _POOL.get(key)
        if zygote is None or (zygote.broken is None and zygote.gone()):
            if zygote is not None:
                zygote.close()
            try:
                zygote = _POOL[key] = _Zygote(command, env, where)
            except OSError as exc:
                return f"its zygote could not start: {exc.strerror or exc}"
    problem = await zygote.ready()
    if problem is not None:
        return problem
    return await _fork(zygote.socket, command, env, where)


async def _fork(
    path: str, command: WarmCommand, env: Mapping[str, str], cwd: str
) -> WarmChild | str:
    loop = asyncio.get_running_loop()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    devnull = os.open(os.devnull, os.O_RDONLY)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    request = encode(
        {
            "python": command.python,
            "module": command.module,
            "preload": list(command.preload),
            "args": list(command.args),
            "cwd": cwd,
            "env": dict(env),
        }
    )
    try:
        sock.settimeout(_REPLY_TIMEOUT_S)
        sock.connect(path)
        socket.send_fds(sock, [request[:4096]], [devnull, out_w, err_w])
        if len(request) > 4096:
            sock.sendall(request[4096:])
        sock.setblocking(False)
        reply = await _receive(loop, sock, _REPLY_TIMEOUT_S)
    except (OSError, ValueError, EOFError, TimeoutError) as exc:
        sock.close()
        os.close(out_r)
        os.close(err_r)
        return f"its zygote did not answer: {exc}"
    finally:
        for fd in (devnull, out_w, err_w):
            os.close(fd)
    pid = reply.get("pid")
    if not isinstance(pid, int):
        sock.close()
        os.close(out_r)
        os.close(err_r)
        return f"its zygote refused: {reply.get('refused', reply)}"
    child = WarmChild(pid, sock)
    await child._attach(out_r, err_r)
    return child
