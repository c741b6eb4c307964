"""The reference A2A client: the seed's streaming recipe on the real a2a-sdk 1.3 client.

Seed ``001_a4aab3267c38e4f0`` ("A2A Client Streaming Recipe") builds a Java client around a
per-call ``StreamCall``; this module is that recipe in Python, on ``a2a.client`` (which reads the
agent card and speaks A2A 0.3 or 1.0 accordingly). It is the client every ``A2A-C-…`` check
must pass (DESIGN.md: "Every check is proven twice"). The recipe's load-bearing choices:

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

Contract (DESIGN.md, "A2A client"): ``STREAMPROOF_A2A_URL``, ``STREAMPROOF_PROMPT``,
``STREAMPROOF_DEADLINE_S``, ``STREAMPROOF_IDLE_S`` and for a follow-up ``STREAMPROOF_TASK_ID``
and ``STREAMPROOF_CONTEXT_ID``; exactly one JSON result line, last on stdout; logs on stderr.

Run ``python -m harness.suites.a2a_client.reference.client [--bug NAME]``; ``--list-bugs`` prints
the mutants (``mutants.py``) with the requirement each must fail.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import (
    Artifact,
    CancelTaskRequest,
    GetTaskRequest,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)

from harness.bug_catalog import UnknownBugError
from harness.suites.a2a_client.reference.mutants import check_bug, describe_bugs

PROG: Final = "streamproof-client"
MAX_RECOVERIES: Final = 5
"""Recoveries in a row without a single event in between before the call fails."""
CANCEL_WAIT_S: Final = 2.0
CONNECT_TIMEOUT_S: Final = 10.0

log = logging.getLogger(PROG)

_STATUS: Final[Mapping[int, str]] = {
    TaskState.TASK_STATE_SUBMITTED: "submitted",
    TaskState.TASK_STATE_WORKING: "working",
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_UNSPECIFIED: "unknown",
    TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
    TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
}
"""Task states in the result's spelling (0.3's ``unknown`` is 1.0's UNSPECIFIED)."""
TERMINAL: Final = frozenset({"completed", "failed", "canceled", "rejected", "unknown"})
"""``TaskState.isFinal()``: the 0.3 spec's four, plus UNKNOWN as the seed's Java treats it."""
INTERRUPTED: Final = frozenset({"input-required", "auth-required"})


class ConfigError(Exception):
    """The environment does not fit the contract."""


@dataclass(frozen=True)
class Settings:
    url: str
    prompt: str
    deadline: float
    idle: float
    task_id: str | None = None
    context_id: str | None = None
    bug: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, bug: str | None = None) -> Settings:
        """Read the contract; ``bug`` (from ``--bug``) overrides ``STREAMPROOF_BUG``."""
        try:
            chosen = check_bug(bug if bug is not None else env.get("STREAMPROOF_BUG"))
        except UnknownBugError as exc:
            raise ConfigError(str(exc)) from None
        url = env.get("STREAMPROOF_A2A_URL", "").strip()
        if not url:
            raise ConfigError("STREAMPROOF_A2A_URL is not set (the agent's base URL)")
        durations: dict[str, float] = {}
        for name in ("STREAMPROOF_DEADLINE_S", "STREAMPROOF_IDLE_S"):
            raw = env.get(name, "")
            try:
                durations[name] = float(raw)
            except ValueError:
                raise ConfigError(f"{name} must be a number of seconds, not {raw!r}") from None
            if not durations[name] > 0:
                raise ConfigError(f"{name} must be positive, not {raw!r}")
        return cls(
            url=url,
            prompt=env.get("STREAMPROOF_PROMPT", ""),
            deadline=durations["STREAMPROOF_DEADLINE_S"],
            idle=durations["STREAMPROOF_IDLE_S"],
            task_id=env.get("STREAMPROOF_TASK_ID") or None,
            context_id=env.get("STREAMPROOF_CONTEXT_ID") or None,
            bug=chosen,
        )


def text(parts: Sequence[Part]) -> str:
    """The seed's ``text(parts)``: the text parts joined."""
    return "".join(p.text for p in parts if p.WhichOneof("content") == "text")


