"""``-n N`` hands the scenarios out longest first (harness/streamproof/plugin/xdist.py): the order
from
the last report's durations, and the scheduler that applies it to xdist's pending items. A real
parallel run's verdicts against a serial one's are the comparison test's
(cli/test_run_parallel.py) and the parallel bench's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamproof.plugin import xdist as pytest_parallel
from streamproof.plugin.xdist import order_longest_first


def test_longest_first_by_the_durations_unknown_ones_as_their_median() -> None:
    ids = ["a", "b", None, "c", "d", "e"]
    durations = {"a": 1.0, "b": 5.0, "c": 3.0, "zz": 99.0}  # zz: not selected, not counted
    # known of these: 1, 3, 5 -> median 3; d and e count 3 and keep their order after c.
    assert order_longest_first(ids, durations) == [1, 3, 4, 5, 0, 2]
    assert order_longest_first(ids, {"zz": 99.0}) == [0, 1, 2, 3, 4, 5]  # none known: as is


class _Config:
    def __init__(self, root: Path, results: Path) -> None:
        self.rootpath = root
        self.stash = pytest.Stash()
        self._options = {
            "maxschedchunk": None,
            "--streamproof-durations-from": str(results),
            "--streamproof-report-dir": None,
        }

    def getoption(self, name: str, default: Any = None) -> Any:
        return self._options.get(name, default)

    def getini(self, name: str) -> list[Path]:
        assert name == "streamproof_dirs"
        return [self.rootpath / "scenarios"]


class _Load:
    """The part of xdist's LoadScheduling the scheduler builds on."""

    def __init__(self, config: Any, log: Any = None) -> None:
        self.config = config
        self.maxschedchunk = config.getoption("maxschedchunk")
        self.collection: list[str] | None = None
        self.pending: list[int] = []
        self.sent: list[list[int]] = []

    def _send_tests(self, node: Any, num: int) -> None:
        self.sent.append(self.pending[:num])
        del self.pending[:num]


def test_the_scheduler_hands_out_the_scenarios_longest_first_one_at_a_time(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            {
                "tool": "streamproof",
                "scenarios": [
                    {"id": "gateway/short", "duration_s": 0.5},
                    {"id": "gateway/long", "duration_s": 9.0},
                    {"id": "a2a_client/mid", "duration_s": 2.0},
                ],
            }
        )
    )
    scheduler = pytest_parallel._make_longest_first(_Load)(_Config(tmp_path, results))
    assert scheduler.maxschedchunk == 1  # beyond the two a worker holds, one at a time
    scheduler.collection = [
        "scenarios/gateway/short.yaml::gateway/short",
        "tests/test_other.py::test_it",
        "scenarios/a2a_client/mid.yaml::a2a_client/mid",
        "scenarios/gateway/long.yaml::gateway/long",
    ]
    scheduler.pending[:] = range(4)
    scheduler._send_tests(None, 2)
    scheduler._send_tests(None, 1)
    scheduler._send_tests(None, 1)
    assert scheduler.sent == [[3, 2], [0], [1]]  # long, mid, short, then the other test
