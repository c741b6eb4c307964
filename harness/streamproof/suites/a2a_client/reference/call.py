"""One call's state and the recipe's event handling: the seed's ``StreamCall``.

Its buffers (keyed by artifact id, reassembled from the updates only: ``append`` extends,
otherwise replace; a ``.json`` artifact parsed once its last chunk is in), the ids captured from
the first event that carries them, the last state, and the seed's ``onEvent`` / ``onArtifact`` /
``onState`` / ``finish``; the result line is made from them. The call's streams and their
recovery are :mod:`~streamproof.suites.a2a_client.reference.recovery`'s; the process,
:mod:`~streamproof.suites.a2a_client.reference.client`'s.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from a2a.client import Client
from a2a.types import (
    Artifact,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)

if TYPE_CHECKING:
    from streamproof.suites.a2a_client.reference.settings import Settings

PROG: Final = "streamproof-client"
"""The client's name: its logger's, and its log lines' prefix."""
log = logging.getLogger(PROG)

CURRENT_TASK_FILE: Final = Path(tempfile.gettempdir()) / f"streamproof-client-{os.getuid()}.task"
"""The ``shared-task-file`` mutant's "current task", one per machine user, not per call."""
OUTBOX_FILE: Final = Path(tempfile.gettempdir()) / f"streamproof-client-{os.getuid()}.outbox"
"""The ``shared-outbox`` mutant's pending message, one per machine user, not per call."""
CALL_LOCK_FILE: Final = Path(tempfile.gettempdir()) / f"streamproof-client-{os.getuid()}.lock"
"""The ``one-call-at-a-time`` mutant's machine-wide lock."""

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


def text(parts: Sequence[Part]) -> str:
    """The seed's ``text(parts)``: the text parts joined."""
    return "".join(p.text for p in parts if p.WhichOneof("content") == "text")


class StreamCall:
    """All state of one logical call (the seed's ``StreamCall``); its streams and recovery are
    :class:`~streamproof.suites.a2a_client.reference.recovery.RecoveringCall`'s."""

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
            if self.bug == "shared-task-file" and task_id != self.task_id:
                CURRENT_TASK_FILE.write_text(task_id)  # one "current task" per machine
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
