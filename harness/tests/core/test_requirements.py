"""Verdict builders: ``at`` (when the broken rule showed) is kept on a verdict that did not
pass, and dropped from a pass, so a picture never marks a moment for a rule that held. The
registry: loaded on first lookup, so a process that judges nothing never builds a rule."""

from __future__ import annotations

import subprocess
import sys

import pytest

from streamproof.core.requirements import (
    REGISTRY,
    Registry,
    Requirement,
    expectation,
    from_violations,
    judge,
)
from streamproof.core.verdicts import Level, Outcome
from streamproof.suites import A2A_CLIENT, BROWSER_CLIENT, GATEWAY
from streamproof.suites.gateway import requirements as _gateway_rules  # noqa: F401  (registers them)
from streamproof.suites.gateway.requirements import AG_UI, AI_SDK_UI

CLIENT = "streamproof.suites.a2a_client.reference.client"


def test_a_failed_or_unmet_verdict_keeps_its_moment() -> None:
    failed = from_violations("GW-FRAME-ID-COUNTER", ["frame #4 repeats"], rule="r", ok="ok", at=0.5)
    assert failed.outcome is Outcome.FAIL and failed.at == 0.5
    unmet = judge("GW-FRAME-ID-FRESH", False, "GW-FRAME-ID-FRESH: shared", at=0.7)
    assert unmet.outcome is Outcome.NON_STRICT and unmet.at == 0.7
    missed = expectation("expect.frames", False, "other frames", at=1.5)
    assert missed.outcome is Outcome.FAIL and missed.at == 1.5


def test_a_pass_has_no_moment_even_when_one_is_given() -> None:
    assert from_violations("GW-FRAME-ID-COUNTER", [], rule="r", ok="ok", at=0.5).at is None
    assert judge("GW-FRAME-ID-FRESH", True, "fine", at=0.7).at is None
    assert expectation("expect.frames", True, "as expected", at=1.5).at is None
    assert judge("GW-FRAME-ID-FRESH", False, "GW-FRAME-ID-FRESH: x").at is None  # none given


def _rule(id: str) -> Requirement:
    return Requirement(
        id=id, level=Level.MUST, statement="s", seed="seed", section="x", kind="gateway"
    )


def test_the_registry_runs_its_loaders_once_on_the_first_lookup() -> None:
    registry = Registry()
    loads: list[str] = []

    def load() -> None:
        loads.append("loaded")
        registry.add(_rule("B"))
        registry.add(_rule("A"))
        registry.put_first([_rule("A")])

    registry.add_loader(load)
    assert loads == []  # adding a loader builds nothing
    assert "A" in registry and list(registry) == ["A", "B"] and len(registry) == 2
    assert registry["B"].id == "B" and registry.get("C") is None
    assert loads == ["loaded"]


def test_an_id_registered_twice_with_another_rule_is_an_error() -> None:
    registry = Registry()
    registry.add(_rule("A"))
    registry.add(_rule("A"))  # the same rule again (a module imported twice) is fine
    with pytest.raises(ValueError, match="registered twice"):
        registry.add(_rule("A").model_copy(update={"statement": "other"}))


def test_every_suites_rules_are_found_gateway_seed_rules_first() -> None:
    ids = list(REGISTRY)
    assert ids[0] == GATEWAY[0].id
    seed = [r.id for r in (*GATEWAY, *A2A_CLIENT, *BROWSER_CLIENT)]
    assert ids[: len(seed)] == seed
    assert {r.id for r in (*AG_UI, *AI_SDK_UI)} == set(ids[len(seed) :])


def test_the_reference_a2a_client_starts_without_building_any_rule() -> None:
    """Started once per turn (docs/explanation/performance.md): importing the program and its
    packages
    must not import a suite's rules, the scenario files' YAML parser or httpx's own command
    line. Read from the interpreter's import log of the real program."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", CLIENT, "--list-bugs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines()}
    assert {
        "a2a.client",
        "streamproof.suites",
        "streamproof.core.requirements",
    } <= imported  # the log is read
    unwanted = {
        "streamproof.suites.gateway.requirements",
        "streamproof.suites.a2a_client.requirements",
        "yaml",
        "rich",
        "click",
        "pygments",
    }
    assert imported & unwanted == set()
    assert "no-watchdog" in run.stdout
