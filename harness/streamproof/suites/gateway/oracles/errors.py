"""Why an oracle gave no report."""

from __future__ import annotations

__all__ = ["OracleFailed", "OracleUnavailable"]


class OracleUnavailable(RuntimeError):
    """The oracle cannot run on this machine (no Node, a library not installed); the message
    says how to install it."""


class OracleFailed(RuntimeError):
    """The oracle ran but gave no result: a timeout, a crash, output that is not its document."""
