from pathlib import Path

from streamproof.bench.suite_run import KILLED, run_suite


def test_a_run_of_a_missing_selection_is_bad_input_with_its_report(tmp_path: Path) -> None:
    run = run_suite([str(tmp_path / "no-such-scenarios"), "-q"], tmp_path / "report", 120)
    assert run.exit_status == 2
    assert run.wall_s > 0 and run.load >= 0
    if run.results is None:
        assert run.problem and run.problem.startswith("no results.json")
    else:
        assert run.problem is None and "summary" in run.results


def test_a_run_past_its_bound_is_killed_and_says_so(tmp_path: Path) -> None:
    run = run_suite(["scenarios", "-q"], tmp_path / "report", 0.05)
    assert run.exit_status == KILLED
    assert run.problem == "killed after 0 s"
    assert run.results is None
