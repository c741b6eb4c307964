"""scripts/install-node-oracles: the Node oracles' npm packages from the committed lockfile with
`npm ci`, run by bootstrap and `make tools`, quiet when node_modules is up to date, bounded, and
never a failed install (without Node, with an old one, or when npm fails it says so and goes
on). Run here with stand-in ``node`` and ``npm`` and a copy of the project's package files."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "install-node-oracles"
PROJECT = ROOT / "harness" / "streamproof" / "suites" / "gateway" / "oracles" / "node"
# What the script needs besides node and npm (bash runs it).
TOOLS = ("mktemp", "timeout", "tail", "sed", "rm", "touch", "sleep", "mkdir", "cat")
NPM_CI = "ci --ignore-scripts --no-audit --no-fund --loglevel=error"


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _machine(tmp_path: Path, *, node: int | None = 20, npm: str = "") -> Path:
    """A bin folder with the system tools the script uses, a ``node`` of major version ``node``
    (none when None) and an ``npm`` that logs its arguments to npm.log, runs ``npm`` (shell),
    then writes node_modules/.package-lock.json as npm ci does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    if node is not None:
        _executable(
            bin_dir / "node",
            f'#!/bin/sh\nif [ "$1" = --version ]; then echo v{node}.1.2; else echo {node}; fi\n',
        )
    _executable(
        bin_dir / "npm",
        f'#!/bin/bash\necho "$*" >> {tmp_path / "npm.log"}\n{npm}\n'
        "mkdir -p node_modules && echo '{}' > node_modules/.package-lock.json\n",
    )
    return bin_dir


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "node"
    project.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy(PROJECT / name, project / name)
    return project


def _install(
    tmp_path: Path, bin_dir: Path, project: Path, *, timeout: str = "30"
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": str(bin_dir),
        "STREAMPROOF_NODE_ORACLES_DIR": str(project),
        "STREAMPROOF_NPM_TIMEOUT": timeout,
        "TMPDIR": str(tmp_path),
    }
    return subprocess.run(
        ["/bin/bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _npm_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "npm.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_bootstrap_and_make_install_it() -> None:
    assert "scripts/install-node-oracles" in (ROOT / "scripts" / "bootstrap").read_text("utf-8")
    assert "@scripts/install-node-oracles" in (ROOT / "Makefile").read_text("utf-8")
    ignored = (ROOT / ".gitignore").read_text("utf-8").splitlines()
    assert "harness/streamproof/suites/gateway/oracles/node/node_modules/" in ignored


def test_missing_installs_from_the_lockfile_then_is_quiet(tmp_path: Path) -> None:
    project = _project(tmp_path)
    bin_dir = _machine(tmp_path)
    run = _install(tmp_path, bin_dir, project)
    assert run.returncode == 0, run.stderr
    assert _npm_calls(tmp_path) == [NPM_CI]
    assert "bootstrap: node oracles: installed in" in run.stdout
    assert list(tmp_path.glob("streamproof-npm.*")) == []  # its npm log is removed
    again = _install(tmp_path, bin_dir, project)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert _npm_calls(tmp_path) == [NPM_CI]


def test_a_lockfile_newer_than_node_modules_installs_again(tmp_path: Path) -> None:
    project = _project(tmp_path)
    bin_dir = _machine(tmp_path)
    assert _install(tmp_path, bin_dir, project).returncode == 0
    stamp = project / "node_modules" / ".package-lock.json"
    past = time.time() - 60
    os.utime(stamp, (past, past))
    run = _install(tmp_path, bin_dir, project)
    assert run.returncode == 0 and "installed in" in run.stdout
    assert _npm_calls(tmp_path) == [NPM_CI, NPM_CI]


def test_a_failed_npm_is_a_warning_with_npms_words(tmp_path: Path) -> None:
    npm = 'echo "npm error code ENOTFOUND" >&2; exit 1'
    run = _install(tmp_path, _machine(tmp_path, npm=npm), _project(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "WARNING: npm ci failed" in run.stdout and "oracle tests will skip" in run.stdout
    assert "bootstrap:   npm error code ENOTFOUND" in run.stdout


def test_npm_is_bounded(tmp_path: Path) -> None:
    started = time.monotonic()
    run = _install(
        tmp_path, _machine(tmp_path, npm="exec sleep 30"), _project(tmp_path), timeout="1"
    )
    assert time.monotonic() - started < 10
    assert run.returncode == 0 and "took over 1 s" in run.stdout


@pytest.mark.parametrize(
    ("node", "said"),
    [(None, "no node or npm on PATH"), (18, "Node v18.1.2 is too old (the oracles need >= 20)")],
)
def test_without_a_usable_node_it_says_how_and_goes_on(
    tmp_path: Path, node: int | None, said: str
) -> None:
    run = _install(tmp_path, _machine(tmp_path, node=node), _project(tmp_path))
    assert run.returncode == 0, run.stderr
    assert said in run.stdout and "install Node.js >= 20 with npm" in run.stdout
    assert _npm_calls(tmp_path) == []
