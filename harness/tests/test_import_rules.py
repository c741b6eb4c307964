"""The layout's rules are import-linter contracts in pyproject.toml, run by `make test`'s lint
step; these tests show they hold on the tree and that a violation is caught."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return subprocess.run(
        [exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_tree_keeps_every_contract() -> None:
    run = _lint_imports()
    assert run.returncode == 0, run.stdout[-3000:]
    assert "0 broken" in run.stdout


def test_a_check_that_imported_an_io_library_would_break_a_contract(tmp_path: Path) -> None:
    """The checks import harness.texts today; a contract forbidding it must break, which shows
    the linter really follows the checks' imports (as it would aiohttp's)."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "harness"\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "checks without texts"\ntype = "forbidden"\n'
        'source_modules = ["harness.suites.gateway.checks"]\n'
        'forbidden_modules = ["harness.texts"]\n',
        encoding="utf-8",
    )
    run = _lint_imports("--config", str(config))
    assert run.returncode != 0
    assert "BROKEN" in run.stdout and "harness.texts" in run.stdout
