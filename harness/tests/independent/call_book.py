"""The per-call state of the independent REST client: ids, last state, artifact buffers, the
gap flag and the one outcome. No I/O: every input is an already-parsed A2A 1.0 object.

Rules it keeps (docs/explanation/a2a-client-rules.md): ids from the first object carrying them;
artifacts from update events (append extends, otherwise replace), or replaced whole from a
task snapshot; a snapshot without artifacts while chunks are buffered marks a gap; the outcome
is settled once; structured output is parsed only after the last chunk.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from harness.tests.independent.rest_wire import (
    INTERRUPTED,
    TERMINAL,
    ends_the_call,
    ids_of,
    parts_data,
    parts_json_typed,
    parts_text,
    status_of,
)

SUCCESS = frozenset({"completed", "message"})


@dataclass
class Piece:
    """One artifact as assembled so far."""

    name: str = ""
    text: str = ""
    data: list[Any] = field(default_factory=list)
    json_hint: bool = False
    closed: bool = False

    def structured(self) -> Any:
        """The artifact's structured value, read once the last chunk is in (never per chunk)."""
        if self.data:
            return self.data[0] if len(self.data) == 1 else list(self.data)
        if not self.closed:
            return None
        looks_json = self.text.lstrip()[:1] in ("{", "[")
        if not (self.json_hint or self.name.lower().endswith(".json") or looks_json):
            return None
        try:
            return json.loads(self.text)
        except ValueError:
            return None


@dataclass
class Outcome:
    status: str
    message: str = ""


class CallBook:
    """Everything one logical call knows. ``settle`` takes the first outcome only."""

    def __init__(self, task_id: str | None = None, context_id: str | None = None) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.state = "submitted"
        self.state_text = ""
        self.pieces: dict[str, Piece] = {}
        self.gap = False
        self.outcome: Outcome | None = None
        self.last_heard = time.monotonic()
        self.events = 0

    # --- bookkeeping -----------------------------------------------------------------------

    @property
    def settled(self) -> bool:
        return self.outcome is not None

    def settle(self, status: str, message: str = "") -> bool:
        if self.outcome is not None:
            return False
        self.outcome = Outcome(status, message)
        return True

    def hear(self) -> None:
        self.last_heard = time.monotonic()

    def silent_for(self) -> float:
        return time.monotonic() - self.last_heard

    def _learn_ids(self, task_id: str | None, context_id: str | None) -> None:
        if self.task_id is None and task_id:
            self.task_id = task_id
        if self.context_id is None and context_id:
            self.context_id = context_id

    def belongs(self, task_id: str | None) -> bool:
        """An object about another task than ours is not ours to apply."""
        return task_id is None or self.task_id is None or task_id == self.task_id

    # --- what arrives ----------------------------------------------------------------------

    def take(self, kind: str, obj: dict[str, Any]) -> None:
        """Apply one StreamResponse member (from a stream or a push delivery)."""
        self.events += 1
        if kind == "message":
            self.settle("message", parts_text(obj.get("parts")))
        elif kind == "task":
            self.take_snapshot(obj, from_get=False)
        elif kind == "statusUpdate":
            task_id, context_id = ids_of(obj, is_task=False)
            if not self.belongs(task_id):
                return
            self._learn_ids(task_id, context_id)
            state, text = status_of(obj)
            self._on_state(state, text, final=obj.get("final") is True)
        elif kind == "artifactUpdate":
            task_id, context_id = ids_of(obj, is_task=False)
            if not self.belongs(task_id):
                return
            self._learn_ids(task_id, context_id)
            self._on_chunk(obj)

    def take_snapshot(self, task: dict[str, Any], *, from_get: bool) -> None:
        """A whole Task (a stream's first object, a GetTask answer, a pushed task). Artifacts
        it carries replace the buffers; a GetTask answer without any while chunks are
        buffered marks the gap the seed describes (those chunks are not replayed)."""
        task_id, context_id = ids_of(task, is_task=True)
        if not self.belongs(task_id):
            return
        self._learn_ids(task_id, context_id)
        artifacts = task.get("artifacts")
        if isinstance(artifacts, list) and artifacts:
            self._replace_from(artifacts)
        elif from_get and self.pieces:
            self.gap = True
        state, text = status_of(task)
        self._on_state(state, text, final=False)

    def refresh_artifacts(self, task: dict[str, Any], *, absent_is_gap: bool = True) -> None:
        """A settled call's last look at the task: its artifacts replace the buffers when it
        has them; without them, when chunks may have been missed (``absent_is_gap``), the
        result is incomplete."""
        task_id, _ = ids_of(task, is_task=True)
        if not self.belongs(task_id):
            return
        artifacts = task.get("artifacts")
        if isinstance(artifacts, list) and artifacts:
            self._replace_from(artifacts)
        elif self.pieces and absent_is_gap:
            self.gap = True

    def _replace_from(self, artifacts: list[Any]) -> None:
        self.pieces = {}
        for art in artifacts:
            if isinstance(art, dict) and isinstance(art.get("artifactId"), str):
                self.pieces[art["artifactId"]] = Piece(
                    name=str(art.get("name") or ""),
                    text=parts_text(art.get("parts")),
                    data=parts_data(art.get("parts")),
                    json_hint=parts_json_typed(art.get("parts")),
                    closed=True,
                )
        self.gap = False

    def _on_state(self, state: str, text: str, *, final: bool) -> None:
        if self.settled:
            return
        self.state = state
        if text:
            self.state_text = text
        if ends_the_call(state) or final:
            self.settle(state if ends_the_call(state) else "unknown", self.state_text)

    def _on_chunk(self, update: dict[str, Any]) -> None:
        art = update.get("artifact")
        if not isinstance(art, dict) or not isinstance(art.get("artifactId"), str):
            return
        key = art["artifactId"]
        parts = art.get("parts")
        current = self.pieces.get(key)
        if update.get("append") is True and current is not None:
            current.text += parts_text(parts)
            current.data += parts_data(parts)
            current.json_hint = current.json_hint or parts_json_typed(parts)
            if art.get("name"):
                current.name = str(art["name"])
        else:
            current = Piece(
                name=str(art.get("name") or (current.name if current else "")),
                text=parts_text(parts),
                data=parts_data(parts),
                json_hint=parts_json_typed(parts),
            )
            self.pieces[key] = current
        if update.get("lastChunk") is True:
            current.closed = True

    # --- the result line -------------------------------------------------------------------

    def result(self) -> dict[str, Any]:
        outcome = self.outcome or Outcome("error", "the call ended without an outcome")
        line: dict[str, Any] = {"status": outcome.status}
        if self.task_id:
            line["taskId"] = self.task_id
        if self.context_id:
            line["contextId"] = self.context_id
        if outcome.message:
            line["message"] = outcome.message
        finished = outcome.status in TERMINAL or outcome.status in SUCCESS
        artifacts = []
        for key, piece in self.pieces.items():
            if finished and outcome.status in SUCCESS:
                piece.closed = True  # the task completed: nothing more will come
            item: dict[str, Any] = {"id": key, "name": piece.name, "text": piece.text}
            value = piece.structured()
            if value is not None:
                item["data"] = value
            artifacts.append(item)
        line["artifacts"] = artifacts
        line["incomplete"] = bool(self.gap and outcome.status in SUCCESS)
        return line


__all__ = ["INTERRUPTED", "TERMINAL", "CallBook", "Outcome", "Piece"]
