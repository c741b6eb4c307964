"""import_early: the modules named are imported now; a name that does not exist is skipped."""

from __future__ import annotations

import subprocess
import sys


def test_named_modules_are_imported_and_a_missing_one_is_skipped() -> None:
    # In a fresh interpreter, so that the module is certainly not imported before.
    code = (
        "import sys\n"
        "from streamproof.runtime.imports import import_early\n"
        "assert 'colorsys' not in sys.modules\n"
        "import_early(['streamproof_no_such_module', 'colorsys'])\n"
        "assert 'colorsys' in sys.modules\n"
        "assert 'streamproof_no_such_module' not in sys.modules\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_the_references_import_their_first_turn_modules_with_themselves() -> None:
    """What the reference gateway and client list is imported when they are (in a fresh
    interpreter): a warm start's zygote imports only the module, then holds them for every
    child."""
    code = (
        "import sys\n"
        "from streamproof.suites.gateway.reference import agent\n"
        "from streamproof.suites.a2a_client.reference import client\n"
        "names = (*agent.FIRST_TURN_IMPORTS, *client.FIRST_CALL_IMPORTS)\n"
        "print(' '.join(n for n in names if n not in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == []
