"""Kept for one release: the gateway checks moved to :mod:`harness.suites.gateway.checks`.

``from harness.checks import check_gateway`` (and every single check) keeps working; new code
imports from the suite package, or from :mod:`harness` itself.
"""

from __future__ import annotations

from harness.suites.gateway.checks import *  # noqa: F403
from harness.suites.gateway.checks import __all__ as __all__
