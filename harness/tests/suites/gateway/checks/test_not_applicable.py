"""A run that gives a check nothing to judge never earns it a PASS.

Every gateway check is run on observations that exercise (almost) nothing: no response at all,
an event stream with no frame, and a stream holding a single ``done``. A check may fail them,
skip them or call them not applicable, but a PASS is allowed only for what is really there to
judge: the response head (200 text/event-stream) and, for the lone ``done``, that frame's own
type, id and place at the end of the stream.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.tests.suites.gateway.observations import DONE, frames, observation
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.checks import gateway_expectation_verdicts
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation
from streamproof.suites.gateway.profiles.base import GatewayCheck
from streamproof.suites.gateway.profiles.typed_frames import SEED_RULES

NO_RESPONSE = ChatResponse(
    status=None, content_type=None, end="refused", error="connection refused"
)

EMPTY: dict[str, Callable[[], GatewayObservation]] = {
    "no-response": lambda: observation(response=NO_RESPONSE, auth_probes=None),
    "empty-stream": lambda: observation(frames=(), model_calls=(), auth_probes=None),
    "only-done": lambda: observation(frames=frames(DONE), model_calls=(), auth_probes=None),
}

JUDGED: dict[str, set[str]] = {
    "no-response": set(),
    "empty-stream": {"GW-SSE-RESPONSE"},
    "only-done": {
        "GW-SSE-RESPONSE",
        "GW-FRAME-TYPES",  # done {} is a well-formed frame
        "GW-FRAME-ID-COUNTER",  # its id is the gateway's counter
        "GW-STREAM-TERMINAL",  # the stream ends with done
    },
}
"""What each observation does give to judge: the only requirements that may pass on it."""

GATEWAY_CHECKS: tuple[GatewayCheck, ...] = (
    *(check for _, _, check in SEED_RULES),
    gateway_expectation_verdicts,
)


@pytest.mark.parametrize("check", GATEWAY_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(EMPTY))
def test_nothing_to_judge_is_never_a_pass(name: str, check: GatewayCheck) -> None:
    verdicts = check(EMPTY[name]())
    passed = [
        v for v in verdicts if v.outcome is Outcome.PASS and v.requirement not in JUDGED[name]
    ]
    assert not passed, [v.render() for v in passed]


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_what_is_there_to_judge_does_pass(name: str) -> None:
    outcomes = {v.requirement: v.outcome for c in GATEWAY_CHECKS for v in c(EMPTY[name]())}
    assert {r for r, o in outcomes.items() if o is Outcome.PASS} == JUDGED[name]
