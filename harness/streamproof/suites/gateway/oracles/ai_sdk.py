"""The AI SDK (``ai``, npm) run over a captured UI message stream.

``node/ai-sdk.mjs`` does what ``useChat``'s transport does with a response body: every event's
data goes through ``parseJsonEventStream`` with ``uiMessageChunkSchema`` (a failure is a finding
of kind ``schema``), and the chunks that parsed, up to the first that did not, are reduced to UI
messages with ``readUIMessageStream`` (a chunk the reducer rejects, such as a delta for a part
never started, is a finding of kind ``stream``, and the reduction stops there as ``useChat``
does). The library itself skips ``[DONE]`` wherever it stands and requires none; an ``error``
chunk is the server reporting a failure and is listed under ``errors_reported``, not as a
finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict

from streamproof.suites.gateway.oracles.finding import OracleReport
from streamproof.suites.gateway.oracles.node_script import run_script

__all__ = ["AiSdkReport", "ReportedError", "UiMessage", "UiPart", "read_ai_sdk_stream"]

PACKAGE: Final = "ai"
SCRIPT: Final = "ai-sdk.mjs"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UiPart(_Record):
    type: str
    text: str | None = None
    """A text or reasoning part's text."""
    state: str | None = None
    """``streaming`` or ``done`` for text; the tool call's state for a tool part."""
    tool_call_id: str | None = None


class UiMessage(_Record):
    id: str
    role: str
    parts: tuple[UiPart, ...]

    def texts(self) -> tuple[str, ...]:
        """The text parts' texts, in order."""
        return tuple(p.text or "" for p in self.parts if p.type == "text")


class ReportedError(_Record):
    """An ``error`` chunk: the library hands its ``errorText`` to the app's error handler."""

    index: int
    text: str


class AiSdkReport(OracleReport):
    errors_reported: tuple[ReportedError, ...]
    reduced_through: int | None
    """The last event the reducer took in (``None``: none); it stops at the first rejected."""
    messages: tuple[UiMessage, ...]


def read_ai_sdk_stream(payloads: Sequence[str], *, timeout: float = 30.0) -> AiSdkReport:
    """The AI SDK's reading of the stream whose events carry ``payloads`` (``[DONE]`` included,
    where the stream has it).

    Raises :class:`~streamproof.suites.gateway.oracles.errors.OracleUnavailable` without Node or the
    installed package, :class:`~streamproof.suites.gateway.oracles.errors.OracleFailed` when the run
    gives no result within ``timeout`` seconds.
    """
    return run_script(SCRIPT, PACKAGE, payloads, timeout, AiSdkReport)
