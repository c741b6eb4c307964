"""The reference gateway: the seed's typed SSE protocol in front of a real google-adk ``Runner``.

``docs/explanation/gateway-rules.md`` ("A gateway: Event to Server-Sent Events") gives a Spring
``ChatStreamController`` that turns ADK events into typed frames (``delta``, ``message``,
``tool_call``, ``tool_result``, ``error``, ``done``). This module and its parts (below) are that
controller translated to Python ADK 2.13 and aiohttp, and they are the implementation every
streamproof check must pass (docs/explanation/mutants.md: every check is proven twice). The seed's
four
load-bearing choices are kept:

* frames are typed by event kind (:func:`event_frames`, a pure function, is the seed's ``send``);
* tool results are summarised as a count, never forwarded ("Leaking tool payloads");
* the run is cancelled when the client goes away, on timeout and when a write fails
  ("Orphaned runs"): aiohttp's ``handler_cancellation`` cancels the handler on disconnect, and the
  ADK async generator is always closed with ``aclosing`` so ADK closes its model stream;
* the SSE ``id`` is the gateway's own counter, one fresh number per frame, because nothing in the
  event contract promises ids suited to ``Last-Event-ID``.

Two Python-specific points (measured, see docs/explanation/wire-facts/adk-gemini.md, key fact 7): a
model error arrives as an event
with ``error_code`` *and then* ``run_async`` raises, so such a run ends with two ``error`` frames,
exactly what the seed's controller (``send`` then ``onError``) would send. And ADK 2.13 stores the
aggregate, never the partials, so ``/history`` is the record the client reloads from.

Run ``python -m streamproof.suites.gateway.reference.server [--bug NAME] [--wire WIRE]
[--on-disconnect dispose|detach]``; the environment contract is in :class:`Settings`.
``--list-bugs`` prints the mutants of that wire and policy (see ``mutants.py``). ``--wire
ag-ui`` and ``--wire ai-sdk-ui`` serve the same runs as AG-UI events (``ag_ui.py``) or the AI SDK
UI message stream (``ai_sdk.py``); ``--on-disconnect detach`` lets a run whose browser went
away finish within its bound instead of disposing it.

The code is in these modules: ``frames`` (the typed-frame mapping and the frame writer),
``ag_ui`` and ``ai_sdk`` (the other wires), ``stream`` (what the wires share), ``app`` (the
aiohttp endpoints, bearer auth, a turn's run and history), ``config`` (:class:`Settings`) and
this one (the process: :func:`serve` and :func:`main`). Their public names are importable from
here.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Final

from aiohttp import web

from streamproof.runtime.process_exit import exit_now
from streamproof.suites.gateway.reference.agent import build_runner
from streamproof.suites.gateway.reference.app import Gateway
from streamproof.suites.gateway.reference.config import ConfigError, Settings, parse_tokens
from streamproof.suites.gateway.reference.frames import (
    Frame,
    FrameWriter,
    encode_frame,
    event_frames,
    event_text,
)
from streamproof.suites.gateway.reference.mutants import WIRES, describe_bugs

__all__ = [
    "ConfigError",
    "Frame",
    "FrameWriter",
    "Gateway",
    "Settings",
    "encode_frame",
    "event_frames",
    "event_text",
    "main",
    "parse_tokens",
    "serve",
]

PROG: Final = "streamproof-gateway"
LISTEN_HOST: Final = "127.0.0.1"
SHUTDOWN_GRACE_S: Final = 2.0
PROXY_VARIABLES: Final = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
"""The forward proxy the model client honours (google-genai's aiohttp session reads them)."""


async def serve(settings: Settings, *, on_listening: Callable[[int], None]) -> None:
    """Run until SIGTERM/SIGINT. ``on_listening(port)`` is called once the socket is bound."""
    tmpdir: str | None = None
    db_path = settings.db_path
    if db_path is None:
        tmpdir = tempfile.mkdtemp(prefix="streamproof-gateway-")
        db_path = os.path.join(tmpdir, "sessions.db")
    try:
        runner, sessions = build_runner(
            tool_url=settings.tool_url,
            db_path=db_path,
            store_partials=settings.bug == "persist-partials",
        )
        gateway = Gateway(settings, runner, sessions)
        app_runner = web.AppRunner(
            gateway.make_app(),
            # A client disconnect cancels the handler, hence the run, even when nothing is being
            # written (the mutant notices a disconnect only when its next write fails).
            handler_cancellation=settings.bug != "dispose-on-write-only",
            shutdown_timeout=SHUTDOWN_GRACE_S,
            access_log=None,
        )
        await app_runner.setup()
        try:
            site = web.TCPSite(app_runner, LISTEN_HOST, settings.port)
            try:
                await site.start()
            except OSError as exc:
                raise ConfigError(
                    f"cannot listen on {LISTEN_HOST}:{settings.port}: {exc.strerror or exc}"
                ) from None
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, stop.set)
            on_listening(app_runner.addresses[0][1])
            await stop.wait()
            gateway.stop_streams()
        finally:
            await app_runner.cleanup()
            await gateway.close(SHUTDOWN_GRACE_S)
            await runner.close()
            await sessions.close()
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


class _OneLineFormatter(logging.Formatter):
    """One line per log record. ADK 2.13 logs a full traceback (twice) for every failed model
    call; the gateway's stderr gets the exception's type and message instead."""

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        plain = logging.makeLogRecord(record.__dict__)
        plain.exc_info = plain.exc_text = plain.stack_info = None
        line = super().format(plain)
        if exc is not None:
            line += f" ({type(exc).__name__}: {exc})"
        return line.replace("\n", " ")


def _announce(port: int) -> None:
    print(f"{PROG} listening on http://{LISTEN_HOST}:{port}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.suites.gateway.reference.server",
        description="streamproof's reference SSE gateway on a real google-adk Runner.",
    )
    parser.add_argument("--bug", metavar="NAME", help="run a mutant (see --list-bugs)")
    parser.add_argument(
        "--list-bugs", action="store_true", help="list the mutants of this wire and policy, exit"
    )
    parser.add_argument(
        "--wire",
        choices=WIRES,
        default="typed-frames",
        help="what the chat endpoint speaks: the seed's typed frames (POST /chat/{sessionId}), "
        "AG-UI (POST /ag-ui) or the AI SDK UI message stream (POST /api/chat)",
    )
    parser.add_argument(
        "--on-disconnect",
        choices=("dispose", "detach"),
        default="dispose",
        help="when the browser goes away: dispose the run (the seed's rule) or let it finish "
        "within its bound (detach)",
    )
    args = parser.parse_args(argv)
    if args.list_bugs:
        print(describe_bugs(args.wire, args.on_disconnect))
        return 0
    try:
        settings = Settings.from_env(
            os.environ, bug=args.bug, wire=args.wire, on_disconnect=args.on_disconnect
        )
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    if settings.bug == "ignore-proxy":
        # Mutant: the proxy variables are dropped before the model client reads them, so every
        # model call goes straight to GOOGLE_GEMINI_BASE_URL, past the corporate proxy.
        for name in PROXY_VARIABLES:
            os.environ.pop(name, None)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter(f"{PROG}: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    try:
        asyncio.run(serve(settings, on_listening=_announce))
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    # serve() has closed the sockets, the runner and the session store: what the teardown
    # would add is freeing google-genai's pydantic schemas, 0.5 s of CPU a gateway (27
    # gateways stopped at once on two cores missed a 10 s SIGTERM bound).
    exit_now(main())
