"""Per-run report folders: each run gets its own, ``latest`` names the newest, retention
removes only old run folders of ours, and the reports at the top are this run's copies."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from streamproof.report.runs import (
    LATEST,
    RUNS,
    latest_run,
    new_run,
    point_latest,
    prune_runs,
    publish,
    run_folders,
)

T0 = dt.datetime(2025, 3, 4, 5, 6, 7, 890123, tzinfo=dt.UTC)


def _at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_a_run_gets_a_folder_and_latest_points_at_it(tmp_path: Path) -> None:
    folder = new_run(tmp_path, now=T0)
    assert folder == tmp_path / RUNS / "20250304T050607.890123Z" and folder.is_dir()
    latest = tmp_path / LATEST
    assert latest.is_symlink() and os.readlink(latest) == f"{RUNS}/{folder.name}"  # relative
    assert latest.resolve() == folder.resolve() and latest_run(tmp_path) == folder
    newer = new_run(tmp_path, now=_at(1))
    assert latest_run(tmp_path) == newer and (tmp_path / LATEST).is_symlink()


def test_two_runs_in_the_same_instant_get_distinct_folders_in_order(tmp_path: Path) -> None:
    first, second, third = (new_run(tmp_path, now=T0) for _ in range(3))
    assert len({first, second, third}) == 3
    assert run_folders(tmp_path) == [first, second, third]  # sorted = in order of creation
    assert second.name.endswith("Z-01") and latest_run(tmp_path) == third


def test_retention_keeps_the_newest_and_touches_nothing_else(tmp_path: Path) -> None:
    mine = tmp_path / RUNS / "my-notes"
    mine.mkdir(parents=True)
    (tmp_path / RUNS / "keep.txt").write_text("a user's file")
    (tmp_path / "mutants.json").write_text("{}")
    lookalike = tmp_path / "elsewhere" / "20000101T000000.000000Z"
    lookalike.mkdir(parents=True)
    (tmp_path / RUNS / "19990101T000000.000000Z").symlink_to(lookalike)  # a link, not ours
    created = [new_run(tmp_path, keep=3, now=_at(i)) for i in range(5)]
    assert run_folders(tmp_path) == created[-3:]  # this run included, the newest three
    assert mine.is_dir() and (tmp_path / RUNS / "keep.txt").is_file()
    assert (tmp_path / "mutants.json").is_file() and lookalike.is_dir()
    assert latest_run(tmp_path) == created[-1]


def test_keep_zero_keeps_every_run(tmp_path: Path) -> None:
    created = [new_run(tmp_path, keep=0, now=_at(i)) for i in range(4)]
    assert run_folders(tmp_path) == created
    assert prune_runs(tmp_path, 1) == created[:3] and run_folders(tmp_path) == created[-1:]


def test_without_symbolic_links_latest_is_a_text_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = new_run(tmp_path, now=T0)

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("symbolic links are not allowed here")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    second = new_run(tmp_path, now=_at(1))  # replaces the link with a file
    latest = tmp_path / LATEST
    assert not latest.is_symlink() and latest.read_text() == f"{RUNS}/{second.name}\n"
    assert latest_run(tmp_path) == second
    monkeypatch.undo()
    point_latest(tmp_path, first)  # and a link replaces the file again
    assert latest.is_symlink() and latest_run(tmp_path) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == [LATEST, RUNS]  # no scratch left


def test_publish_copies_this_runs_reports_and_removes_stale_ones(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").write_text("<stale/>")
    folder = new_run(tmp_path, now=T0)
    (folder / "results.json").write_text('{"run": 1}')
    publish(tmp_path, folder)
    assert (tmp_path / "results.json").read_text() == '{"run": 1}'
    assert not (tmp_path / "junit.xml").exists()  # this run wrote none
    assert latest_run(tmp_path) == folder
