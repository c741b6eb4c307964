"""The reference gateway's process (server.py): what ``main`` says without starting a server.
(How it ends, :func:`streamproof.runtime.process_exit.exit_now`, is tested in
runtime/test_process_exit.py; that it exits 0 on SIGTERM, in
suites/gateway/reference/test_server_process.py.)"""

from __future__ import annotations

import pytest

from streamproof.suites.gateway.reference.mutants import describe_bugs
from streamproof.suites.gateway.reference.server import main


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
