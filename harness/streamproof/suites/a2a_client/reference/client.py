"""The reference A2A client: the seed's streaming recipe on the real a2a-sdk 1.3 client.

``docs/explanation/a2a-client-rules.md`` ("A2A Client Streaming Recipe") builds a Java client
around a
per-call ``StreamCall``; this module is that recipe in Python, on ``a2a.client`` (which reads the
agent card and speaks A2A 0.3 or 1.0 accordingly). It is the client every ``A2A-C-…`` check
must pass (docs/explanation/mutants.md: every check is proven twice). The recipe's load-bearing
choices:

* per-call state in one object (:class:`StreamCall`): the artifact buffers keyed by artifact
  id, the task and context ids captured from the first event that carries them, the last
  state, the time of the last event, an ``incomplete`` flag;
* artifacts reassembled from the updates only: ``append`` extends, otherwise replace, and the
  last chunk marks an artifact ready (a ``.json`` artifact is parsed then, never per chunk);
* the call completes, once, on a direct Message, a terminal state (UNKNOWN included) or
  INPUT_REQUIRED / AUTH_REQUIRED; REJECTED and UNKNOWN are failures in the result;
* a deadline: ``tasks/cancel``, then a timeout result;
* one recovery for loud drops (an error, the stream ending early) and quiet ones (an idle
  watchdog that checks every tenth of the idle limit): no task id yet -> fail, never resend;
  otherwise a ``tasks/get`` snapshot replaces the buffers (or marks them incomplete), ends the
  call if the task is done, else ``tasks/resubscribe``; failed attempts back off, bounded.

Two things go beyond the recipe, for the SHOULD ``A2A-C-GAP`` (chunks streamed between the
snapshot and the resubscribe): a resubscribe that starts with a Task snapshot (a2a-sdk 1.x
servers) replaces the buffers from it, as the recipe does with its own snapshot; and a task
that completes after a resubscribe that started without one (0.3.x servers) is checked once
more with ``tasks/get`` before the result is given.

Contract (docs/reference/a2a-client-contract.md): ``STREAMPROOF_A2A_URL``,
``STREAMPROOF_A2A_BINDING`` (``jsonrpc`` or ``rest``: the transport it asks a2a-sdk for),
``STREAMPROOF_PROMPT``,
``STREAMPROOF_DEADLINE_S``, ``STREAMPROOF_IDLE_S`` and for a follow-up ``STREAMPROOF_TASK_ID``
and ``STREAMPROOF_CONTEXT_ID``; exactly one JSON result line, last on stdout; logs on stderr.

The call's state and event handling are in ``call.py``, its streams and recovery in
``recovery.py``; this module reads the contract, drives one call and prints its result.

Run ``python -m streamproof.suites.a2a_client.reference.client [--bug NAME]``; ``--list-bugs``
prints the mutants (``mutants.py``) with the requirement each must fail.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

if __name__ == "__main__":
    # Started once per turn, so its start counts (docs/explanation/performance.md): httpx imports
    # its own
    # command line (click, rich, pygments: about 60 ms) whenever those are installed, and
    # this program never runs it. A missing module makes httpx define a stub instead.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest, TaskPushNotificationConfig

from streamproof.runtime.imports import import_early
from streamproof.suites.a2a_client.reference.call import (
    CALL_LOCK_FILE,
    CURRENT_TASK_FILE,
    OUTBOX_FILE,
    PROG,
    log,
)
from streamproof.suites.a2a_client.reference.mutants import describe_bugs
from streamproof.suites.a2a_client.reference.push import push_call
from streamproof.suites.a2a_client.reference.recovery import RecoveringCall
from streamproof.suites.a2a_client.reference.settings import ConfigError, Settings

FIRST_CALL_IMPORTS: Final = (
    "a2a.compat.v0_3.jsonrpc_transport",
    "a2a.compat.v0_3.rest_transport",
    "httpcore",
    "anyio._backends._asyncio",
    "anyio._core._synchronization",
    "_strptime",
)
"""What a2a-sdk 1.3, httpx and the standard library import lazily during a call: about 0.1
CPU-seconds of every turn, imported once in a warm start's zygote instead."""
import_early(FIRST_CALL_IMPORTS)

