"""Hand-built streams on the other wires (AG-UI, the AI SDK UI message stream), made from the
same story as :func:`harness.tests.suites.gateway.observations.worked_example`: the fake
model's and tool's records and the stored session stay; only the wire changes."""

from __future__ import annotations

import json
from typing import Any

from harness.tests.suites.gateway.observations import ANSWER, CHUNKS, worked_example
from streamproof.suites.gateway.observation import ChatResponse, Frame, GatewayObservation

THREAD = "sp-thread-1"
RUN = "run-1"
REQUEST = {
    "threadId": THREAD,
    "runId": RUN,
    "messages": [{"id": "m-1", "role": "user", "content": "Where is order 1042?"}],
}

UI_OK = ChatResponse(
    status=200,
    content_type="text/event-stream",
    end="clean",
    headers={"content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1"},
)


def data_frames(*events: dict[str, Any] | str) -> tuple[Frame, ...]:
    """Data-only SSE events (no ``event:``, no ``id:``), 0.1 s apart."""
    return tuple(
        Frame(
            index=i,
            t=0.1 * (i + 1),
            event="message",
            id="",
            id_line=False,
            data=e if isinstance(e, str) else json.dumps(e, separators=(",", ":")),
        )
        for i, e in enumerate(events)
    )


# --- AG-UI -------------------------------------------------------------------------------------


def ag(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def agui_answer(message_id: str = "a-1", chunks: tuple[str, ...] = CHUNKS) -> list[dict[str, Any]]:
    return [
        ag("TEXT_MESSAGE_START", messageId=message_id, role="assistant"),
        *(ag("TEXT_MESSAGE_CONTENT", messageId=message_id, delta=c) for c in chunks),
        ag("TEXT_MESSAGE_END", messageId=message_id),
    ]


def agui_tool_call(call_id: str = "c-1", name: str = "lookupOrder") -> list[dict[str, Any]]:
    return [
        ag("TOOL_CALL_START", toolCallId=call_id, toolCallName=name),
        ag("TOOL_CALL_ARGS", toolCallId=call_id, delta='{"orderId":"1042"}'),
        ag("TOOL_CALL_END", toolCallId=call_id),
    ]


def agui_result(call_id: str = "c-1", content: str = "lookupOrder answered") -> dict[str, Any]:
    return ag("TOOL_CALL_RESULT", messageId=f"r-{call_id}", toolCallId=call_id, content=content)


STARTED = ag("RUN_STARTED", threadId=THREAD, runId=RUN)
FINISHED = ag("RUN_FINISHED", threadId=THREAD, runId=RUN)


def agui_worked_example(*events: dict[str, Any] | str, **overrides: Any) -> GatewayObservation:
    """The worked example on AG-UI; ``events`` replace the correct stream when given."""
    stream = events or (
        STARTED,
        *agui_tool_call(),
        agui_result(),
        *agui_answer(),
        FINISHED,
    )
    fields: dict[str, Any] = {
        "profile": "ag-ui",
        "frames": data_frames(*stream),
        "request_body": REQUEST,
    }
    fields.update(overrides)
    return worked_example(**fields)


# --- the AI SDK UI message stream --------------------------------------------------------------


def ui(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def ui_answer(part: str = "t-1", chunks: tuple[str, ...] = CHUNKS) -> list[dict[str, Any]]:
    return [
        ui("text-start", id=part),
        *(ui("text-delta", id=part, delta=c) for c in chunks),
        ui("text-end", id=part),
    ]


def ui_tool_call(call_id: str = "c-1", output: Any = None) -> list[dict[str, Any]]:
    return [
        ui("tool-input-start", toolCallId=call_id, toolName="lookupOrder"),
        ui(
            "tool-input-available",
            toolCallId=call_id,
            toolName="lookupOrder",
            input={"orderId": "1042"},
        ),
        ui("tool-output-available", toolCallId=call_id, output=output or {"summary": "answered"}),
    ]


def ui_worked_example(*events: dict[str, Any] | str, **overrides: Any) -> GatewayObservation:
    stream = events or (
        ui("start", messageId="m-2"),
        ui("start-step"),
        *ui_tool_call(),
        ui("finish-step"),
        ui("start-step"),
        *ui_answer(),
        ui("finish-step"),
        ui("finish"),
        "[DONE]",
    )
    fields: dict[str, Any] = {
        "profile": "ai-sdk-ui",
        "frames": data_frames(*stream),
        "response": UI_OK,
    }
    fields.update(overrides)
    return worked_example(**fields)


__all__ = ["ANSWER"]
