"""The CLI's input handling: validate, schema, list, and bad input to run (exit 2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from streamproof.cli import main
from streamproof.faults.engines.toxiproxy.server import TOXIPROXY_VERSION

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "scenarios"


def test_validate_bundled(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(SCENARIOS)]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_validate_reports_file_line_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "id: x\ntitle: t\nrequirements: [GW-AUTH]\nmodel: [{chunks: [a], times: 0}]\nrequest: 5\n"
    )
    assert main(["validate", str(bad), str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[:3] == [
        f"{tmp_path / 'missing.yaml'}: no such file or folder",
        f"{bad}:4: model[0].times: times must be at least 1 (or 'forever')",
        f"{bad}:5: request: Input should be a valid dictionary or instance of ChatRequest",
    ]


def gateway_ids() -> list[str]:
    from streamproof.suites.loading import load_scenarios

    return [
        e.scenario.id for f in (SCENARIOS / "gateway").glob("*.yaml") for e in load_scenarios(f)
    ]


def test_validate_recognises_target_files(capsys: pytest.CaptureFixture[str]) -> None:
    gateway = ROOT / "harness" / "streamproof" / "suites" / "gateway" / "reference-gateway.yaml"
    client = ROOT / "harness" / "streamproof" / "suites" / "a2a_client" / "reference-client.yaml"
    assert main(["validate", str(gateway), str(client), str(SCENARIOS / "gateway")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        f"{gateway}: ok: target file (gateway)",
        f"{client}: ok: target file (a2a-client)",
    ]
    files = len(list((SCENARIOS / "gateway").glob("*.yaml")))
    assert out[2:] == [f"ok: {len(gateway_ids())} scenario(s) in {files} file(s)"]


def test_validate_reports_every_problem_of_a_target_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "my-target.yaml"
    target.write_text("kind: a2a-client\ncomand: [x]\nstartup_grace: soon\n")
    assert main(["validate", str(target)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{target}:1: command: Field required",
        f"{target}:2: comand: unknown key; did you mean 'command'?",
        f"{target}:3: startup_grace: 'soon' is not a duration; write it as a number with a "
        "unit: '250ms', '40s', '1.5m', '2h'",
    ]


DUPLICATE = (
    "id: gateway/twice\ntitle: t\nrequirements: [GW-AUTH]\nmodel: [{chunks: [a]}]\nrequest: hi\n"
)


def _two_files_one_id(folder: Path) -> tuple[Path, Path]:
    first, second = folder / "a.yaml", folder / "b.yaml"
    first.write_text(DUPLICATE)
    second.write_text("# the same id again\n" + DUPLICATE)
    return first, second


def test_validate_rejects_an_id_used_in_two_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = _two_files_one_id(tmp_path)
    assert main(["validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{second}:2: id: duplicate scenario id 'gateway/twice', first at {first}:1"
    ]
    # A file named twice (a folder and a file in it) is not a duplicate of itself.
    second.unlink()
    assert main(["validate", str(tmp_path), str(tmp_path / "." / "a.yaml")]) == 0
    assert capsys.readouterr().out == "ok: 1 scenario(s) in 1 file(s)\n"


def test_run_rejects_an_id_used_in_two_files_as_bad_input(tmp_path: Path) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    first, second = _two_files_one_id(folder)
    reports = tmp_path / "reports"
    run = subprocess.run(
        [sys.executable, "-m", "streamproof.cli", "run", str(folder), "--report-dir", str(reports)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert (
        f"{second}:2: id: duplicate scenario id 'gateway/twice', first at {first}:1" in run.stdout
    )


def test_schema_covers_every_scenario_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "streamproof scenario"
    assert [b["$ref"] for b in schema["oneOf"]] == [
        "#/$defs/GatewayScenario",
        "#/$defs/A2AClientScenario",
        "#/$defs/BrowserClientScenario",
    ]
    assert "model" in schema["$defs"]["GatewayScenario"]["required"]


def test_schema_target_covers_every_target_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--target"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "streamproof target file"
    assert [b["$ref"] for b in schema["oneOf"]] == [
        "#/$defs/GatewayTarget",
        "#/$defs/ClientTarget",
        "#/$defs/BrowserTarget",
    ]


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled suites are this repository's, however this harness was put on sys.path
    (the wheel test in project/test_packaging.py finds them the installed way)."""
    monkeypatch.setattr("streamproof.runtime.bundled.bundled_scenarios", lambda: SCENARIOS)
    return SCENARIOS


