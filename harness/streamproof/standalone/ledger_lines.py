"""What ``streamproof serve`` prints about each request a fake receives: one line, as it arrives.

Pure functions over the fakes' own records (:class:`~streamproof.fakes.a2a.ledger.RequestRecord`,
:class:`~streamproof.fakes.records.ModelCall`, :class:`~streamproof.fakes.records.ToolCall`), so
what a
person sees at the terminal is what a scenario's checks would read. A line says when (seconds
since the fake started), which request, and what it asked; what is already known of the answer
when the line is printed (an error code, a task id) is added, nothing is waited for.
"""

from __future__ import annotations

import json
from typing import Any, Final

from streamproof.fakes.a2a.ledger import RequestRecord
from streamproof.fakes.a2a.push.records import DeliveryRecord
from streamproof.fakes.records import ModelCall, ToolCall

__all__ = ["UNANSWERED_S", "a2a_line", "a2a_ready", "model_line", "tool_line"]

_TEXT: Final = 60
"""Characters of a message text or tool arguments shown."""


def _short(text: str, limit: int = _TEXT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


UNANSWERED_S: Final = 1.0
"""How long a request read but not yet answered waits for its answer before its line is shown
without one (a server that holds a request is worth seeing while it holds it)."""


def a2a_ready(record: RequestRecord, now: float) -> bool:
    """Whether a request's line can be shown, once: when it is answered or ended, so the line
    says how (``-> sse``, ``-> error -32602``); or, read far enough to name it (its JSON-RPC
    method, or why it has none, or not a JSON-RPC call at all) and unanswered for
    :data:`UNANSWERED_S` at ``now`` (seconds on the ledger's clock), without the answer.
    Shown as soon as its method was read, a stream's line raced its answer and now and then
    lost it."""
    if record.status != 0 or record.error_code is not None or record.ended != "open":
        return True
    named = (
        record.rpc_method is not None
        or record.body_excerpt is not None
        or record.http_method != "POST"
    )
    return named and now - record.t >= UNANSWERED_S


def _message_text(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    message = params.get("message")
    if not isinstance(message, dict):
        return None
    parts = message.get("parts")
    if not isinstance(parts, list):
        return None
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "".join(texts) if texts else None


def a2a_line(record: RequestRecord) -> str:
    """``   0.412s #3 conn 2 POST / message/stream task 1f2e… "Summarise…" -> sse``."""
    head = f"{record.t:8.3f}s #{record.index} conn {record.connection}"
    words = [head, record.http_method, record.path]
    if record.rpc_method is not None:
        words.append(record.rpc_method)
        if record.a2a_version is not None:
            words.append(f"[A2A-Version {record.a2a_version}]")
    elif record.body_excerpt is not None:
        words.append(f"body {json.dumps(_short(record.body_excerpt, 40))}")
    if record.task_id is not None:
        words.append(f"task {record.task_id}")
    text = _message_text(record.params)
    if text is not None:
        words.append(json.dumps(_short(text)))
    answer = []
    if record.error_code is not None:
        answer.append(f"error {record.error_code}")
    elif record.status:
        answer.append(record.response if record.status == 200 else f"HTTP {record.status}")
    if answer:
        words.append("-> " + " ".join(answer))
    return " ".join(words)


def model_line(call: ModelCall) -> str:
    """``   1.020s model #0 gemini-2.0-flash stream agent root -> turn 0``."""
    words = [f"{call.t:8.3f}s model #{call.index}", call.model or call.path]
    words.append("stream" if call.streaming else "unary")
    if call.agent is not None:
        words.append(f"agent {call.agent}")
    words.append(f"-> turn {call.turn}" if call.turn is not None else "-> no scripted turn left")
    return " ".join(words)


def tool_line(call: ToolCall) -> str:
    """``   1.530s tool get_weather {"city": "Paris"} -> 200``."""
    arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    return f"{call.t:8.3f}s tool {call.tool} {_short(arguments)} -> {call.status}"


def delivery_line(record: DeliveryRecord) -> str:
    """``   2.104s push #3 artifact-update summary -> http://127.0.0.1:41213/hook: HTTP 200``."""
    number = f"#{record.delivery}" if record.delivery is not None else "forged"
    what = record.state or record.artifact_id or ""
    fault = f" [{record.fault}]" if record.fault is not None else ""
    if record.ended == "lost":
        return f"{record.t:8.3f}s push {number} {record.kind} {what}{fault}: lost (never sent)"
    answer = (
        f"HTTP {record.receiver_status}" if record.receiver_status is not None else record.ended
    )
    return f"{record.t:8.3f}s push {number} {record.kind} {what}{fault} -> {record.url}: {answer}"