CONNECT_TIMEOUT_S: Final = 10.0


async def call(settings: Settings) -> list[dict[str, Any]]:
    """One logical call; the result lines to print (one, unless a mutant says otherwise)."""
    loop = asyncio.get_running_loop()
    hooks: dict[str, list[Any]] = {}
    if settings.bug == "no-sse-accept":
        hooks["request"] = [_json_accept]
    timeout = httpx.Timeout(CONNECT_TIMEOUT_S, read=None)  # quiet drops: the watchdog's job
    async with httpx.AsyncClient(timeout=timeout, event_hooks=hooks) as http:
        # Time limits count from the first request (the contract), not from building the
        # HTTP client (its TLS context alone takes a noticeable part of a second under load).
        started = loop.time()
        # The deadline bounds the whole call, the card's fetch included: a card request that
        # stalls (no read timeout: quiet drops are the watchdog's job) must not outlive it.
        card_wait: float | None = settings.deadline
        if settings.bug == "ignores-deadline":
            card_wait = None  # no deadline anywhere, the card's fetch included
        try:
            card = await asyncio.wait_for(
                A2ACardResolver(http, settings.url).get_agent_card(), card_wait
            )
        except TimeoutError:
            reason = f"no agent card within the {settings.deadline:g}s deadline"
            log.warning("call failed: %s", reason)
            return [_result("timeout", reason)]
        except Exception as exc:
            return [_error(f"cannot read the agent card: {type(exc).__name__}: {exc}")]
        if settings.bug == "one-call-at-a-time":
            # A blocking lock in the event loop's thread: nothing of this call runs, its
            # deadline included, until the call holding it has exited.
            lock = os.open(CALL_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when this process exits
            started = loop.time()  # and its clock starts when its turn comes
        versions = sorted({i.protocol_version for i in card.supported_interfaces})
        log.info(
            "agent %s streaming=%s protocol=%s",
            card.name,
            card.capabilities.streaming,
            ",".join(versions),
        )
        # The binding the contract names, never the card's first interface that the SDK
        # happens to support (docs/reference/a2a-client-contract.md#bindings).
        if settings.push:

            async def make_client(url: str, token: str) -> Client:
                webhook = TaskPushNotificationConfig(url=url, token=token)
                config = ClientConfig(
                    streaming=False,
                    supported_protocol_bindings=[settings.protocol_binding],
                    polling=True,  # returnImmediately: the updates come to the webhook
                    httpx_client=http,
                    accepted_output_modes=["text/plain", "application/json"],
                    push_notification_config=webhook,
                )
                return await create_client(card, client_config=config)

            return [await push_call(make_client, settings, started)]
        config = ClientConfig(
            streaming=True,
            supported_protocol_bindings=[settings.protocol_binding],
            httpx_client=http,
            accepted_output_modes=["text/plain", "application/json"],
        )
        client = await create_client(card, client_config=config)
        if settings.bug == "shared-outbox":
            await _send_pending(client, settings.prompt)
        stream_call = RecoveringCall(client, settings)
        watchdog: asyncio.Task[None] | None = None
        try:
            stream_call.start()
            if settings.bug != "no-watchdog":
                watchdog = asyncio.create_task(stream_call.watchdog())
            remaining: float | None = settings.deadline - (loop.time() - started)
            if settings.bug == "ignores-deadline":
                remaining = None  # the seed's done.get(deadline) as a bare done.get()
            try:
                status = await asyncio.wait_for(asyncio.shield(stream_call.done), remaining)
            except TimeoutError:
                await stream_call.close()
                if settings.bug != "no-cancel-on-deadline":
                    await stream_call.cancel_quietly()
                stream_call.incomplete = True
                stream_call.error = f"no result within the {settings.deadline:g}s deadline"
                return [stream_call.result("timeout")]
            await stream_call.close()
            if settings.bug == "shared-task-file" and stream_call.task_id is not None:
                # The mutant's result is the machine's "current task" (whichever call wrote
                # it last), its final snapshot read with tasks/get.
                current = _current_task()
                if current and current != stream_call.task_id:
                    stream_call.task_id = current
                    await stream_call.verify()
            if (
                status == "completed"
                and stream_call.unverified
                and settings.bug not in ("gap-loss", "truncated-as-complete")
            ):
                await stream_call.verify()
            result = stream_call.result(status)
            return [result] * max(stream_call.completions, 1)
        finally:
            if watchdog is not None:
                watchdog.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watchdog
            await stream_call.close()
            with contextlib.suppress(Exception):
                await client.close()
            if settings.bug == "shared-outbox" and _read(OUTBOX_FILE) == settings.prompt:
                OUTBOX_FILE.unlink(missing_ok=True)  # delivered: nothing pending any more


def _read(file: Path) -> str | None:
    try:
        return file.read_text().strip() or None
    except OSError:
        return None


def _current_task() -> str | None:
    return _read(CURRENT_TASK_FILE)


async def _send_pending(client: Client, prompt: str) -> None:
    """The ``shared-outbox`` mutant: a message still pending in the machine's outbox (a call
    that "never finished") is sent again before this call's own, which takes its place there."""
    pending = _read(OUTBOX_FILE)
    OUTBOX_FILE.write_text(prompt)
    if pending is None or pending == prompt:
        return
    log.info("sending a pending message from the outbox again")
    message = new_text_message(pending, role=Role.ROLE_USER)
    stream = client.send_message(SendMessageRequest(message=message))
    with contextlib.suppress(Exception):
        async for _event in stream:
            break  # sent: the agent has its task
    with contextlib.suppress(Exception):
        await stream.aclose()  # type: ignore[attr-defined]


async def _json_accept(request: httpx.Request) -> None:
    if "text/event-stream" in request.headers.get("Accept", ""):
        request.headers["Accept"] = "application/json"


def _error(reason: str) -> dict[str, Any]:
    log.warning("call failed: %s", reason)
    return _result("error", reason)


def _result(status: str, reason: str) -> dict[str, Any]:
    """A result for a call that never reached a task (no ids, no artifacts)."""
    return {
        "status": status,
        "taskId": None,
        "contextId": None,
        "artifacts": [],
        "message": reason,
        "incomplete": False,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.suites.a2a_client.reference.client",
        description="streamproof's reference A2A client: the seed's recipe on a2a-sdk 1.3.",
    )
    parser.add_argument("--bug", metavar="NAME", help="run a mutant (see --list-bugs)")
    parser.add_argument("--list-bugs", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    if args.list_bugs:
        print(describe_bugs())
        return 0
    try:
        settings = Settings.from_env(os.environ, bug=args.bug)
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    log.setLevel(logging.INFO)
    try:
        lines = asyncio.run(call(settings))
    except Exception as exc:  # never a traceback instead of the result line
        lines = [_error(f"{type(exc).__name__}: {exc}")]
    for line in lines:
        print(json.dumps(line, ensure_ascii=False), flush=True)
    if settings.bug == "log-after-result":
        print(f"{PROG}: INFO client closed", flush=True)  # a log line on stdout, last
    return 0


if __name__ == "__main__":
    # Exit at once, the result line flushed (as the Java reference halts): the interpreter's
    # orderly teardown of a2a-sdk's modules took 0.8 s after the result on a loaded machine,
    # time the harness's bound on the process counts.
    from streamproof.runtime.process_exit import exit_now

    exit_now(main())
