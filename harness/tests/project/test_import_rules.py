"""The layout's rules are import-linter contracts in pyproject.toml, run by `make test`'s lint
step; these tests show they hold on the tree and that a violation is caught."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


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
    """The checks import streamproof.core.texts today; a contract forbidding it must break, which
    shows the linter really follows the checks' imports (as it would aiohttp's)."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "streamproof"\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "checks without texts"\ntype = "forbidden"\n'
        'source_modules = ["streamproof.suites.gateway.checks"]\n'
        'forbidden_modules = ["streamproof.core.texts"]\n',
        encoding="utf-8",
    )
    run = _lint_imports("--config", str(config))
    assert run.returncode != 0
    assert "BROKEN" in run.stdout and "streamproof.core.texts" in run.stdout


def test_a_layer_importing_one_above_it_would_break_the_layers(tmp_path: Path) -> None:
    """The suites import the core; with the core put above them, the layers contract must
    break: it follows the imports between layers."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "streamproof"\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "core above suites"\ntype = "layers"\n'
        'layers = ["streamproof.core", "streamproof.suites"]\n',
        encoding="utf-8",
    )
    run = _lint_imports("--config", str(config))
    assert run.returncode != 0
    assert "BROKEN" in run.stdout and "streamproof.suites" in run.stdout


def test_no_module_imports_itself_back() -> None:
    """No import cycle among streamproof's modules, typing-only imports included."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("streamproof")
    modules = {m for m in graph.modules if ".tests" not in m}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & modules):
            if state.get(imported) == 1:
                cycles.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, path)
        path.pop()
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            visit(module, [])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)
