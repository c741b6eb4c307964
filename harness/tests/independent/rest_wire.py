"""What the independent REST client reads off the wire, with no I/O: Server-Sent Events framing,
A2A 1.0 ProtoJSON objects (a ``StreamResponse``, a ``Task``, its parts) and the
``google.rpc.Status`` error body of the HTTP+JSON binding.

Written from the A2A 1.0 specification (HTTP+JSON binding, ProtoJSON naming) and
docs/reference/a2a-client-contract.md#bindings alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

TERMINAL = frozenset({"completed", "failed", "canceled", "rejected", "unknown"})
INTERRUPTED = frozenset({"input-required", "auth-required"})


def contract_state(raw: object) -> str:
    """A TaskState as the result line spells it: ``TASK_STATE_INPUT_REQUIRED`` (ProtoJSON),
    ``input-required`` or ``input_required`` all read as ``input-required``; an unset or
    unspecified state is ``unknown``."""
    if not isinstance(raw, str) or not raw:
        return "unknown"
    word = raw.strip().lower()
    if word.startswith("task_state_"):
        word = word[len("task_state_") :]
    word = word.replace("_", "-")
    if word == "cancelled":
        word = "canceled"
    if word in TERMINAL | INTERRUPTED | {"submitted", "working"}:
        return word
    return "unknown"


def ends_the_call(state: str) -> bool:
    return state in TERMINAL or state in INTERRUPTED


# --- Server-Sent Events -------------------------------------------------------------------------


@dataclass
class SseEvent:
    data: str
    event: str = "message"


class SseDecoder:
    """Incremental SSE framing (the WHATWG algorithm, reduced to what a client needs): bytes in,
    whole events out. Lines end in CRLF, LF or CR; ``data:`` lines join with LF; a comment
    (``:``) is no event; an event is dispatched on a blank line."""

    def __init__(self) -> None:
        self._pending = ""
        self._data: list[str] = []
        self._event = ""
        self._cr_tail = False

    def feed(self, chunk: bytes) -> Iterator[SseEvent]:
        text = chunk.decode("utf-8", errors="replace")
        if self._cr_tail and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF split across two chunks
        self._cr_tail = text.endswith("\r")
        self._pending += text
        lines = self._pending.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self._pending = lines.pop()
        for line in lines:
            event = self._line(line)
            if event is not None:
                yield event

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            event = SseEvent("\n".join(self._data), self._event or "message")
            self._data, self._event = [], ""
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None


# --- ProtoJSON objects --------------------------------------------------------------------------


class WireError(Exception):
    """A frame or a body the client cannot read: handled as a loud drop."""


def parse_frame(data: str) -> tuple[str, dict[str, Any]]:
    """One ``StreamResponse``: its kind (``task``, ``message``, ``statusUpdate``,
    ``artifactUpdate``) and the object. Anything else is a WireError."""
    try:
        body = json.loads(data)
    except ValueError as exc:
        raise WireError(f"an SSE data line that is not JSON: {data[:120]!r}") from exc
    if not isinstance(body, dict):
        raise WireError(f"an SSE data line that is not an object: {data[:120]!r}")
    if "error" in body and isinstance(body["error"], dict):
        raise WireError(f"an error inside the stream: {describe_error(body)}")
    kinds = [k for k in ("task", "message", "statusUpdate", "artifactUpdate") if k in body]
    if len(kinds) != 1 or not isinstance(body[kinds[0]], dict):
        raise WireError(f"a StreamResponse with no single known member: {sorted(body)}")
    return kinds[0], body[kinds[0]]


def parts_text(parts: object) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def parts_data(parts: object) -> list[Any]:
    if not isinstance(parts, list):
        return []
    return [p["data"] for p in parts if isinstance(p, dict) and "data" in p]


def parts_json_typed(parts: object) -> bool:
    """Whether a text part says it holds JSON (``mediaType: application/json``)."""
    if not isinstance(parts, list):
        return False
    return any(
        isinstance(p, dict) and "json" in str(p.get("mediaType") or p.get("media_type") or "")
        for p in parts
    )


def status_of(obj: dict[str, Any]) -> tuple[str, str]:
    """(state, message text) of a Task or a TaskStatusUpdateEvent."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return "unknown", ""
    message = status.get("message")
    text = parts_text(message.get("parts")) if isinstance(message, dict) else ""
    return contract_state(status.get("state")), text


def ids_of(obj: dict[str, Any], *, is_task: bool) -> tuple[str | None, str | None]:
    task_id = obj.get("id") if is_task else obj.get("taskId")
    context_id = obj.get("contextId")
    return (
        task_id if isinstance(task_id, str) and task_id else None,
        context_id if isinstance(context_id, str) and context_id else None,
    )


# --- errors of the HTTP+JSON binding -------------------------------------------------------------


def error_reason(body: object) -> str | None:
    """The A2A error a ``google.rpc.Status`` body names (its ``ErrorInfo.reason``)."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    for detail in body["error"].get("details") or ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("ErrorInfo"):
            reason = detail.get("reason")
            return str(reason) if reason else None
    return None


def describe_error(body: object) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        reason = error_reason(body)
        return f"{err.get('code')} {reason or err.get('status') or ''}: {err.get('message', '')}"
    return str(body)[:200]


def read_json(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return None
