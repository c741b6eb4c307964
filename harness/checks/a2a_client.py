"""Kept for one release: the A2A client checks moved to :mod:`harness.suites.a2a_client.checks`."""

from __future__ import annotations

from harness.suites.a2a_client.checks import *  # noqa: F403
from harness.suites.a2a_client.checks import __all__ as __all__
