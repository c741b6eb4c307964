"""A whole command run to its end, warm (``run_to_end``): what ``subprocess.run`` would give,
with the zygote's preloads, a timeout that takes the command's process group with it, and an
ordinary start whenever a warm one cannot be had."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.targets.warm import pool
from streamproof.targets.warm.command import run_to_end

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="warm starts need Linux")

PROBE = """
import gc, json, os, sys
if __name__ == "__main__":
    extra = sys.modules.get("extra")
    print(json.dumps({
        "args": sys.argv[1:], "pid": os.getpid(), "ppid": os.getppid(),
        "probe": os.environ.get("PROBE"),
        "extra_loaded_in": getattr(extra, "LOADED_IN", None),
        "frozen": gc.get_freeze_count(),
    }))
    print("one\\r\\ntwo", file=sys.stderr)
    sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""
SLEEPER = """
import pathlib, subprocess, time
if __name__ == "__main__":
    child = subprocess.Popen(["sleep", "30"])
    pathlib.Path("sleep.pid").write_text(str(child.pid))
    time.sleep(30)
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv(pool.SHARED, raising=False)  # this process's own zygotes, not the session's
    monkeypatch.delenv(pool.SWITCH, raising=False)
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    (tmp_path / "extra.py").write_text("import os\nLOADED_IN = os.getpid()\n")
    yield tmp_path
    pool._close_all()


def _probe(folder: Path, *preload: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_to_end(
        [sys.executable, "-m", "probe", "a", "b c"],
        env={**os.environ, **env},
        cwd=str(folder),
        timeout=30,
        preload=preload,
    )


def test_a_warm_command_gives_what_subprocess_run_gives(folder: Path) -> None:
    warm = _probe(folder, "extra", PROBE="p", PROBE_EXIT="3")
    said = json.loads(warm.stdout)
    assert warm.returncode == 3
    assert warm.args == [sys.executable, "-m", "probe", "a", "b c"]
    assert said["args"] == ["a", "b c"] and said["probe"] == "p"
    assert warm.stderr == "one\ntwo\n"  # text, as text=True reads it
    # The preloaded module was imported once, by the zygote the command was forked from.
    assert said["extra_loaded_in"] == said["ppid"] != os.getpid()
    cold = subprocess.run(
        [sys.executable, "-m", "probe", "a", "b c"],
        env={**os.environ, "PROBE": "p", "PROBE_EXIT": "3"},
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (cold.returncode, cold.stderr) == (warm.returncode, warm.stderr)
    assert json.loads(cold.stdout)["extra_loaded_in"] is None  # the probe itself imports none


def test_a_warm_command_keeps_the_zygotes_objects_out_of_its_collections(folder: Path) -> None:
    # Its collections then neither walk what the zygote imported nor write to those shared
    # pages (docs/explanation/performance.md#forked-runs). An ordinary start freezes only what
    # the interpreter itself does at start-up.
    warm = json.loads(_probe(folder, "extra").stdout)["frozen"]
    cold = subprocess.run(
        [sys.executable, "-m", "probe"], cwd=folder, capture_output=True, text=True, check=True
    )
    assert warm > 2 * json.loads(cold.stdout)["frozen"] + 1000


def test_other_preloads_get_a_zygote_of_their_own(folder: Path) -> None:
    plain = json.loads(_probe(folder).stdout)
    preloaded = json.loads(_probe(folder, "extra").stdout)
    again = json.loads(_probe(folder, "extra").stdout)
    assert plain["extra_loaded_in"] is None
    assert preloaded["ppid"] == again["ppid"] != plain["ppid"]


def test_a_preload_that_cannot_be_imported_runs_the_command_the_ordinary_way(
    folder: Path,
) -> None:
    done = _probe(folder, "no_such_module_here", PROBE="p")
    said = json.loads(done.stdout)
    assert done.returncode == 0 and said["probe"] == "p"
    assert said["ppid"] == os.getpid()  # started by this process, not forked from a zygote


def test_the_switch_runs_it_the_ordinary_way(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pool.SWITCH, "0")
    said = json.loads(_probe(folder, "extra").stdout)
    assert said["ppid"] == os.getpid() and said["extra_loaded_in"] is None


def test_past_its_timeout_the_command_and_what_it_started_are_killed(folder: Path) -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_to_end(
            [sys.executable, "-m", "sleeper"], env=dict(os.environ), cwd=str(folder), timeout=1.5
        )
    assert time.monotonic() - started < 10
    sleep = int((folder / "sleep.pid").read_text())  # the command's own child
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(sleep):
        time.sleep(0.05)
    assert not _alive(sleep)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
