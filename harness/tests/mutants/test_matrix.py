"""The mutant matrix behind ``streamproof mutants`` (harness/streamproof/mutants/matrix.py),
without real targets:
which runs it plans (``--only``), how many it runs at once (``--jobs``), how it reads each
run's ``results.json`` into a verdict, and the matrix it prints and writes. The subprocess a
run would start is replaced by one that writes the report a real run would have written."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.tests.gauges import steady
from streamproof import cli
from streamproof.mutants import matrix as mutants
from streamproof.mutants.matrix import (
    Matrix,
    Run,
    Suite,
    default_suites,
    failed_requirements,
    run_matrix,
)
from streamproof.targets.warm.command import RUN_PRELOAD

GATEWAY = Suite(
    "gateway",
    ("scenarios/gateway",),
    "targets/gateway.yaml",
    {"no-auth": "GW-AUTH", "slow-first": "GW-FIRST-BYTE"},
)
CLIENT = Suite("a2a-client", ("scenarios/a2a_client",), None, {"no-watchdog": "A2A-C-DEADLINE"})


def _report(**requirements: Mapping[str, int]) -> dict[str, Any]:
    return {"requirements": dict(requirements)}


# --- reading a results.json ----------------------------------------------------------------------


def test_failed_requirements_are_those_with_a_fail_or_a_non_strict_verdict() -> None:
    report = _report(
        B={"pass": 3, "fail": 1},
        A={"non-strict": 2},
        C={"pass": 4, "not-applicable": 1},
        D={"fail": 0, "non-strict": 0},
        E={},
    )
    assert failed_requirements(report) == ("A", "B")  # sorted, whatever the report's order
    assert failed_requirements({}) == ()  # a report with no requirements fails none


# --- one run's verdict ---------------------------------------------------------------------------


def _run(
    bug: str | None,
    failed: Sequence[str] = (),
    exit_code: int = 0,
    *,
    intended: str | None = None,
    error: str | None = None,
) -> Run:
    return Run("gateway", bug, intended, tuple(failed), exit_code, 1.0, error)


@pytest.mark.parametrize(
    ("run", "verdict", "ok"),
    [
        (_run(None), "pass", True),
        (_run(None, ["GW-AUTH"], 1), "REFERENCE FAILS", False),
        # a reference that fails no requirement but exits non-zero (a crash, a bad scenario)
        (_run(None, [], 3), "REFERENCE FAILS", False),
        (_run("no-auth", ["GW-AUTH"], 1, intended="GW-AUTH"), "killed", True),
        # caught by its requirement and others too: still killed, the others are shown
        (_run("no-auth", ["GW-AUTH", "GW-DONE"], 1, intended="GW-AUTH"), "killed", True),
        (_run("no-auth", ["GW-DONE"], 1, intended="GW-AUTH"), "caught elsewhere", False),
        (_run("no-auth", [], 0, intended="GW-AUTH"), "SURVIVED", False),
        # a mutant nobody meant for any requirement can never count as killed
        (_run("stray", ["GW-AUTH"], 1), "caught elsewhere", False),
        (_run("no-auth", [], -1, intended="GW-AUTH", error="boom"), "error", False),
        (_run(None, [], 0, error="no results.json"), "error", False),
    ],
)
def test_each_run_is_classified(run: Run, verdict: str, ok: bool) -> None:
    assert run.verdict == verdict
    assert run.ok is ok
    assert run.killed is (verdict == "killed")


def test_the_matrix_is_ok_only_when_every_run_is_and_there_is_one() -> None:
    killed = _run("no-auth", ["GW-AUTH"], 1, intended="GW-AUTH")
    assert not Matrix().ok  # nothing ran: nothing was proven
    assert Matrix([_run(None), killed]).ok
    assert not Matrix([_run(None), killed, _run("x", [], intended="GW-DONE")]).ok
    assert not Matrix([_run(None, ["GW-AUTH"], 1), killed]).ok


def test_render_and_json_show_every_run_and_what_else_failed() -> None:
    matrix = Matrix(
        [
            _run(None),
            _run("no-auth", ["GW-AUTH", "GW-DONE"], 1, intended="GW-AUTH"),
            _run("slow-first", [], 0, intended="GW-FIRST-BYTE"),
        ],
        wall_s=12.345,
    )
    assert matrix.requirements() == ["GW-AUTH", "GW-DONE", "GW-FIRST-BYTE"]
    lines = matrix.render().splitlines()
    assert lines[0].split() == ["mutant", "verdict", "intended", "also", "failed"]
    assert lines[1].split() == ["(gateway", "reference)", "pass", "-", "-"]
    assert lines[2].split() == ["no-auth", "killed", "GW-AUTH", "GW-DONE"]
    assert lines[3].split() == ["slow-first", "SURVIVED", "GW-FIRST-BYTE", "-"]
    assert lines[-1] == "requirements exercised: 3; runs: 3; wall time 12.3s"
    data = json.loads(json.dumps(matrix.to_json()))  # plain JSON, as mutants.json is written
    assert data["ok"] is False and data["wall_s"] == 12.35
    assert [(r["bug"], r["verdict"]) for r in data["runs"]] == [
        (None, "pass"),
        ("no-auth", "killed"),
        ("slow-first", "SURVIVED"),
    ]
    assert data["runs"][1]["failed"] == ["GW-AUTH", "GW-DONE"]
    assert data["runs"][1]["intended"] == "GW-AUTH" and data["runs"][1]["suite"] == "gateway"


# --- the plan: which runs, how many at once ------------------------------------------------------


class Recorder:
    """Stands in for one run: records what was asked, and how many ran at once. With
    ``hold=N`` the first N runs each wait (up to 1 s) for every planned run to start: a pool
    of N workers holds exactly N in flight then, and a pool that ran more at once would show
    them all."""

    def __init__(self, hold: int = 0, planned: int = 0) -> None:
        self.calls: list[tuple[str, str | None, float | None]] = []
        self.hold, self.planned = hold, planned
        self.running = 0
        self.most = 0
        self._cond = threading.Condition()

    def __call__(
        self, suite: Suite, bug: str | None, workdir: Path, time_scale: float | None
    ) -> Run:
        assert workdir.is_dir()
        with self._cond:
            self.calls.append((suite.name, bug, time_scale))
            self.running += 1
            self.most = max(self.most, self.running)
            self._cond.notify_all()
            if len(self.calls) <= self.hold:
                self._cond.wait_for(lambda: len(self.calls) >= self.planned, timeout=1.0)
            self.running -= 1
        intended = suite.intended.get(bug) if bug else None
        return Run(suite.name, bug, intended, (intended,) if intended else (), 0, 0.0)


def test_every_reference_and_every_mutant_runs_once_in_plan_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rec = Recorder()
    monkeypatch.setattr(mutants, "_run_one", rec)
    matrix = run_matrix([GATEWAY, CLIENT], jobs=3, time_scale=0.05)
    planned: list[tuple[str, str | None, float | None]] = [
        ("gateway", None, 0.05),
        ("gateway", "no-auth", 0.05),
        ("gateway", "slow-first", 0.05),
        ("a2a-client", None, 0.05),
        ("a2a-client", "no-watchdog", 0.05),
    ]
    assert sorted(rec.calls, key=planned.index) == planned  # each once, whatever the order
    # the matrix lists the runs in plan order, however the pool finished them
    assert [(r.suite, r.bug) for r in matrix.runs] == [(s, b) for s, b, _ in planned]
    assert matrix.ok and matrix.wall_s >= 0


def test_only_runs_the_named_mutants_and_no_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = Recorder()
    monkeypatch.setattr(mutants, "_run_one", rec)
    matrix = run_matrix([GATEWAY, CLIENT], only=["no-watchdog", "slow-first"])
    assert [(r.suite, r.bug) for r in matrix.runs] == [
        ("gateway", "slow-first"),
        ("a2a-client", "no-watchdog"),
    ]
    assert {t for _, _, t in rec.calls} == {None}  # no --time-scale unless asked


@pytest.mark.parametrize(("jobs", "most"), [(1, 1), (0, 1), (2, 2), (5, 5)])
def test_jobs_bounds_how_many_run_at_once(
    jobs: int, most: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Five runs; the first `most` wait for all five to start: N workers keep N in flight
    # then, never more (an unbounded pool would start all five). The cores' load is not
    # asked (busy_limit 1).
    rec = Recorder(hold=most, planned=5)
    monkeypatch.setattr(mutants, "_run_one", rec)
    matrix = run_matrix([GATEWAY, CLIENT], jobs=jobs, busy_limit=1.0)
    assert len(matrix.runs) == 5
    assert rec.most == most


class Overlap:
    """Stands in for one run of 50 ms and records how many ran at once."""

    def __init__(self) -> None:
        self.running = self.most = 0
        self._lock = threading.Lock()

    def __call__(
        self, suite: Suite, bug: str | None, workdir: Path, time_scale: float | None
    ) -> Run:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)
        with self._lock:
            self.running -= 1
        intended = suite.intended.get(bug) if bug else None
        return Run(suite.name, bug, intended, (intended,) if intended else (), 0, 0.05)


@pytest.mark.parametrize(("busy", "busy_limit", "most"), [(0.95, 0.85, 1), (0.95, 1.0, 3)])
def test_past_one_run_per_core_runs_start_only_while_the_cores_have_time(
    busy: float, busy_limit: float, most: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One core, three at most: while the cores are busy 95% of the time only the one run that
    # a core always gets is in flight; with the limit at 1 the ceiling alone decides.
    overlap = Overlap()
    monkeypatch.setattr(mutants, "_run_one", overlap)
    matrix = run_matrix(
        [GATEWAY, CLIENT], jobs=3, busy_limit=busy_limit, gauge=steady(busy), cores=1
    )
    assert len(matrix.runs) == 5 and matrix.ok
    assert overlap.most == most


def test_runs_start_longest_first_by_the_last_matrix_and_are_listed_in_plan_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rec = Recorder()
    monkeypatch.setattr(mutants, "_run_one", rec)
    last = {("gateway", None): 30.0, ("gateway", "slow-first"): 90.0, ("a2a-client", None): 40.0}
    matrix = run_matrix([GATEWAY, CLIENT], jobs=1, durations=last)
    # Unknown runs (no-auth, no-watchdog) count as the median, 40 s; ties keep the plan order.
    assert [(s, b) for s, b, _ in rec.calls] == [
        ("gateway", "slow-first"),
        ("gateway", "no-auth"),
        ("a2a-client", None),
        ("a2a-client", "no-watchdog"),
        ("gateway", None),
    ]
    assert [(r.suite, r.bug) for r in matrix.runs] == [
        ("gateway", None),
        ("gateway", "no-auth"),
        ("gateway", "slow-first"),
        ("a2a-client", None),
        ("a2a-client", "no-watchdog"),
    ]


def test_without_a_last_matrix_the_concurrent_runs_start_first() -> None:
    shared = Suite("gateway", (), None, {"a": "GW-A", "shared-draft": "GW-B"}, {"shared-draft": 4})
    plan = [(shared, None), (shared, "a"), (shared, "shared-draft"), (CLIENT, "no-watchdog")]
    assert mutants.longest_first(plan) == [2, 0, 1, 3]


def test_the_last_matrix_gives_each_runs_wall_and_nothing_when_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "mutants.json"
    matrix = Matrix(
        [
            Run("gateway", None, None, (), 0, 31.5),
            Run("gateway", "no-auth", "GW-AUTH", ("GW-AUTH",), 1, 40.25),
            Run("gateway", "slow-first", "GW-FIRST-BYTE", (), -1, 900.0, "no result"),
        ]
    )
    path.write_text(json.dumps(matrix.to_json()))
    assert mutants.durations_of_matrix(path) == {
        ("gateway", None): 31.5,
        ("gateway", "no-auth"): 40.25,
    }  # a run that gave no result says nothing of its length
    assert mutants.durations_of_matrix(tmp_path / "none.json") == {}
    path.write_text("[1, 2]")
    assert mutants.durations_of_matrix(path) == {}


# --- one run: the command it starts and what it makes of the outcome ---------------------------


class FakeCli:
    """Replaces ``run_to_end`` (``subprocess.run``, warm): checks the command line, then writes
    (or not) the ``results.json`` a real ``streamproof run`` would have written into
    --report-dir."""

    def __init__(self, write: Callable[[Path, list[str]], None] | None, exit_code: int) -> None:
        self.write, self.exit_code = write, exit_code
        self.argv: list[str] = []
        self.kwargs: dict[str, Any] = {}

    def __call__(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.argv, self.kwargs = argv, kwargs
        if self.write is not None:
            report_dir = Path(argv[argv.index("--report-dir") + 1])
            report_dir.mkdir(parents=True)
            self.write(report_dir, argv)
        return subprocess.CompletedProcess(argv, self.exit_code, "out " * 300, "Error: it broke")


def _results(failed: Mapping[str, Mapping[str, int]]) -> Callable[[Path, list[str]], None]:
    def write(report_dir: Path, argv: list[str]) -> None:
        (report_dir / "results.json").write_text(json.dumps(_report(**failed)))

    return write


def test_a_mutant_run_is_streamproof_run_strict_with_its_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeCli(_results({"GW-AUTH": {"fail": 2}, "GW-DONE": {"pass": 1}}), exit_code=1)
    monkeypatch.setattr(mutants, "run_to_end", fake)
    run = mutants._run_one(GATEWAY, "no-auth", tmp_path, 0.05)
    assert fake.argv[:4] == [sys.executable, "-m", "streamproof.cli", "run"]
    assert fake.argv[4:] == [
        "scenarios/gateway",
        "--strict",
        "-q",
        "--report-dir",
        str(tmp_path / "gateway-no-auth"),
        "--target",
        "targets/gateway.yaml",
        "--bug",
        "no-auth",
        "--time-scale",
        "0.05",
    ]
    assert fake.kwargs["cwd"] == str(mutants.ROOT) and fake.kwargs["timeout"] == 900
    assert fake.kwargs["preload"] == RUN_PRELOAD == ("streamproof.cli.preload",)
    assert (run.suite, run.bug, run.intended, run.failed) == (
        "gateway",
        "no-auth",
        "GW-AUTH",
        ("GW-AUTH",),
    )
    assert run.exit_code == 1 and run.error is None and run.verdict == "killed"


def test_a_reference_run_has_no_bug_and_a_suite_without_target_passes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeCli(_results({"A2A-C-DEADLINE": {"pass": 1}}), exit_code=0)
    monkeypatch.setattr(mutants, "run_to_end", fake)
    run = mutants._run_one(CLIENT, None, tmp_path, None)
    assert fake.argv[4:] == [
        "scenarios/a2a_client",
        "--strict",
        "-q",
        "--report-dir",
        str(tmp_path / "a2a-client-reference"),
    ]
    assert run.intended is None and run.failed == () and run.verdict == "pass"


def test_the_client_mutants_run_on_json_rpc_and_its_reference_on_every_binding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No mutant is binding-specific: the matrix keeps the REST runs to the reference's run."""
    (client,) = [s for s in default_suites() if s.name == "a2a-client"]
    assert client.mutant_runs == "not binding_rest"
    fake = FakeCli(_results({"A2A-C-DEADLINE": {"fail": 1}}), exit_code=1)
    monkeypatch.setattr(mutants, "run_to_end", fake)
    mutants._run_one(client, "no-watchdog", tmp_path, None)
    assert fake.argv[-2:] == ["-k", "not binding_rest"]
    mutants._run_one(client, None, tmp_path, None)
    assert "-k" not in fake.argv


