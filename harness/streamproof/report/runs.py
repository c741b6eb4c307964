"""One folder per ``streamproof run``: ``<report dir>/runs/<UTC timestamp>/`` holds that run's
``results.json``, ``junit.xml`` and ``report.html``, ``<report dir>/latest`` points at the newest,
and copies of its reports stay at ``<report dir>/results.json`` (and the others) for gates and
people that read those.

Folder names sort by time (``20250101T120000.123456Z``; a second run in the same microsecond gets
``-01``). Only folders with such a name under ``runs/`` are ours: retention removes nothing else.
``latest`` is a relative symbolic link (``runs/<name>``); where a link cannot be made it is a
text file holding that same relative path.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
from pathlib import Path

__all__ = [
    "DEFAULT_KEEP",
    "LATEST",
    "REPORT_FILES",
    "RUNS",
    "latest_run",
    "new_run",
    "point_latest",
    "prune_runs",
    "publish",
    "run_folders",
]

RUNS = "runs"
LATEST = "latest"
DEFAULT_KEEP = 20
"""Run folders kept by default (the newest; 0 keeps all)."""
REPORT_FILES = ("results.json", "junit.xml", "report.html")

_NAME = re.compile(r"\d{8}T\d{6}\.\d{6}Z(?:-\d{2})?")
_MAX_SAME_TIME = 100


def run_folders(report_dir: Path) -> list[Path]:
    """The run folders streamproof made under ``report_dir``, oldest first."""
    runs = report_dir / RUNS
    if not runs.is_dir():
        return []
    return sorted(
        p for p in runs.iterdir() if _NAME.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )


def prune_runs(report_dir: Path, keep: int) -> list[Path]:
    """Remove all but the newest ``keep`` run folders (``keep`` 0: remove them all); the
    folders removed. Nothing but our run folders is touched."""
    folders = run_folders(report_dir)
    doomed = folders[: max(len(folders) - keep, 0)]
    for folder in doomed:
        shutil.rmtree(folder)
    return doomed


def new_run(report_dir: Path, *, keep: int = DEFAULT_KEEP, now: dt.datetime | None = None) -> Path:
    """Make this run's folder and point ``latest`` at it, after removing old run folders so
    that, this one included, the newest ``keep`` remain (``keep`` 0: keep all)."""
    if keep > 0:
        prune_runs(report_dir, keep - 1)
    stamp = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    runs = report_dir / RUNS
    runs.mkdir(parents=True, exist_ok=True)
    for attempt in range(_MAX_SAME_TIME):
        folder = runs / (stamp if attempt == 0 else f"{stamp}-{attempt:02d}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        point_latest(report_dir, folder)
        return folder
    raise FileExistsError(f"{runs}: {_MAX_SAME_TIME} run folders named {stamp} already exist")


def point_latest(report_dir: Path, folder: Path) -> Path:
    """Make ``report_dir/latest`` name ``folder``: a relative symbolic link, or where links
    cannot be made a text file holding the relative path. Replaced in one step, never left
    half written."""
    latest = report_dir / LATEST
    target = f"{RUNS}/{folder.name}"
    scratch = report_dir / f".{LATEST}.{os.getpid()}"
    scratch.unlink(missing_ok=True)
    try:
        scratch.symlink_to(target, target_is_directory=True)
    except (OSError, NotImplementedError):
        scratch.write_text(target + "\n", encoding="utf-8")
    try:
        os.replace(scratch, latest)
    except OSError:
        scratch.unlink(missing_ok=True)
        raise
    return latest


def latest_run(report_dir: Path) -> Path | None:
    """The folder ``report_dir/latest`` names (a link or a text file), or ``None``."""
    latest = report_dir / LATEST
    if latest.is_symlink():
        name = os.readlink(latest)
    elif latest.is_file():
        name = latest.read_text(encoding="utf-8").strip()
    else:
        return None
    folder = report_dir / name
    return folder if folder.is_dir() else None


def publish(report_dir: Path, folder: Path, names: tuple[str, ...] = REPORT_FILES) -> None:
    """Copy the run's reports (``names``) to the top of ``report_dir`` (where gates and docs
    read them); a report the run did not write is removed there rather than left from an
    earlier run."""
    for name in names:
        source, copy = folder / name, report_dir / name
        if source.is_file():
            scratch = report_dir / f".{name}.{os.getpid()}"
            shutil.copyfile(source, scratch)
            os.replace(scratch, copy)
        else:
            copy.unlink(missing_ok=True)
