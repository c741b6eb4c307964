"""The seed's frames as an AG-UI gateway (``ag-ui-adk``) streams them: one block of AG-UI events
per frame, each event ``data: <JSON with its type>`` (no ``id:`` or ``event:`` lines, as AG-UI's
encoders write them). Pure.

===================== ==========================================================================
frame                 AG-UI events
===================== ==========================================================================
(the first frame)     ``RUN_STARTED`` before its own events
delta                 ``TEXT_MESSAGE_START`` (the author's first delta: a message of its own,
                      ``role: assistant``), then ``TEXT_MESSAGE_CONTENT`` with the delta
message               ``TEXT_MESSAGE_END`` of its author's open message; a message without
                      deltas is ``START``, ``CONTENT`` with its whole text, ``END``
tool_call             ``TOOL_CALL_START``, ``TOOL_CALL_ARGS`` (``{}``), ``TOOL_CALL_END`` per name
tool_result           ``TOOL_CALL_RESULT`` for the last call
error                 ``RUN_ERROR``
done                  ``RUN_FINISHED``
===================== ==========================================================================

AG-UI carries no author and no aggregate: a page sees each author's text as a message of its
own, built from its deltas, closed by ``TEXT_MESSAGE_END``
(docs/reference/browser-client-contract.md#ag-ui-pages).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from streamproof.fakes.gateway.frames import GatewayFrame

__all__ = ["ag_ui_blocks", "ag_ui_events"]


def ag_ui_events(
    frames: Sequence[GatewayFrame], thread_id: str = "thread-1", run_id: str = "run-1"
) -> list[list[dict[str, Any]]]:
    """Each frame's AG-UI events, in order."""
    out: list[list[dict[str, Any]]] = []
    open_by_author: dict[str, str] = {}
    messages = calls = 0
    last_call: str | None = None
    for index, frame in enumerate(frames):
        events: list[dict[str, Any]] = []
        if index == 0:
            events.append({"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id})
        data = frame.data
        author = str(data.get("author", ""))
        if frame.type == "delta":
            if author not in open_by_author:
                messages += 1
                open_by_author[author] = f"msg-{messages}"
                events.append(
                    {
                        "type": "TEXT_MESSAGE_START",
                        "messageId": open_by_author[author],
                        "role": "assistant",
                    }
                )
            events.append(
                {
                    "type": "TEXT_MESSAGE_CONTENT",
                    "messageId": open_by_author[author],
                    "delta": str(data.get("text", "")),
                }
            )
        elif frame.type == "message":
            message_id = open_by_author.pop(author, None)
            if message_id is None:
                messages += 1
                message_id = f"msg-{messages}"
                events += [
                    {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
                    {
                        "type": "TEXT_MESSAGE_CONTENT",
                        "messageId": message_id,
                        "delta": str(data.get("text", "")),
                    },
                ]
            events.append({"type": "TEXT_MESSAGE_END", "messageId": message_id})
        elif frame.type == "tool_call":
            for name in data.get("names", []):
                calls += 1
                last_call = f"call-{calls}"
                events += [
                    {"type": "TOOL_CALL_START", "toolCallId": last_call, "toolCallName": name},
                    {"type": "TOOL_CALL_ARGS", "toolCallId": last_call, "delta": "{}"},
                    {"type": "TOOL_CALL_END", "toolCallId": last_call},
                ]
        elif frame.type == "tool_result" and last_call is not None:
            events.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"result-{last_call}",
                    "toolCallId": last_call,
                    "content": json.dumps({"count": data.get("count", 1)}),
                    "role": "tool",
                }
            )
        elif frame.type == "error":
            events.append({"type": "RUN_ERROR", "message": "the run failed"})
        elif frame.type == "done":
            # AG-UI closes what is open before the run ends.
            events += [
                {"type": "TEXT_MESSAGE_END", "messageId": m} for m in open_by_author.values()
            ]
            open_by_author.clear()
            events.append({"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id})
        out.append(events)
    return out


def ag_ui_blocks(frames: Sequence[GatewayFrame]) -> list[str]:
    """Each frame's events as the bytes of SSE: ``data: {json}`` and a blank line per event."""
    return [
        "".join(f"data: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events)
        for events in ag_ui_events(frames)
    ]
