"""Sharding and parallel-run decisions, pure: no target, no worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamproof.runtime.parallel import (
    DurationsError,
    Shard,
    durations_of_report,
    merge_worker_records,
    parallel_refusal,
    parse_shard,
    parse_workers,
    split,
)
from streamproof.suites import suite
from streamproof.suites.loading import ScenarioIds, load_scenarios

ROOT = Path(__file__).resolve().parents[3]


def _bundled_ids() -> list[str]:
    """Every bundled scenario id, in the order a run collects them (files sorted by path)."""
    ids = ScenarioIds()
    files = sorted((ROOT / "scenarios").rglob("*.yaml"))
    return [entry.scenario.id for file in files for entry in load_scenarios(file, ids)]


def test_shard_values() -> None:
    assert parse_shard("1/2") == Shard(1, 2)
    assert parse_shard(" 3 / 3 ") == Shard(3, 3)
    assert str(parse_shard("2/5")) == "2/5"
    for bad, says in (
        ("0/2", "between 1 and N"),
        ("3/2", "between 1 and N"),
        ("1/0", "at least 1"),
        ("x", "is not I/N"),
        ("1/2/3", "is not I/N"),
        ("-1/2", "is not I/N"),
        ("", "is not I/N"),
    ):
        with pytest.raises(ValueError, match=says):
            parse_shard(bad)


def test_worker_values() -> None:
    assert parse_workers("auto") == "auto"
    assert parse_workers("4") == 4
    assert parse_workers("0") == 0
    for bad in ("-1", "two", "1.5"):
        with pytest.raises(ValueError):
            parse_workers(bad)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_shards_of_the_bundled_suites_are_disjoint_and_complete(count: int) -> None:
    ids = _bundled_ids()
    assert len(ids) >= 40
    parts = split(ids, count)
    chosen = [i for part in parts for i in part]
    assert sorted(chosen) == list(range(len(ids)))  # every scenario once: disjoint, complete
    sizes = [len(part) for part in parts]
    assert max(sizes) - min(sizes) <= 1  # by count: as even as it gets
    assert all(part == sorted(part) for part in parts)  # each part in collection order
    assert split(ids, count) == parts  # deterministic


def test_shards_balanced_by_recorded_durations(tmp_path: Path) -> None:
    ids = _bundled_ids()
    # A skewed suite: a few long scenarios, most short (as the proxy-timeout stories are).
    durations = {sid: (30.0 if n % 9 == 0 else 1.0 + (n % 4)) for n, sid in enumerate(ids)}
    report = {
        "tool": "streamproof",
        "scenarios": [{"id": sid, "duration_s": d} for sid, d in durations.items()],
    }
    file = tmp_path / "results.json"
    file.write_text(json.dumps(report))
    read = durations_of_report(file)
    assert read == durations
    for count in (2, 3, 4):
        parts = split(ids, count, read)
        assert sorted(i for part in parts for i in part) == list(range(len(ids)))
        loads = [sum(read[ids[i]] for i in part) for part in parts]
        # Longest first to the least loaded part: no part exceeds another by more than the
        # longest scenario.
        assert max(loads) - min(loads) <= max(read.values())
        by_count = [sum(read[ids[i]] for i in part) for part in split(ids, count)]
        assert max(loads) <= max(by_count)  # never worse than splitting by count


def test_a_scenario_the_durations_do_not_know_counts_as_their_median() -> None:
    ids = ["a", "b", "c", "new"]
    parts = split(ids, 2, {"a": 10.0, "b": 1.0, "c": 1.0})
    # median 1: a alone on one part, b, c and the new one on the other
    assert parts == [[0], [1, 2, 3]]


def test_durations_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(DurationsError, match=r"none\.json: no such file"):
        durations_of_report(missing)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(DurationsError, match="not JSON"):
        durations_of_report(broken)
    other = tmp_path / "other.json"
    other.write_text('{"tool": "else"}')
    with pytest.raises(DurationsError, match=r"not a streamproof results\.json"):
        durations_of_report(other)


def _gateway_target(tmp_path: Path, extra: str) -> object:
    file = tmp_path / "target.yaml"
    file.write_text(f"name: mine\n{extra}")
    return suite("gateway").load_target(file)


def test_targets_that_cannot_run_on_two_workers(tmp_path: Path) -> None:
    url = _gateway_target(tmp_path, "url: http://127.0.0.1:8080\n")
    problem = parallel_refusal(url, 2)
    assert problem is not None and "attached by url" in problem and "-n 1" in problem
    assert parallel_refusal(url, 1) is None
    assert parallel_refusal(url, 0) is None
    assert parallel_refusal(url, "auto") is not None
    fixed = _gateway_target(tmp_path, "command: [python, gw.py]\nport: 8123\n")
    problem = parallel_refusal(fixed, 4)
    assert problem is not None and "fixed port 8123" in problem
    fakes = _gateway_target(tmp_path, "command: [python, gw.py]\nfakes: {model: 9001}\n")
    problem = parallel_refusal(fakes, 2)
    assert problem is not None and "model 9001" in problem
    free = _gateway_target(tmp_path, "command: [python, gw.py]\nport: auto\n")
    assert parallel_refusal(free, 4) is None
    reference = suite("gateway").load_target(None)
    assert parallel_refusal(reference, 4) is None
    client = suite("a2a-client").load_target(None)
    assert parallel_refusal(client, 4) is None


def test_worker_records_merge_in_collection_order() -> None:
    order = ["f::a", "f::b", "f::c", "f::d"]
    merged = merge_worker_records(
        order,
        [
            [("f::c", {"id": "c"}), ("f::a", {"id": "a"})],
            [("f::d", {"id": "d"}), ("elsewhere", {"id": "x"}), ("f::b", {"id": "b"})],
        ],
    )
    assert [r["id"] for r in merged] == ["a", "b", "c", "d", "x"]
