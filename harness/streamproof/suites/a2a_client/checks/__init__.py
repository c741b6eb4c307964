"""A2A client checks: pure functions from an
:class:`~streamproof.suites.a2a_client.observation.A2AClientObservation` to verdicts, one verdict
per
``A2A-C-…`` requirement (:mod:`streamproof.suites.a2a_client.requirements`).

They judge the client by the seed's own rules (``docs/explanation/a2a-client-rules.md``, "A2A Client
Streaming Recipe"), no stricter: whatever the recipe legitimately does passes. Where the
recipe itself falls short (chunks streamed between its snapshot and its resubscribe are lost),
the loss is reported against the SHOULD ``A2A-C-GAP`` and nothing else.

Time limits count from the client's first request as the harness saw it (the agent card fetch
usually), never from process start, and allow the scenario's tolerance (at least
:data:`MIN_SLACK_S` real seconds). Messages give times in real seconds and, under a time scale,
in the scenario's own time as well.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from streamproof.core.verdicts import Verdict
from streamproof.suites.a2a_client.checks.artifacts import (
    artifacts_complete_verdicts,
    gap_verdicts,
    reassembly_verdicts,
    structured_verdicts,
)
from streamproof.suites.a2a_client.checks.calls import (
    cancel_verdicts,
    complete_once_verdicts,
    deadline_verdicts,
    early_drop_verdicts,
    no_resend_verdicts,
    result_verdicts,
)
from streamproof.suites.a2a_client.checks.expectations import (
    a2a_expectation_verdicts,
)
from streamproof.suites.a2a_client.checks.outcomes import (
    direct_message_verdicts,
    failure_states_verdicts,
    follow_up_verdicts,
    headers_verdicts,
    interrupted_verdicts,
    status_verdicts,
)
from streamproof.suites.a2a_client.checks.push import (
    push_auth_verdicts,
    push_once_verdicts,
    push_silence_verdicts,
    push_stale_verdicts,
)
from streamproof.suites.a2a_client.checks.recovery import (
    no_resubscribe_done_verdicts,
    recovery_verdicts,
    snapshot_first_verdicts,
)
from streamproof.suites.a2a_client.checks.turns import (
    MIN_SLACK_S,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation

__all__ = [
    "A2A_CLIENT_CHECKS",
    "MIN_SLACK_S",
    "a2a_expectation_verdicts",
    "artifacts_complete_verdicts",
    "cancel_verdicts",
    "check_a2a_client",
    "complete_once_verdicts",
    "deadline_verdicts",
    "direct_message_verdicts",
    "early_drop_verdicts",
    "failure_states_verdicts",
    "follow_up_verdicts",
    "gap_verdicts",
    "headers_verdicts",
    "interrupted_verdicts",
    "no_resend_verdicts",
    "no_resubscribe_done_verdicts",
    "push_auth_verdicts",
    "push_once_verdicts",
    "push_silence_verdicts",
    "push_stale_verdicts",
    "reassembly_verdicts",
    "recovery_verdicts",
    "result_verdicts",
    "snapshot_first_verdicts",
    "status_verdicts",
    "structured_verdicts",
]

A2AClientCheck = Callable[[A2AClientObservation], list[Verdict]]

A2A_CLIENT_CHECKS: Final[tuple[A2AClientCheck, ...]] = (
    result_verdicts,
    complete_once_verdicts,
    no_resend_verdicts,
    early_drop_verdicts,
    snapshot_first_verdicts,
    no_resubscribe_done_verdicts,
    recovery_verdicts,
    deadline_verdicts,
    cancel_verdicts,
    artifacts_complete_verdicts,
    reassembly_verdicts,
    structured_verdicts,
    status_verdicts,
    failure_states_verdicts,
    interrupted_verdicts,
    direct_message_verdicts,
    follow_up_verdicts,
    headers_verdicts,
    gap_verdicts,
    push_auth_verdicts,
    push_once_verdicts,
    push_stale_verdicts,
    push_silence_verdicts,
    a2a_expectation_verdicts,
)
"""Every A2A client check, in the registry's order, then the scenario's own expectations."""


def check_a2a_client(obs: A2AClientObservation) -> list[Verdict]:
    """Every A2A client verdict for ``obs``, one per requirement, in a fixed order."""
    return [verdict for check in A2A_CLIENT_CHECKS for verdict in check(obs)]
