"""The suite covers the seeds: every requirement has a scenario, every MUST a mutant, and
docs/reference/requirements.md's table is the registry's."""

from __future__ import annotations

import re
from pathlib import Path

from streamproof.core.verdicts import Level
from streamproof.mutants.matrix import default_suites
from streamproof.suites import REGISTRY
from streamproof.suites.coverage import (
    PROFILES_END,
    PROFILES_START,
    TABLE_END,
    TABLE_START,
    profiles_table,
    requirements_table,
    scenarios_by_requirement,
)

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "scenarios"
DOCS = ROOT / "docs"


def test_every_requirement_has_a_scenario() -> None:
    covered = scenarios_by_requirement([SCENARIOS])
    # A concurrency requirement is judged on every scenario run with --concurrency K, a wire's
    # own rule on every scenario run against a target of that profile.
    missing = [
        rid for rid, r in REGISTRY.items() if not covered.get(rid) and r.everywhere() is None
    ]
    assert not missing, f"requirements no scenario names: {missing}"


def test_every_must_has_a_mutant() -> None:
    """... that the mutant matrix runs: the mutants of every bundled reference, the gateway's
    on each of its wires and under the detach policy included."""
    killers = {r for suite in default_suites() for r in suite.intended.values()}
    missing = [r.id for r in REGISTRY.values() if r.level is Level.MUST and r.id not in killers]
    assert not missing, f"MUST requirements no mutant is meant to fail: {missing}"


def test_every_mutant_targets_a_known_requirement() -> None:
    unknown = {
        (suite.name, bug): r
        for suite in default_suites()
        for bug, r in suite.intended.items()
        if r not in REGISTRY
    }
    assert not unknown


def test_docs_requirements_table_is_the_registry() -> None:
    page = (DOCS / "reference" / "requirements.md").read_text(encoding="utf-8")
    start, end = page.index(TABLE_START), page.index(TABLE_END)
    shown = page[start + len(TABLE_START) : end].strip()
    assert shown == requirements_table([SCENARIOS]), (
        "docs/reference/requirements.md's table is stale: regenerate it with "
        "scripts/regen-docs-tables"
    )


def test_docs_profiles_table_is_the_profiles() -> None:
    page = (DOCS / "reference" / "gateway-profiles.md").read_text(encoding="utf-8")
    start, end = page.index(PROFILES_START), page.index(PROFILES_END)
    shown = page[start + len(PROFILES_START) : end].strip()
    assert shown == profiles_table(), (
        "docs/reference/gateway-profiles.md's table is stale: regenerate it with "
        "scripts/regen-docs-tables"
    )


def test_docs_library_example_is_the_tested_one() -> None:
    """docs/how-to/pytest.md shows the tested example: the page's copy is the test file."""
    page = (DOCS / "how-to" / "pytest.md").read_text(encoding="utf-8")
    example = (
        ROOT / "harness" / "tests" / "project" / "test_example_checks_library.py"
    ).read_text()
    block = re.search(r"```python\n(# Docs example.*?)```", page, re.DOTALL)
    assert block is not None, "docs/how-to/pytest.md has no checks-as-a-library example"
    assert block.group(1) == example