def test_a_run_that_wrote_no_report_is_an_error_showing_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutants, "run_to_end", FakeCli(None, exit_code=2))
    run = mutants._run_one(GATEWAY, "no-auth", tmp_path, None)
    assert run.verdict == "error" and not run.ok and run.exit_code == 2
    assert run.error is not None and run.error.startswith("no results.json (exit 2): ")
    assert run.error.endswith("Error: it broke")  # the tail of what it printed
    assert len(run.error) < 900


def test_a_run_that_never_ends_is_an_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(argv, kwargs["timeout"])

    monkeypatch.setattr(mutants, "run_to_end", never)
    run = mutants._run_one(GATEWAY, "slow-first", tmp_path, None)
    assert run.verdict == "error" and run.error == "no result within 900s"
    assert run.intended == "GW-FIRST-BYTE" and run.exit_code == -1


# --- the bundled suites ---------------------------------------------------------------------------


def test_default_suites_are_every_kind_with_its_scenarios_reference_and_mutants() -> None:
    from streamproof.suites import kinds, suite

    suites = default_suites()
    by_name = {s.name: s for s in suites}
    assert len(by_name) == len(suites)  # each run's report directory is the suite's own
    for kind in kinds():  # the kind's default reference is the suite named after it
        described = suite(kind)
        default = by_name[kind]
        assert default.intended == dict(described.INTENDED) and default.intended
        assert default.target == str(described.DEFAULT_TARGET)
    for s in suites:
        assert s.intended
        assert len(s.paths) == 1 and Path(s.paths[0]).is_dir()
        assert list(Path(s.paths[0]).glob("*.yaml"))
        assert s.target is not None and Path(s.target).is_file()


