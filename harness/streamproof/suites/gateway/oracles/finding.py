"""What an oracle says about a stream: its findings, one model for every library."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Finding", "OracleReport"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Finding(_Record):
    """One thing a library flagged, in its own words."""

    rule: str
    """The library's name for it: a rule id (``AGUI101``) or the error's class
    (``AI_UIMessageStreamError``, ``AGUIError``, ``ZodError``)."""
    kind: str
    """How the library treats it: a severity (``error``, ``warning``) or the stage that
    rejected the event (``schema``, ``stream``)."""
    message: str
    index: int | None
    """The event it is about, 0-based in the payloads given; ``None``: the stream as a whole
    (a run never terminated, say)."""


class OracleReport(_Record):
    """A library's reading of one stream; each oracle adds what its library holds at the end."""

    library: str
    version: str
    events: int
    """How many events the stream had."""
    findings: tuple[Finding, ...]
    """Everything the library flagged as wrong, in stream order; empty for a stream it accepts."""

    def rules(self) -> tuple[str, ...]:
        """The findings' rules, in order (for comparisons and test assertions)."""
        return tuple(f.rule for f in self.findings)
