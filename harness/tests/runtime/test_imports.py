"""import_early: the modules named are imported now; a name that does not exist is skipped.
Each test runs in a fresh interpreter, so that nothing is imported before it looks."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _fresh(*lines: str) -> str:
    """What ``lines`` print, run in a fresh interpreter (which must exit 0)."""
    run = subprocess.run(
        [sys.executable, "-c", "import sys\n" + "\n".join(lines)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_named_modules_are_imported_and_a_missing_one_is_skipped() -> None:
    out = _fresh(
        "from streamproof.runtime.imports import import_early",
        "before = 'colorsys' in sys.modules",
        "import_early(['streamproof_no_such_module', 'colorsys'])",
        "print(before, 'colorsys' in sys.modules, 'streamproof_no_such_module' in sys.modules)",
    )
    assert out.split() == ["False", "True", "False"]


@pytest.mark.slow  # a fresh interpreter imports google-adk and a2a-sdk: about 2 CPU-s
def test_the_references_import_their_first_turn_modules_with_themselves() -> None:
    """What the reference gateway and client list is imported when they are: a warm start's
    zygote imports only the module, then holds them for every child."""
    out = _fresh(
        "from streamproof.suites.gateway.reference import agent",
        "from streamproof.suites.a2a_client.reference import client",
        "names = (*agent.FIRST_TURN_IMPORTS, *client.FIRST_CALL_IMPORTS)",
        "print(' '.join(n for n in names if n not in sys.modules))",
    )
    assert out.split() == []
