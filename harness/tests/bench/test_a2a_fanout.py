"""The fan-out benchmark runs with tiny sizes and prints its table: a column per path and
stream count, every row filled (figures are its output, never asserted: speed lives in
benchmarks, not in timed tests)."""

from __future__ import annotations

import pytest

from streamproof.bench import a2a_fanout
from streamproof.bench.a2a_fanout import fd_budget, main

ROWS = (
    "events/s",
    "scripted events/s",
    "stream wall s",
    "first event ms (p50)",
    "first event ms (p95)",
    "event latency ms (p50)",
    "event latency ms (p95)",
    "server peak RSS MiB",
    "KiB per stream",
    "server CPU (of one core)",
    "client CPU (of one core)",
    "listen queue overflows",
)


@pytest.mark.slow  # a whole benchmark (servers, processes), if tiny
def test_a_tiny_run_prints_a_column_per_path_and_count_and_every_row(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--streams", "2", "5", "--events", "3", "--interval", "0.01", "--rounds", "1"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if "direct x2" in line)
    assert lines[header].split() == ["direct", "x2", "inline", "x2", "direct", "x5", "inline", "x5"]
    table = lines[header + 1 :]
    for label, line in zip(ROWS, table, strict=True):
        assert line.strip().startswith(label), (label, line)
        values = line.strip()[len(label) :].split()
        assert len(values) == 4 and all(v for v in values), line


def test_the_descriptors_a_run_needs_follow_the_busiest_process() -> None:
    # the inline path holds three sockets a stream in the server's process, direct one
    assert fd_budget(1000, ["direct"]) < fd_budget(1000, ["direct", "inline"])
    assert fd_budget(1000, ["inline"]) >= 3000


def test_a_limit_too_low_to_raise_stops_the_run_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (256, 512))
    assert main(["--streams", "1000", "--rounds", "1"]) == 2
    err = capsys.readouterr().err
    assert "open-file limit is 256 (hard limit 512)" in err and "ulimit -Hn" in err


def test_a_soft_limit_below_the_hard_one_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    resource = pytest.importorskip("resource")
    set_to: list[tuple[int, int]] = []
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (256, 100_000))
    monkeypatch.setattr(resource, "setrlimit", lambda _which, limits: set_to.append(limits))
    assert a2a_fanout._ensure_fd_limit(3128) is None
    assert set_to == [(3128, 100_000)]


@pytest.mark.parametrize(
    "args", [["--streams", "0"], ["--events", "0"], ["--interval", "-1"], ["--time-limit", "0"]]
)
def test_bad_sizes_are_a_usage_error_naming_the_rule(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    assert "must be positive" in capsys.readouterr().err