class StreamCall:
    """All state of one logical call (the seed's ``StreamCall``), and its recovery."""

    def __init__(self, client: Client, settings: Settings) -> None:
        self.client = client
        self.settings = settings
        self.bug = settings.bug
        loop = asyncio.get_running_loop()
        self.done: asyncio.Future[str] = loop.create_future()
        """Completes with the final status (``completed``, ``message``, ``error``...)."""
        self.completions = 0
        self.buffers: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.data: dict[str, Any] = {}
        resumed = settings.bug != "follow-up-new-task"
        self.given: tuple[str | None, str | None] = (
            (settings.task_id, settings.context_id) if resumed else (None, None)
        )
        """The ids the message carries: a follow-up continues the task that waits for it."""
        self.task_id, self.context_id = self.given
        self.last_state = "submitted"
        self.status_text: str | None = None
        self.reply: str | None = None
        self.error: str | None = None
        self.incomplete = False
        self.last_event = loop.time()
        self.fruitless = 0
        self.unverified = False
        """A resubscribe started without a Task snapshot: chunks may have fallen in between."""
        self.recovery: asyncio.Task[None] | None = None
        self.consumer: asyncio.Task[None] | None = None

    # --- events (the seed's onEvent) -----------------------------------------------------------

    def on_event(self, event: StreamResponse, source: str) -> None:
        self.last_event = asyncio.get_running_loop().time()
        self.fruitless = 0
        kind = event.WhichOneof("payload")
        if kind == "message":
            if self.bug == "ignores-message":
                return
            self.reply = text(event.message.parts)
            self.finish("message")
        elif kind == "task":
            self.on_task(event.task, source)
        elif kind == "artifact_update":
            self.remember(event.artifact_update.task_id, event.artifact_update.context_id)
            self.on_artifact(event.artifact_update)
        elif kind == "status_update":
            update = event.status_update
            self.remember(update.task_id, update.context_id)
            self.on_state(update.status)
            if self.bug == "finish-twice" and _STATUS.get(update.status.state) in TERMINAL:
                self.finish(self.last_state)  # the recipe's "if (s.isFinal()) finish()"

    def remember(self, task_id: str, context_id: str) -> None:
        """Capture the task id from the first event that carries one."""
        if task_id:
            self.task_id = task_id
        if context_id:
            self.context_id = context_id

    def on_task(self, task: Task, source: str) -> None:
        self.remember(task.id, task.context_id)
        if task.artifacts:
            if self.bug == "append-from-task-too":
                for art in task.artifacts:
                    self._put(art, append=True)
            elif source == "resubscribe" and self.bug not in ("gap-loss", "truncated-as-complete"):
                # A resubscribe's snapshot is as authoritative as tasks/get, and fresher.
                self.replace_from(task.artifacts)
        if source == "resubscribe":
            self.unverified = False
        self.on_state(task.status)

    def on_state(self, status: TaskStatus) -> None:
        state = _STATUS.get(status.state, "unknown")
        self.last_state = state
        message = text(status.message.parts) if status.HasField("message") else ""
        self.status_text = message or None  # the message of the state the call ends in
        log.info("task %s: %s%s", self.task_id, state, f" ({message})" if message else "")
        if state in TERMINAL:
            self.finish(state)
        elif state in INTERRUPTED and self.bug != "ignores-input-required":
            self.finish(state)

    def on_artifact(self, update: TaskArtifactUpdateEvent) -> None:
        art = update.artifact
        self._put(art, append=update.append)
        aid = art.artifact_id
        structured = self.names.get(aid, "").endswith(".json")
        if structured and self.bug == "parse-per-chunk":
            try:
                self.data[aid] = json.loads(self.buffers[aid])
            except ValueError as exc:
                self.fail(f"artifact {aid!r} is not valid JSON: {exc}")
                return
        if update.last_chunk:
            log.info("artifact %s (%s) ready", aid, self.names.get(aid, ""))
            if structured:
                self.parse(aid)

    def _put(self, art: Artifact, *, append: bool) -> None:
        chunk = text(art.parts)
        if art.name:
            self.names[art.artifact_id] = art.name
        if append:
            self.buffers[art.artifact_id] = self.buffers.get(art.artifact_id, "") + chunk
        else:
            self.buffers[art.artifact_id] = chunk

    def replace_from(self, artifacts: Sequence[Artifact]) -> None:
        """The snapshot is authoritative after a gap: the buffers become its artifacts."""
        self.buffers.clear()
        for art in artifacts:
            self._put(art, append=False)
            if self.names.get(art.artifact_id, "").endswith(".json"):
                self.parse(art.artifact_id)

    def parse(self, aid: str) -> None:
        try:
            self.data[aid] = json.loads(self.buffers.get(aid, ""))
        except ValueError as exc:
            self.data.pop(aid, None)
            log.warning("artifact %s is not valid JSON once whole: %s", aid, exc)

    # --- completion ----------------------------------------------------------------------------

    def finish(self, status: str) -> None:
        """Complete the call; idempotent, as ``CompletableFuture.complete`` is."""
        if self.bug == "finish-twice":
            self.completions += 1
        if not self.done.done():
            self.done.set_result(status)

    def fail(self, reason: str) -> None:
        log.warning("call failed: %s", reason)
        if not self.done.done():
            self.error = reason
            self.done.set_result("error")

    def result(self, status: str) -> dict[str, Any]:
        if self.bug == "rejected-as-success" and status in ("rejected", "unknown"):
            status = "completed"
        if self.bug == "failed-as-completed" and status in ("failed", "canceled"):
            status = "completed"
        message = self.reply if status == "message" else self.error or self.status_text
        artifacts = []
        for aid, body in self.buffers.items():
            item: dict[str, Any] = {"id": aid, "name": self.names.get(aid), "text": body}
            if aid in self.data:
                item["data"] = self.data[aid]
            artifacts.append(item)
        return {
            "status": status,
            "taskId": self.task_id,
            "contextId": self.context_id,
            "artifacts": artifacts,
            "message": message,
            "incomplete": self.incomplete,
        }

    # --- streams -------------------------------------------------------------------------------

    def start(self) -> None:
        """Send the call's message (the original one: a resend, by a mutant, is the same)."""
        task_id, context_id = self.given
        message = new_text_message(
            self.settings.prompt, role=Role.ROLE_USER, task_id=task_id, context_id=context_id
        )
        self._consume(self.client.send_message(SendMessageRequest(message=message)), "message")

    def _consume(self, stream: AsyncIterator[StreamResponse], source: str) -> None:
        self.consumer = asyncio.create_task(self._pump(stream, source))

    async def _pump(self, stream: AsyncIterator[StreamResponse], source: str) -> None:
        try:
            async for event in stream:
                self.on_event(event, source)
                if self.done.done():
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a loud drop: connection reset, HTTP error, error frame
            self.dropped(f"{type(exc).__name__}: {exc}")
            return
        finally:
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                with contextlib.suppress(Exception):
                    await closing()
        if not self.done.done():
            self.dropped("the stream ended before the task did")

    async def stop_consumer(self) -> None:
        consumer, self.consumer = self.consumer, None
        if consumer is not None and consumer is not asyncio.current_task():
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await consumer

    # --- recovery ------------------------------------------------------------------------------

    def dropped(self, why: str) -> None:
        """Both kinds of drop end here (the seed's ``onError`` and its watchdog)."""
        if self.done.done() or (self.recovery is not None and not self.recovery.done()):
            return
        if self.bug == "hang-on-early-drop" and self.task_id is None:
            return  # no task id to recover by, and the call is not failed: it waits
        log.warning("stream dropped: %s", why)
        self.recovery = asyncio.create_task(self.recover(why))

    async def watchdog(self) -> None:
        every = max(min(self.settings.idle / 10, 1.0), 0.01)
        loop = asyncio.get_running_loop()
        while not self.done.done():
            await asyncio.sleep(every)
            quiet = loop.time() - self.last_event
            if quiet > self.settings.idle and (self.recovery is None or self.recovery.done()):
                self.dropped(f"no event for {quiet:.2f}s (idle limit {self.settings.idle:g}s)")

    async def recover(self, why: str) -> None:
        await self.stop_consumer()
        while not self.done.done():
            if self.task_id is None and self.bug != "resend-on-drop":
                self.fail(
                    f"the stream dropped before the first event ({why}); not resending the "
                    "message, which could start a second task"
                )
                return
            self.fruitless += 1
            if self.fruitless > MAX_RECOVERIES:
                self.fail(f"gave up after {MAX_RECOVERIES} recoveries without an event ({why})")
                return
            if self.fruitless > 1:  # bounded backoff between fruitless attempts
                base = max(self.settings.idle / 20, 0.05)
                await asyncio.sleep(min(base * 2 ** (self.fruitless - 2), self.settings.idle))
            try:
                if self.bug == "resend-on-drop":
                    self.start()
                else:
                    await self.snapshot_then_resubscribe()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                why = f"{type(exc).__name__}: {exc}"
                log.warning("recovery attempt %d failed: %s", self.fruitless, why)

    async def snapshot_then_resubscribe(self) -> None:
        assert self.task_id is not None
        task_id = self.task_id
        if self.bug != "resubscribe-without-snapshot":
            snap = await self.client.get_task(GetTaskRequest(id=task_id))
            if self.bug != "truncated-as-complete":
                if snap.artifacts:
                    self.replace_from(snap.artifacts)
                elif self.buffers and self.bug != "snapshot-without-artifacts-ignored":
                    self.incomplete = True  # gap chunks are not replayed
            if self.bug == "resubscribe-after-terminal":
                with contextlib.suppress(Exception):  # the server refuses: the task is done
                    async for _event in self.client.subscribe(SubscribeToTaskRequest(id=task_id)):
                        break
            self.on_state(snap.status)  # may already be final
            if self.done.done():
                return
        self.resubscribe(task_id)

    def resubscribe(self, task_id: str) -> None:
        log.info("resubscribing to task %s", task_id)
        self.last_event = asyncio.get_running_loop().time()  # a fresh idle window
        self.unverified = True
        self._consume(self.client.subscribe(SubscribeToTaskRequest(id=task_id)), "resubscribe")

    async def verify(self) -> None:
        """A task that completed after a resubscribe without a snapshot: take the final
        artifacts from the task itself (the chunks of the gap were never streamed to us)."""
        if self.task_id is None:
            return
        try:
            snap = await self.client.get_task(GetTaskRequest(id=self.task_id))
        except Exception as exc:
            log.warning("could not verify the artifacts: %s", exc)
            self.incomplete = True
            return
        if snap.artifacts:
            self.replace_from(snap.artifacts)

    async def cancel_quietly(self) -> None:
        """``cancelTask`` on deadline; the server may refuse, log it either way."""
        if self.task_id is None:
            return
        try:
            wait = min(CANCEL_WAIT_S, max(self.settings.idle / 2, 0.25))  # the result is due
            task = await asyncio.wait_for(
                self.client.cancel_task(CancelTaskRequest(id=self.task_id)), wait
            )
            log.info("cancel: task %s is %s", self.task_id, _STATUS.get(task.status.state))
        except Exception as exc:
            log.info("cancel: task %s not cancelled: %s", self.task_id, exc)

    async def close(self) -> None:
        await self.stop_consumer()
        recovery, self.recovery = self.recovery, None
        if recovery is not None and not recovery.done():
            recovery.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await recovery


