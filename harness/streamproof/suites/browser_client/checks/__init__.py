"""Browser-client checks: pure functions from a
:class:`~streamproof.suites.browser_client.observation.BrowserClientObservation` to verdicts,
one per ``BR-…`` requirement (:mod:`streamproof.suites.browser_client.requirements`), judged by
the seed's client rules (docs/explanation/browser-client-rules.md) and no stricter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from streamproof.core.verdicts import Verdict
from streamproof.suites.browser_client.checks.ending import (
    draft_cleared_verdicts,
    every_message_verdicts,
    failed_shown_verdicts,
    tool_status_verdicts,
)
from streamproof.suites.browser_client.checks.render import (
    draft_by_author_verdicts,
    render_once_verdicts,
)
from streamproof.suites.browser_client.checks.transport import (
    one_run_verdicts,
    reconnect_history_verdicts,
    truncated_not_final_verdicts,
)
from streamproof.suites.browser_client.observation import BrowserClientObservation

__all__ = ["BROWSER_CLIENT_CHECKS", "check_browser_client"]

BROWSER_CLIENT_CHECKS: Final[tuple[Callable[[BrowserClientObservation], list[Verdict]], ...]] = (
    render_once_verdicts,
    draft_by_author_verdicts,
    draft_cleared_verdicts,
    failed_shown_verdicts,
    tool_status_verdicts,
    every_message_verdicts,
    reconnect_history_verdicts,
    one_run_verdicts,
    truncated_not_final_verdicts,
)


def check_browser_client(obs: BrowserClientObservation) -> list[Verdict]:
    """Every check's verdicts on ``obs``, in the requirements' order."""
    return [verdict for check in BROWSER_CLIENT_CHECKS for verdict in check(obs)]
