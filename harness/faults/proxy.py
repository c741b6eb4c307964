"""Moved to harness.faults.engines.inline; this path is kept for one release."""

from __future__ import annotations

from harness.faults.engines.inline import InlineProxy

__all__ = ["InlineProxy"]
