"""Running a Node oracle script: the payloads encoded one event each, bounded runs, and a clear
error for every way it can go wrong (no Node, an old one, packages not installed or not the
locked ones, a timeout, a crash, output that is not the document)."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pytest

from harness.tests.conftest import require_executable
from streamproof.protocol.sse import decode
from streamproof.suites.gateway.oracles import node_script
from streamproof.suites.gateway.oracles.errors import OracleFailed, OracleUnavailable
from streamproof.suites.gateway.oracles.finding import OracleReport
from streamproof.suites.gateway.oracles.node_script import (
    INSTALL_COMMAND,
    encode_payloads,
    require_installed,
    run_script,
)


def test_each_payload_is_one_event_at_its_index() -> None:
    payloads = ['{"type":"start"}', "[DONE]", "two\nlines", " leading space"]
    assert [e.data for e in decode(encode_payloads(payloads))] == payloads


def test_an_empty_payload_is_refused() -> None:
    with pytest.raises(ValueError, match="payload 1 is empty"):
        encode_payloads(["{}", ""])


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_no_node_on_path_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OracleUnavailable, match="no node is on PATH") as caught:
        require_installed("ai")
    assert INSTALL_COMMAND in str(caught.value)


def test_an_old_node_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _executable(tmp_path / "node", "#!/bin/sh\necho v18.20.4\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OracleUnavailable, match=r"needs Node >= 20, not v18\.20\.4"):
        require_installed("ai")


def _project(tmp_path: Path, *, locked: str = "1.0.0", installed: str | None = "1.0.0") -> Path:
    """A stand-in oracles/node folder pinning package ``fake`` at ``locked``."""
    lock = {"packages": {"node_modules/fake": {"version": locked}}}
    (tmp_path / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    if installed is not None:
        meta = tmp_path / "node_modules" / "fake" / "package.json"
        meta.parent.mkdir(parents=True)
        meta.write_text(json.dumps({"name": "fake", "version": installed}), encoding="utf-8")
    return tmp_path


@pytest.fixture
def node() -> None:
    require_executable("node")


@pytest.mark.usefixtures("node")
def test_packages_not_installed_say_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_script, "NODE_DIR", _project(tmp_path, installed=None))
    with pytest.raises(OracleUnavailable, match="npm package fake is not installed") as caught:
        require_installed("fake")
    assert INSTALL_COMMAND in str(caught.value)


@pytest.mark.usefixtures("node")
def test_packages_not_the_locked_version_say_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(node_script, "NODE_DIR", _project(tmp_path, installed="0.9.0"))
    with pytest.raises(
        OracleUnavailable, match=r"holds fake 0\.9\.0 but package-lock\.json pins 1\.0\.0"
    ) as caught:
        require_installed("fake")
    assert INSTALL_COMMAND in str(caught.value)


def _run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str, timeout: float = 30.0
) -> OracleReport:
    monkeypatch.setattr(node_script, "NODE_DIR", _project(tmp_path))
    (tmp_path / "oracle.mjs").write_text(script, encoding="utf-8")
    return run_script("oracle.mjs", "fake", ['{"type":"RUN_STARTED"}'], timeout, OracleReport)


@pytest.mark.usefixtures("node")
def test_the_document_is_read_as_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = """
const parts = [];
for await (const part of process.stdin) parts.push(part);
const text = Buffer.concat(parts).toString();
console.log(JSON.stringify({library: "fake", version: "1.0.0", events: 1, findings: [
  {kind: "error", rule: "R1", message: text, index: 0}]}));
"""
    report = _run(tmp_path, monkeypatch, script)
    assert report.rules() == ("R1",)
    assert report.findings[0].message == 'data: {"type":"RUN_STARTED"}\n\n'


@pytest.mark.usefixtures("node")
def test_a_script_that_hangs_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started = time.monotonic()
    with pytest.raises(OracleFailed, match=r"no result within 0\.5 s over 1 events"):
        _run(tmp_path, monkeypatch, "setTimeout(() => {}, 60000);\n", timeout=0.5)
    assert time.monotonic() - started < 10


@pytest.mark.usefixtures("node")
def test_a_crash_gives_its_status_and_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(OracleFailed, match=r"exited with status 2: .*the oracle broke"):
        _run(tmp_path, monkeypatch, 'console.error("the oracle broke"); process.exit(2);\n')


@pytest.mark.usefixtures("node")
def test_output_that_is_not_the_document_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(OracleFailed, match="printed no OracleReport document") as caught:
        _run(tmp_path, monkeypatch, 'console.log("hello");\n')
    assert "'hello\\n'" in str(caught.value)
