"""``make check`` (every test not marked ``slow``) covers every product module: the modules
under ``harness/streamproof/`` (not its ``bench``) that no fast test
loads are named, unless :data:`EXEMPT` says why none can.

The measure is the static import graph, cheap and deterministic (no coverage tracer, no test
run): a product module counts as exercised by the fast tier when a test module with at least
one test not marked ``slow`` loads it, that is when it is

- imported by such a test module at its top level, by its fixtures and helpers, or inside one
  of its fast tests (imports inside its slow tests do not count), directly or through the
  test-side helper modules it imports (``harness/tests/*.py`` that hold no tests);
- imported at module level by a module so loaded (what Python loads with it; a package's
  ``__init__`` counts with its lazy exports, the imports inside its functions); or
- named in such a test module as a dotted string ``streamproof.…`` (``python -m streamproof.x``,
  ``-p streamproof.x``, a monkeypatch target): a module the test runs or patches by name; or
- imported inside a function of a *program* so loaded: ``streamproof.cli`` and its subcommand
  modules (what a subcommand runs is imported when it runs, so that the CLI starts fast) and
  the modules a fast test names as strings (what it runs with ``python -m``); one level deep,
  not those modules' own lazy imports.

It is a measure of reach, not of lines: a module loaded only as another's dependency counts.
It catches what the tiering can lose: a module whose every test is slow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HARNESS = ROOT / "harness"
SOURCE = HARNESS / "streamproof"
TESTS = HARNESS / "tests"

EXEMPT: dict[str, str] = {}
"""Product module -> why no fast test can load it."""


def module_name(path: Path) -> str:
    """``streamproof.…`` for the source (harness/streamproof/), ``harness.tests.…`` for tests."""
    base = HARNESS if path.is_relative_to(SOURCE) else ROOT
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def product_modules() -> set[str]:
    return {
        module_name(path)
        for path in SOURCE.rglob("*.py")
        if path.relative_to(SOURCE).parts[0] != "bench"
    }


def _package(path: Path) -> str:
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported(nodes: Iterable[ast.AST], package: str) -> set[str]:
    """The modules ``nodes`` import (``from a import b``: ``a`` and ``a.b``, which may be a
    module), and the dotted ``streamproof.…`` names they hold as strings."""
    found: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import):
                found |= {alias.name for alias in sub.names}
            elif isinstance(sub, ast.ImportFrom):
                base = sub.module or ""
                if sub.level:
                    parents = package.split(".")[: len(package.split(".")) - sub.level + 1]
                    base = ".".join([*parents, *([sub.module] if sub.module else [])])
                found.add(base)
                found |= {f"{base}.{alias.name}" for alias in sub.names}
    return found | named(nodes)


def named(nodes: Iterable[ast.AST]) -> set[str]:
    """The dotted ``streamproof.…`` names ``nodes`` hold as strings."""
    return {
        sub.value
        for node in nodes
        for sub in ast.walk(node)
        if isinstance(sub, ast.Constant)
        and isinstance(sub.value, str)
        and (sub.value == "streamproof" or sub.value.startswith(("streamproof.", "harness.tests.")))
        and " " not in sub.value
    }


def _is_slow(decorators: Iterable[ast.expr]) -> bool:
    return any(ast.unparse(d).startswith("pytest.mark.slow") for d in decorators)


def _module_slow(tree: ast.Module) -> bool:
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in statement.targets
        ):
            return "pytest.mark.slow" in ast.unparse(statement.value)
    return False


def _top_level(tree: ast.Module) -> list[ast.stmt]:
    """Statements run at import: not function bodies, not ``if TYPE_CHECKING:`` blocks."""
    return [
        s
        for s in tree.body
        if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not (isinstance(s, ast.If) and "TYPE_CHECKING" in ast.unparse(s.test))
    ] + [s for s in tree.body if isinstance(s, ast.ClassDef) and not s.name.startswith("Test")]


@dataclass
class SideOfTests:
    """What one module under harness/tests loads: for a test module, only what its fast tests
    need."""

    has_tests: bool
    fast: bool
    loads: set[str] = field(default_factory=set)
    runs: set[str] = field(default_factory=set)
    """The modules it names as strings (runs with ``python -m``, patches)."""


def side_of_tests(path: Path) -> SideOfTests:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _package(path)
    module_slow = _module_slow(tree)
    functions = [s for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
    tests = [f for f in functions if f.name.startswith("test")]
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name.startswith("Test")]
    fast_tests: list[ast.AST] = [
        f for f in tests if not module_slow and not _is_slow(f.decorator_list)
    ]
    fast_tests += [c for c in classes if not module_slow and not _is_slow(c.decorator_list)]
    helpers = [f for f in functions if not f.name.startswith("test")]
    has_tests = path.name.startswith("test_")
    counted = [*_top_level(tree), *helpers, *fast_tests] if has_tests else tree.body
    return SideOfTests(has_tests, bool(fast_tests), imported(counted, package), named(counted))


PROGRAMS = frozenset({"streamproof.cli"})
"""Product modules whose functions' imports count once the module is loaded, and so do those of
the modules of these packages (besides the ones a fast test names as strings): their lazy
imports are what their commands run."""


def product_imports(path: Path, program: bool = False) -> set[str]:
    """What importing this product module loads: its module-level imports; a package's
    ``__init__`` also its functions' (lazy exports through ``__getattr__``), and so does a
    program's (``program``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if program or path.name == "__init__.py" else _top_level(tree)
    return imported(nodes, _package(path))


