"""The differential holds on every recorded stream: the 41 hand-written ones
(``harness/tests/data/oracles/``) and the captures of the real ag-ui-adk gateway
(``harness/tests/data/ag_ui/``). Each is judged by its profile's checks, run through the
libraries, and every disagreement must be a known difference; :data:`DIFFERENCES` records which,
so a change on either side (a check, a library, the table) shows here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pytest

from harness.tests.conftest import require_oracle
from harness.tests.suites.gateway.oracles.captured import ag_ui_adk_captures, hand_written
from harness.tests.suites.gateway.oracles.streams import AG_UI, AI_SDK, oracle_report
from streamproof.suites.gateway.observation import GatewayObservation
from streamproof.suites.gateway.oracles.ag_ui_validate import installed_version
from streamproof.suites.gateway.oracles.differential import (
    StreamDifferential,
    compare,
    differential,
)
from streamproof.suites.gateway.oracles.mapping import AI, CLIENT, ORACLES, VALIDATE
from streamproof.suites.gateway.oracles.node_script import require_installed
from streamproof.suites.gateway.oracles.stream import stream_of
from streamproof.suites.gateway.oracles.table import differential_table
from streamproof.suites.gateway.profiles.registry import check_gateway

Seen = tuple[tuple[str, str | None], ...]
"""Each disagreement as (library, the known difference that explains it), in order."""

DIFFERENCES: Final[Mapping[str, Seen]] = {
    "ag-ui/no-terminal-event": ((CLIENT, "client has no end-of-stream check"),),
    "ag-ui/run-id-changes": ((CLIENT, "client compares no run ids"),),
    "ag-ui/tool-call-id-reused": (
        (VALIDATE, "id reused after its end"),
        (VALIDATE, "validator lost a reused id"),
        (VALIDATE, "validator lost a reused id"),
    ),
    "ag-ui/unknown-key": ((CLIENT, "client strips an unknown key"),),
    "ag-ui/tool-result-unknown-call": ((CLIENT, "client takes a result for an unknown call"),),
    "ag-ui/empty-delta": ((VALIDATE, "empty delta"),),
    "ag-ui/step-started-twice": (
        (VALIDATE, "validator counts a step started twice"),
        (VALIDATE, "validator lets a step start twice"),
    ),
    "ai-sdk/no-done": ((AI, "ai requires no [DONE]"),),
    "ai-sdk/content-after-done": ((AI, "ai requires no [DONE]"),),
    "ai-sdk/finish-with-part-open": ((AI, "ai checks nothing at finish"),),
    "ag-ui-adk/browser_gone": ((VALIDATE, "browser left"), (VALIDATE, "browser left")),
}
"""Every recorded stream with a disagreement; on every other one the libraries and our
structural verdicts agree."""


@pytest.fixture(autouse=True)
def _installed() -> None:
    require_oracle(VALIDATE, installed_version)
    for package in (CLIENT, AI):
        require_oracle(package, lambda p=package: require_installed(p))


def _seen(diff: StreamDifferential) -> Seen:
    return tuple((d.oracle, d.known) for d in diff.disagreements)


def _check(diff: StreamDifferential) -> None:
    assert diff.holds, differential_table([diff])
    assert _seen(diff) == DIFFERENCES.get(diff.stream, ()), differential_table([diff])


HAND_WRITTEN = [("ag-ui", n) for n in AG_UI] + [("ai-sdk", n) for n in AI_SDK]


@pytest.mark.parametrize(
    ("protocol", "name"), HAND_WRITTEN, ids=[f"{p}/{n}" for p, n in HAND_WRITTEN]
)
def test_the_differential_holds_on_a_hand_written_stream(protocol: str, name: str) -> None:
    obs = hand_written(protocol, name)
    stream = stream_of(obs, f"{protocol}/{name}")
    reports = [oracle_report(library, protocol, name) for library in ORACLES[obs.profile]]
    diff = compare(stream, reports, check_gateway(obs))
    _check(diff)
    # A stream a library rejects is one we fail too (or the difference is recorded above).
    rejecting = [c for c in diff.oracles if any(f.kind != "warning" for f in c.findings)]
    for comparison in rejecting:
        assert comparison.agreed or diff.stream in DIFFERENCES, differential_table([diff])


CAPTURES = ag_ui_adk_captures()


@pytest.mark.parametrize("obs", CAPTURES, ids=[o.scenario for o in CAPTURES])
def test_the_differential_holds_on_a_capture_of_ag_ui_adk(obs: GatewayObservation) -> None:
    _check(differential(obs, check_gateway(obs), name=f"ag-ui-adk/{obs.scenario}"))


def test_every_recorded_difference_is_a_stream_we_have() -> None:
    names = {f"{p}/{n}" for p, n in HAND_WRITTEN} | {f"ag-ui-adk/{o.scenario}" for o in CAPTURES}
    assert set(DIFFERENCES) <= names