def test_the_gateway_on_each_wire_is_a_suite_with_its_target_files_mutants() -> None:
    from streamproof.suites.gateway.reference.mutants import (
        CONCURRENT,
        EVERY_WIRE,
        WIRE_BUGS,
        WIRE_INTENDED,
    )
    from streamproof.suites.gateway.target.config import load_target

    suites = {s.name: s for s in default_suites()}
    wires = {"gateway-ag-ui": "agui-", "gateway-ai-sdk-ui": "aisdk-"}
    for name, prefix in wires.items():
        s = suites[name]
        assert s.paths == suites["gateway"].paths  # the same bundled scenarios
        assert list(s.intended) == list(load_target(s.target).bugs)
        own = {b for b in WIRE_BUGS if b.startswith(prefix)}
        assert set(s.intended) == own | EVERY_WIRE
        assert all(s.intended[b] == WIRE_INTENDED[b] for b in own)
        assert s.concurrent == {b: k for b, k in CONCURRENT.items() if b in EVERY_WIRE}
    detach = suites["gateway-ag-ui-detach"]
    assert detach.intended == {"detach-persist-twice": "GW-DETACH-PERSIST-ONCE"}
    # every wire mutant is proven in the matrix, on a suite that names its wire
    assert set(WIRE_BUGS) <= {b for n in (*wires, detach.name) for b in suites[n].intended}


