"""The JSON layout of Gemini answers: one-line and pretty-printed JSON, SSE frames, and the
``GenerateContentResponse`` pieces, laid out as recorded Gemini traffic (see
:mod:`streamproof.protocol.gemini`)."""

from __future__ import annotations

import json
import math
import secrets
from typing import Any, Literal

FinishReason = Literal["STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER"]

JSON_CONTENT_TYPE = "application/json; charset=UTF-8"
SSE_CONTENT_TYPE = "text/event-stream"

_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dumps_line(payload: Any) -> str:
    """``payload`` as one line of JSON laid out like the real Gemini servers write it."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ": "))
    for raw, escaped in _LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text


def dumps_pretty(payload: Any) -> bytes:
    """A whole-body JSON answer (``generateContent``, HTTP errors): two-space indents."""
    return (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def sse_frame(payload: Any, line_end: str = "\r\n") -> bytes:
    """One server-sent event: ``data: <json>`` and a blank line."""
    return f"data: {dumps_line(payload)}{line_end}{line_end}".encode()


def text_part(text: str) -> dict[str, Any]:
    return {"text": text}


def candidate(parts: list[dict[str, Any]], finish_reason: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish_reason is not None:
        out["finishReason"] = finish_reason
    out["index"] = 0
    return out


def usage(prompt_tokens: int, candidate_tokens: int) -> dict[str, int]:
    out = {"promptTokenCount": prompt_tokens}
    if candidate_tokens:
        out["candidatesTokenCount"] = candidate_tokens
    out["totalTokenCount"] = prompt_tokens + candidate_tokens
    return out


def response(
    parts: list[dict[str, Any]],
    *,
    finish_reason: str | None,
    prompt_tokens: int,
    candidate_tokens: int,
    model_version: str,
    response_id: str,
) -> dict[str, Any]:
    """One ``GenerateContentResponse``."""
    return {
        "candidates": [candidate(parts, finish_reason)],
        "usageMetadata": usage(prompt_tokens, candidate_tokens),
        "modelVersion": model_version,
        "responseId": response_id,
    }


def new_response_id() -> str:
    """22 URL-safe characters, the shape of the real API's ``responseId``."""
    return secrets.token_urlsafe(16)[:22]


def count_tokens(text: str) -> int:
    """A rough token count (four characters a token), only so usage figures look plausible."""
    return max(1, math.ceil(len(text) / 4)) if text else 0