def test_list_shows_requirements_and_scenarios(
    bundled: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # from any folder
    assert main(["list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["GW-NO-TOOL-LEAK"]["level"] == "MUST"
    assert "gateway/one-tool-call-streamed" in rows["GW-NO-TOOL-LEAK"]["scenarios"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no/such/dir"], "no/such/dir: no such file or folder"),
        (["run", str(SCENARIOS), "--time-scale", "0"], "--time-scale must be a positive number"),
        (["run", str(SCENARIOS), "--bug", "no-such-bug"], "--bug no-such-bug: unknown"),
        (
            ["run", str(SCENARIOS), "--concurrency", "0"],
            "--concurrency must be 1 to 32 sessions at once, not 0",
        ),
        (
            ["run", str(SCENARIOS), "--concurrency", "33"],
            "--concurrency must be 1 to 32 sessions at once, not 33",
        ),
    ],
)
def test_run_rejects_bad_input(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_target_that_lists_its_bugs_takes_only_those(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamproof.suites import known_bugs
    from streamproof.suites.a2a_client.reference.mutants import BUGS

    own = tmp_path / "own.yaml"
    own.write_text(
        "kind: a2a-client\ncommand: [x]\nbug_env: MY_BUG\nbugs: [no-watchdog, my-own-bug]\n"
    )
    assert known_bugs(own) == ["no-watchdog", "my-own-bug"]
    assert set(BUGS) <= set(known_bugs(None))  # no target, or one without bugs: the references'
    unreadable = tmp_path / "broken.yaml"
    unreadable.write_text("kind: [")
    assert set(BUGS) <= set(known_bugs(unreadable))
    reports = str(tmp_path / "reports")
    argv = ["run", str(SCENARIOS), "--target", str(own), "--bug", "gap-loss"]
    assert main([*argv, "--report-dir", reports]) == 2
    assert "--bug gap-loss: unknown; choose one of no-watchdog, my-own-bug" in (
        capsys.readouterr().err
    )


def test_run_rejects_bad_target_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "t.yaml"
    target.write_text("kind: gateway\ncommand: [x]\nurl: http://127.0.0.1:1\n")
    reports = str(tmp_path / "reports")
    assert main(["run", str(SCENARIOS), "--target", str(target), "--report-dir", reports]) == 2
    assert "exactly one of 'command' or 'url'" in capsys.readouterr().err


def test_no_path_means_the_bundled_suites_not_a_scenarios_folder_here(
    bundled: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from streamproof.cli.paths import default_paths

    monkeypatch.chdir(tmp_path)
    assert default_paths() == [str(bundled)]
    assert capsys.readouterr().err == ""
    (tmp_path / "scenarios").mkdir()
    assert default_paths() == [str(bundled)]
    assert "not the scenarios/ folder here (name it to run it" in capsys.readouterr().err
    monkeypatch.chdir(bundled.parent)  # the repository: its scenarios/ folder is the bundled one
    assert default_paths() == [str(bundled)]
    assert capsys.readouterr().err == ""


def test_without_bundled_suites_run_says_so_and_list_shows_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("streamproof.runtime.bundled.bundled_scenarios", lambda: None)
    monkeypatch.chdir(tmp_path)
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert "no PATH given and this streamproof has no bundled suites" in err
    report = json.loads((tmp_path / "reports" / "results.json").read_text())
    assert "no bundled suites" in report["summary"]["error"]
    assert main(["list"]) == 0
    out, err = capsys.readouterr()
    assert "scenarios: (none)" in out and "no bundled suites" in err


def test_a_bad_target_file_gets_every_problem_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "t.yaml"
    target.write_text("kind: gateway\ncommand: [x]\nport: -3\nlistning_pattern: 'x (\\d+)'\n")
    assert (
        main(["run", str(SCENARIOS), "--target", str(target), "--report-dir", str(tmp_path)]) == 2
    )
    err = capsys.readouterr().err
    assert f"{target}:3: port:" in err
    assert f"{target}:4: listning_pattern: unknown key; did you mean 'listening_pattern'?" in err


def test_an_engine_this_machine_cannot_run_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamproof.faults.engines import EngineUnavailable

    def unavailable(name: str) -> object:
        raise EngineUnavailable(f"engine {name}: not built here (run scripts/bootstrap)")

    monkeypatch.setattr("streamproof.faults.engines.open_engine", unavailable)
    code = main(["run", str(SCENARIOS), "--engine", "toxiproxy", "--report-dir", str(tmp_path)])
    assert code == 2
    assert "--engine toxiproxy: engine toxiproxy: not built here" in capsys.readouterr().err
    assert "not built" in json.loads((tmp_path / "results.json").read_text())["summary"]["error"]


def test_engines_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    from streamproof.faults.engines.catalog import engines_table

    assert main(["engines"]) == 0
    assert capsys.readouterr().out.strip() == engines_table()


@pytest.mark.parametrize("module", ["streamproof", "streamproof.cli"])
def test_python_dash_m_is_the_command(module: str) -> None:
    """``python -m streamproof`` (and ``python -m streamproof.cli``) is ``streamproof``."""
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: streamproof ")


def test_run_starts_without_the_plugins_no_scenario_uses(tmp_path: Path) -> None:
    """Installed pytest plugins that serve other tests (hypothesis's imports hypothesis for a
    verbose run's header) are left out of ``streamproof run``: read from the modules a real
    run that selects nothing has imported (docs/explanation/performance.md)."""
    probe = (
        "import sys\n"
        "from streamproof.cli import main\n"
        "code = main(['run', '-k', 'no-scenario-is-called-this', '--report-dir', "
        f"{str(tmp_path)!r}])\n"
        "print('IMPORTED', code, *sorted(m for m in sys.modules if '.' not in m or "
        "m == 'streamproof.plugin'))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    line = next(x for x in run.stdout.splitlines() if x.startswith("IMPORTED"))
    code, *imported = line.split()[1:]
    assert code == "2", run.stdout + run.stderr  # nothing was judged
    assert {"pytest", "streamproof.plugin", "xdist"} <= set(imported)  # what a run needs
    assert set(imported) & {"hypothesis", "anyio.pytest_plugin", "ag_ui_validate"} == set()


def test_the_command_runs_the_exit_handlers_and_keeps_its_status_and_output() -> None:
    """``entry`` skips the interpreter's teardown, never the exit handlers or the output."""
    script = (
        "import atexit, sys\n"
        "from streamproof import cli\n"
        "atexit.register(lambda: print('exit handler ran', file=sys.stderr))\n"
        "sys.argv = ['streamproof', 'validate', sys.argv[1]]\n"
        "print('before', end='')\n"  # unflushed, on a pipe: must still arrive
        "cli.entry()\n"
    )
    ok = subprocess.run(
        [sys.executable, "-c", script, str(SCENARIOS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("beforeok: ")
    assert ok.stderr.strip().endswith("exit handler ran")
    bad = subprocess.run(
        [sys.executable, "-c", script, str(SCENARIOS / "no-such-file.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert "no such file or folder" in bad.stderr and "exit handler ran" in bad.stderr


@pytest.mark.slow  # two runs of two gateway scenarios (a reference gateway each)
def test_require_all_fails_a_scenario_this_install_cannot_run(tmp_path: Path) -> None:
    """Without it, a scenario whose engine is missing is skipped with a warning and the run
    passes on what it judged; with ``--require-all`` (a gate's choice) that scenario fails."""
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(SCENARIOS / "gateway" / "auth.yaml", suite / "auth.yaml")
    reset = yaml.safe_load((SCENARIOS / "gateway" / "model_link_reset.yaml").read_text())
    # A plan toxiproxy can carry out, on a link that must use it: valid, but not runnable here.
    reset["links"] = {"model": [{"when": {"after": "300ms"}, "do": "rst"}]}
    reset["links"]["engine"] = {"model": "toxiproxy"}
    (suite / "reset.yaml").write_text(yaml.safe_dump(reset, sort_keys=False))
    env = {**os.environ, "STREAMPROOF_TOXIPROXY": str(tmp_path / "no-toxiproxy-here")}

    def run(*extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        reports = tmp_path / f"reports{len(extra)}"
        argv = [sys.executable, "-m", "streamproof.cli", "run", str(suite), "--report-dir"]
        done = subprocess.run(
            [*argv, str(reports), *extra],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        return done, json.loads((reports / "results.json").read_text())["summary"]

    lenient, summary = run()
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert (summary["passed"], summary["skipped"], summary["not_run"]) == (1, 1, 0)
    assert summary["warnings"] == [
        "1 scenario(s) not judged: this scenario needs engine toxiproxy: "
        f"STREAMPROOF_TOXIPROXY={tmp_path / 'no-toxiproxy-here'} is not an executable file; "
        f"point it at a toxiproxy-server {TOXIPROXY_VERSION} binary, or unset it to use the "
        "project's own "
        "build (gateway/model-link-reset-mid-answer)"
    ]
    gate, summary = run("--require-all")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert (summary["passed"], summary["failed"], summary["not_run"]) == (1, 1, 1)
    assert "FAILED: 1 scenario(s) this install could not run (--require-all)" in gate.stdout
    assert "required (--require-all) but not run: this scenario needs engine toxiproxy" in (
        gate.stdout
    )
