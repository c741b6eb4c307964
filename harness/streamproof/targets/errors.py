"""Errors split by blame, as h11 splits local and remote protocol errors."""

from __future__ import annotations


class TargetError(Exception):
    """The system under test broke its contract (never became ready, crashed, refused)."""


class TargetConfigError(Exception):
    """A target file or option is wrong: the user's input, not the target's behaviour."""
