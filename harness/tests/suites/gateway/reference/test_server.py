"""The reference gateway's process (server.py): what ``main`` says without starting a server,
and ``exit_now``, which ends the process with its output flushed and its status kept."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.suites.gateway.reference.mutants import describe_bugs
from harness.suites.gateway.reference.server import main


def test_list_bugs_prints_the_wires_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list-bugs", "--wire", "ag-ui"]) == 0
    assert capsys.readouterr().out == describe_bugs("ag-ui", "dispose") + "\n"


def test_missing_environment_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("GOOGLE_GEMINI_BASE_URL", "STREAMPROOF_TOOL_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamproof-gateway: ") and len(err.strip().splitlines()) == 1
    assert "GOOGLE_GEMINI_BASE_URL" in err


def test_exit_now_keeps_the_status_and_the_unflushed_output() -> None:
    code = (
        "import sys\n"
        "from harness.suites.gateway.reference.server import exit_now\n"
        "print('to stdout', end='')\n"
        "sys.stderr.write('to stderr')\n"
        "exit_now(3)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "to stdout", "to stderr")