@cache
def loaded_by_fast_tests() -> frozenset[str]:
    sides = {module_name(p): side_of_tests(p) for p in TESTS.rglob("*.py")}
    products = {module_name(p): p for p in SOURCE.rglob("*.py")}
    # the fast test modules and the helper modules under harness/tests they import
    reached: set[str] = set()
    todo = [name for name, side in sides.items() if side.has_tests and side.fast]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += [t for t in sides[name].loads if t in sides and not sides[t].has_tests]
    ran = {target for name in reached for target in sides[name].runs}
    # ``python -m PACKAGE`` runs the package's ``__main__``
    mains = {f"{p}.__main__" for p in ran if f"{p}.__main__" in products}
    programs = PROGRAMS | ran | mains
    # the product modules they load
    loaded: set[str] = set()
    todo = [t for name in reached for t in sides[name].loads if t in products]
    todo += sorted(mains)
    while todo:
        name = todo.pop()
        if name in loaded:
            continue
        loaded.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # its packages
        program = name in programs or name.rpartition(".")[0] in PROGRAMS
        todo += [t for t in product_imports(products[name], program) if t in products]
    return frozenset(loaded)


def test_every_product_module_is_loaded_by_a_fast_test() -> None:
    missing = sorted(product_modules() - loaded_by_fast_tests() - set(EXEMPT))
    assert not missing, (
        "no test outside the slow tier loads these modules (add a fast test, or an EXEMPT "
        "entry saying why none can): " + ", ".join(missing)
    )


def test_the_exemptions_are_product_modules_still_unloaded() -> None:
    """An exemption names a real module that the fast tier really does not load: one that a
    fast test now loads, or that no longer exists, is taken out of :data:`EXEMPT`."""
    stale = sorted(set(EXEMPT) - (product_modules() - loaded_by_fast_tests()))
    assert not stale, f"EXEMPT entries to remove: {stale}"


def test_the_measure_follows_imports_and_leaves_slow_tests_out(tmp_path: Path) -> None:
    """The pieces of the measure on a made-up test module: a slow test's imports do not
    count, a fast test's, its module's and its strings do."""
    test_file = tmp_path / "test_made_up.py"
    test_file.write_text(
        "import pytest\n"
        "from streamproof.protocol import sse\n"
        "def helper():\n    from streamproof.core import texts\n"
        "def test_fast():\n    from streamproof.core import patterns\n    run('streamproof.cli')\n"
        "@pytest.mark.slow\ndef test_slow():\n    from streamproof.mutants import matrix\n",
        encoding="utf-8",
    )
    tree = ast.parse(test_file.read_text(encoding="utf-8"))
    functions = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    fast = [f for f in functions if not _is_slow(f.decorator_list)]
    loads = imported([*_top_level(tree), *fast], "harness.tests")
    assert {
        "streamproof.protocol.sse",
        "streamproof.core.texts",
        "streamproof.core.patterns",
        "streamproof.cli",
    } <= loads
    assert "streamproof.mutants.matrix" not in loads
    assert _is_slow(functions[-1].decorator_list) and not _module_slow(tree)
    assert imported([ast.parse("from ..faults import plan")], "streamproof.suites.gateway") >= {
        "streamproof.suites.faults.plan"
    }
