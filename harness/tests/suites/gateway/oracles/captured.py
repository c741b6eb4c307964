"""Recorded streams as gateway observations, so our checks can judge them beside the oracles:
the hand-written streams (``harness/tests/data/oracles/``) and the captures of the real
ag-ui-adk gateway (``harness/tests/data/ag_ui/``, listed in its index.json).

Only the stream and how it ended are recorded, so only the structural requirements the
differential compares have something to judge; the seed's other rules (which need the fake
model's and tools' records) are not what these observations are for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from harness.tests.suites.gateway.oracles.streams import path
from streamproof.protocol.sse import decode
from streamproof.suites.gateway.observation import ChatResponse, Frame, GatewayObservation

AG_UI_ADK: Final = Path(__file__).resolve().parents[3] / "data" / "ag_ui"
UI_HEADER: Final = {"x-vercel-ai-ui-message-stream": "v1"}
PROFILE: Final = {"ag-ui": "ag-ui", "ai-sdk": "ai-sdk-ui"}
"""The folder of hand-written streams -> the profile that reads them."""


def frames_of(raw: bytes) -> tuple[Frame, ...]:
    """The stream's events as the runner records them, 0.1 s apart."""
    return tuple(
        Frame(
            index=i,
            t=round(0.1 * (i + 1), 3),
            event=e.type,
            id=e.id,
            id_line=e.id_line,
            data=e.data,
        )
        for i, e in enumerate(decode(raw))
    )


def _observation(
    scenario: str,
    target: str,
    profile: str,
    raw: bytes,
    response: ChatResponse,
    request_body: Any = None,
    marker: str = "SP-SECRET-not-in-any-stream",
) -> GatewayObservation:
    return GatewayObservation.model_validate(
        {
            "scenario": scenario,
            "target": target,
            "profile": profile,
            "request_body": request_body,
            "marker": marker,
            "request_text": "",
            "streaming": True,
            "response": response,
            "frames": frames_of(raw),
        }
    )


def hand_written(protocol: str, name: str) -> GatewayObservation:
    """A hand-written stream, answered 200 ``text/event-stream`` (with the AI SDK's header),
    its body ending cleanly; no request (so no thread to compare RUN_STARTED's with)."""
    profile = PROFILE[protocol]
    headers = {"content-type": "text/event-stream", **(UI_HEADER if profile == "ai-sdk-ui" else {})}
    response = ChatResponse(
        status=200, content_type="text/event-stream", end="clean", headers=headers
    )
    return _observation(name, "hand-written", profile, path(protocol, name).read_bytes(), response)


def _end(recorded: str) -> str:
    """index.json's ``end`` as ``ChatResponse.end``."""
    if recorded.startswith("closed by the client"):
        return "client-closed"
    if recorded.startswith("still open"):
        return "timeout"
    return "clean" if recorded == "clean" else "error"


def ag_ui_adk_captures() -> list[GatewayObservation]:
    """Every capture index.json lists, as the observation of its scenario on ag-ui-adk."""
    index = json.loads((AG_UI_ADK / "index.json").read_text(encoding="utf-8"))
    out: list[GatewayObservation] = []
    for entry in index["captures"]:
        response = ChatResponse(
            status=entry["status"],
            content_type=entry["content_type"],
            end=_end(entry["end"]),  # type: ignore[arg-type]
        )
        out.append(
            _observation(
                entry["capture"].removesuffix(".sse"),
                index["target"],
                "ag-ui",
                (AG_UI_ADK / entry["capture"]).read_bytes(),
                response,
                request_body={"threadId": entry["thread_id"]},
                marker=entry["marker"] or "SP-SECRET-not-in-any-stream",
            )
        )
    return out