# --- the command ---------------------------------------------------------------------------------


def test_the_command_runs_six_at_most_per_core_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[dict[str, Any]] = []

    def fake(suites: Sequence[Suite], **options: Any) -> Matrix:
        asked.append(options)
        return Matrix()

    monkeypatch.setattr(mutants, "run_matrix", fake)
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    reports = str(tmp_path / "r")
    cli.main(["mutants", "--report-dir", reports])
    cli.main(["mutants", "--jobs", "5", "--busy-limit", "0.7", "--report-dir", reports])
    assert [(o["jobs"], o["busy_limit"]) for o in asked] == [(18, 0.85), (5, 0.7)]


def test_the_command_refuses_unknown_mutants_zero_jobs_and_a_busy_limit_past_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutants, "_run_one", Recorder())
    reports = str(tmp_path / "r")
    assert cli.main(["mutants", "--only", "no-such-bug", "--report-dir", reports]) == 2
    err = capsys.readouterr().err
    assert "--only no-such-bug: unknown; choose from" in err and "no-auth" not in err.split()[0]
    assert cli.main(["mutants", "--jobs", "0", "--report-dir", reports]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
    for limit in ("0", "1.5"):
        assert cli.main(["mutants", "--busy-limit", limit, "--report-dir", reports]) == 2
        assert "a fraction above 0, at most 1" in capsys.readouterr().err
    assert cli.main(["mutants", "--suite", "gateway-json", "--report-dir", reports]) == 2
    err = capsys.readouterr().err
    assert "--suite gateway-json: unknown; choose from gateway, gateway-ag-ui," in err
    # --only names a mutant of the chosen suites
    argv = ["mutants", "--suite", "gateway-ai-sdk-ui", "--only", "agui-start-twice"]
    assert cli.main([*argv, "--report-dir", reports]) == 2
    assert "--only agui-start-twice: unknown" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # refused before anything ran


def test_suite_runs_only_the_named_references_and_their_mutants(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = Recorder()
    monkeypatch.setattr(mutants, "_run_one", rec)
    argv = ["mutants", "--suite", "gateway-ag-ui-detach", "--suite", "gateway-ai-sdk-ui"]
    assert cli.main([*argv, "--report-dir", str(tmp_path)]) == 0
    suites = {s.name: s for s in default_suites()}
    planned = [
        (name, bug)
        for name in ("gateway-ai-sdk-ui", "gateway-ag-ui-detach")  # in the matrix's order
        for bug in (None, *suites[name].intended)
    ]
    ran = [(name, bug) for name, bug, _ in rec.calls]  # in the order the pool took them
    assert sorted(ran, key=planned.index) == planned  # each once
    written = json.loads((tmp_path / "mutants.json").read_text())
    assert [(r["suite"], r["bug"]) for r in written["runs"]] == planned
    assert "(gateway-ai-sdk-ui reference)" in capsys.readouterr().out


@pytest.mark.parametrize(("failed", "code"), [(True, 0), (False, 1)])
def test_the_command_prints_the_matrix_writes_it_and_exits_by_it(
    failed: bool,
    code: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bug = default_suites()[0].intended
    name, requirement = next(iter(bug.items()))

    def one(suite: Suite, b: str | None, workdir: Path, time_scale: float | None) -> Run:
        caught = (requirement,) if failed else ()
        return Run(suite.name, b, requirement, caught, 1 if failed else 0, 0.1)

    monkeypatch.setattr(mutants, "_run_one", one)
    reports = tmp_path / "r"
    assert cli.main(["mutants", "--only", name, "--report-dir", str(reports)]) == code
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[:2] == [name, "killed" if failed else "SURVIVED"]
    written = json.loads((reports / "mutants.json").read_text())
    assert written["ok"] is failed and [r["bug"] for r in written["runs"]] == [name]


def test_the_reports_of_runs_that_were_not_ok_are_kept_and_nothing_older(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reference that failed and a mutant that survived keep their report folders in
    ``keep`` (the temporary ones go); a killed mutant's does not, nor an earlier matrix's."""

    def one(suite: Suite, bug: str | None, workdir: Path, time_scale: float | None) -> Run:
        report = workdir / f"{suite.name}-{bug or 'reference'}"
        report.mkdir()
        (report / "results.json").write_text("{}")
        if bug is None:
            return Run(suite.name, bug, None, ("GW-PROXY-HONOURED",), 1, 0.1)
        intended = suite.intended[bug]
        caught = (intended,) if bug == "no-auth" else ()
        return Run(suite.name, bug, intended, caught, 1 if caught else 0, 0.1)

    monkeypatch.setattr(mutants, "_run_one", one)
    keep = tmp_path / "reports" / "mutants"
    (keep / "gateway-old-bug").mkdir(parents=True)  # an earlier matrix's
    matrix = run_matrix([GATEWAY], keep=keep)
    assert [r.verdict for r in matrix.runs] == ["REFERENCE FAILS", "killed", "SURVIVED"]
    assert sorted(p.name for p in keep.iterdir()) == ["gateway-reference", "gateway-slow-first"]
    assert matrix.kept == (keep / "gateway-reference", keep / "gateway-slow-first")
    assert (keep / "gateway-reference" / "results.json").read_text() == "{}"
    assert f"the report of a run that was not ok: {keep / 'gateway-reference'}" in matrix.render()
    assert matrix.to_json()["kept"] == [str(p) for p in matrix.kept]


def test_a_file_where_the_reports_are_kept_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = Recorder()
    monkeypatch.setattr(mutants, "_run_one", rec)
    (tmp_path / "mutants").write_text("mine")
    assert cli.main(["mutants", "--report-dir", str(tmp_path)]) == 2
    assert "mutants is not a folder" in capsys.readouterr().err
    assert rec.calls == [] and (tmp_path / "mutants").read_text() == "mine"


def test_the_help_names_every_suite_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["mutants", "--help"])
    # argparse wraps lines after a hyphen too: join them back
    shown = " ".join(capsys.readouterr().out.split()).replace("- ", "-")
    for suite in mutants.default_suites():
        assert suite.name in shown, suite.name
