"""The reset benchmark runs with tiny sizes and prints its table: a column per kind of reset,
every row filled (figures are its output, never asserted: no timed tests)."""

from __future__ import annotations

import pytest

from streamproof.bench.reset_overhead import KINDS, main


@pytest.mark.slow  # a whole benchmark (servers, processes), if tiny
def test_a_tiny_run_prints_a_column_per_kind_of_reset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--resets", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("reset overhead benchmark: 2 resets of each kind")
    assert [k.strip() for k in lines[1].split("  ") if k.strip()] == list(KINDS)
    labels = ["resets", "median ms", "p95 ms", "max ms", "over 50 ms", "p95 within goal"]
    for label, line in zip(labels, lines[2:], strict=True):
        assert line.startswith(label), (label, line)
        values = line[len(label) :].split()
        assert len(values) == len(KINDS), line
    assert lines[2].split()[1:] == ["2"] * len(KINDS)
    assert set(lines[-1].split()[-len(KINDS) :]) <= {"yes", "no"}


@pytest.mark.parametrize("args", [["--resets", "0"], ["--time-limit", "-1"]])
def test_bad_sizes_are_a_usage_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    assert "must be positive" in capsys.readouterr().err
