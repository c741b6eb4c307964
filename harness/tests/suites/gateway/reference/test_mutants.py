"""Which mutant means something on which wire and disconnect policy (mutants.py), and that the
target files list exactly those; the gateway refuses the others as bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.suites.gateway.reference.config import ConfigError, Settings
from streamproof.suites.gateway.reference.mutants import (
    BUGS,
    EVERY_WIRE,
    INTENDED,
    WIRE_BUGS,
    WIRE_INTENDED,
    WIRES,
    applies,
    bugs_for,
    describe_bugs,
)
from streamproof.suites.gateway.target.config import load_target

TARGETS = Path(__file__).resolve().parents[4] / "streamproof" / "suites" / "gateway"
ENV = {
    "PORT": "0",
    "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1",
    "GOOGLE_API_KEY": "k",
    "STREAMPROOF_TOOL_URL": "http://127.0.0.1:2",
}


def test_the_tables_agree() -> None:
    assert set(WIRE_BUGS) == set(WIRE_INTENDED) and not set(WIRE_BUGS) & set(BUGS)
    assert EVERY_WIRE <= set(BUGS)
    # The typed-frames reference keeps every mutant it had, in order.
    assert bugs_for("typed-frames") == list(BUGS) and set(BUGS) == set(INTENDED)


def test_each_wire_has_its_own_mutants_and_the_shared_ones() -> None:
    for wire, prefix in (("ag-ui", "agui-"), ("ai-sdk-ui", "aisdk-")):
        names = bugs_for(wire)
        own = {n for n in WIRE_BUGS if n.startswith(prefix)}
        assert {n for n in names if n in WIRE_BUGS} == own
        assert {n for n in names if n in BUGS} == EVERY_WIRE
    assert "detach-persist-twice" in bugs_for("ag-ui", "detach")
    assert "no-dispose" not in bugs_for("ag-ui", "detach")


@pytest.mark.parametrize(
    ("name", "wire", "policy", "reason"),
    [
        ("agui-resend-text", "typed-frames", "dispose", "mutant of the ag-ui wire"),
        ("aisdk-no-done", "ag-ui", "dispose", "mutant of the ai-sdk-ui wire"),
        ("untyped-frames", "ai-sdk-ui", "dispose", "defect of the typed frames"),
        ("no-dispose", "typed-frames", "detach", "defect of disposal"),
        ("detach-persist-twice", "ag-ui", "dispose", "needs --on-disconnect detach"),
    ],
)
def test_a_mutant_where_it_means_nothing_is_refused(
    name: str, wire: str, policy: str, reason: str
) -> None:
    assert reason in (applies(name, wire, policy) or "")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=reason):
        Settings.from_env(ENV, bug=name, wire=wire, on_disconnect=policy)  # type: ignore[arg-type]


def test_settings_carry_the_wire_and_the_policy() -> None:
    settings = Settings.from_env(ENV, bug="agui-resend-text", wire="ag-ui")
    assert (settings.wire, settings.on_disconnect, settings.bug) == (
        "ag-ui",
        "dispose",
        "agui-resend-text",
    )
    assert Settings.from_env(ENV).wire == "typed-frames"


def test_list_bugs_is_per_wire() -> None:
    for wire in WIRES:
        listed = [line.split()[0] for line in describe_bugs(wire).splitlines()]
        assert listed == bugs_for(wire)


@pytest.mark.parametrize(
    "file", ["reference-ag-ui.yaml", "reference-ai-sdk-ui.yaml", "reference-ag-ui-detach.yaml"]
)
def test_the_target_files_list_mutants_that_apply_there(file: str) -> None:
    target = load_target(TARGETS / file)
    assert target.profile in WIRES
    wire = target.profile
    assert set(target.bugs) <= set(bugs_for(wire, target.on_disconnect))  # type: ignore[arg-type]
    command = " ".join(target.command or ())
    assert f"--wire {wire}" in command
    assert ("--on-disconnect detach" in command) == (target.on_disconnect == "detach")
    if target.on_disconnect == "dispose":
        assert list(target.bugs) == bugs_for(wire)  # type: ignore[arg-type]