async def call(settings: Settings) -> list[dict[str, Any]]:
    """One logical call; the result lines to print (one, unless a mutant says otherwise)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    hooks: dict[str, list[Any]] = {}
    if settings.bug == "no-sse-accept":
        hooks["request"] = [_json_accept]
    timeout = httpx.Timeout(CONNECT_TIMEOUT_S, read=None)  # quiet drops: the watchdog's job
    async with httpx.AsyncClient(timeout=timeout, event_hooks=hooks) as http:
        try:
            card = await A2ACardResolver(http, settings.url).get_agent_card()
        except Exception as exc:
            return [_error(f"cannot read the agent card: {type(exc).__name__}: {exc}")]
        versions = sorted({i.protocol_version for i in card.supported_interfaces})
        log.info(
            "agent %s streaming=%s protocol=%s",
            card.name,
            card.capabilities.streaming,
            ",".join(versions),
        )
        config = ClientConfig(
            streaming=True,
            httpx_client=http,
            accepted_output_modes=["text/plain", "application/json"],
        )
        client = await create_client(card, client_config=config)
        stream_call = StreamCall(client, settings)
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


async def _json_accept(request: httpx.Request) -> None:
    if "text/event-stream" in request.headers.get("Accept", ""):
        request.headers["Accept"] = "application/json"


def _error(reason: str) -> dict[str, Any]:
    log.warning("call failed: %s", reason)
    return {
        "status": "error",
        "taskId": None,
        "contextId": None,
        "artifacts": [],
        "message": reason,
        "incomplete": False,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.suites.a2a_client.reference.client",
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
    sys.exit(main())
