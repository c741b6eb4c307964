"""The suite ships with the package: a wheel built from this repository, installed with its
``reference`` extra into a fresh virtualenv as a user installs it (pip resolves every
dependency from the wheel's own metadata, so one left out of it fails here), lists and
validates every bundled scenario and runs one of each suite from an empty folder with nothing
skipped, and pytest collects the
installed suite by name; an editable install finds the repository's own scenarios/ folder.

The editable install's virtualenv borrows this one's packages through a .pth file (a plain
path line: the .pth files there, such as this repository's editable install, are not run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.tests.conftest import require_module

# Slow (a wheel, a fresh venv); one xdist worker for the module, so the wheel is built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("packaging")]

ROOT = Path(__file__).resolve().parents[3]
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", ".tox", "reports", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"
)


@dataclass(frozen=True)
class Venv:
    root: Path
    purelib: Path
    scripts: Path

    @property
    def python(self) -> Path:
        return self.scripts / "python"

    def env(self) -> dict[str, str]:
        """The environment a user's shell would have with this venv active: nothing points
        at this repository."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "STREAMPROOF_SCENARIO_PATHS", "PYTEST_ADDOPTS")
        }
        env["VIRTUAL_ENV"] = str(self.root)
        env["PATH"] = f"{self.scripts}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, cwd: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv),
            cwd=cwd,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _pip(*args: str, timeout: float = 300) -> str:
    """pip's output; a user's environment (no PYTHONDONTWRITEBYTECODE, which CI sets and which
    makes setuptools warn that it cannot byte-compile)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    run = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )
    assert run.returncode == 0, f"pip {' '.join(args)}\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
    return run.stdout + run.stderr


@dataclass(frozen=True)
class Wheel:
    path: Path
    build_output: str
    """What the build printed (pip -v shows the build backend's own output)."""


def _fresh_venv(where: Path) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    paths = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib')); "
            "print(sysconfig.get_path('scripts'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    return Venv(where, Path(paths[0]), Path(paths[1]))


def _borrow_dependencies(venv: Venv) -> None:
    """After streamproof is installed: this environment's packages become importable there,
    behind the venv's own (pip never sees this repository's editable install)."""
    ours = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (venv.purelib / "zz_streamproof_test_deps.pth").write_text("\n".join(ours) + "\n")


def _source_copy(tmp: Path) -> Path:
    """The repository's files, so that the build writes its build/ and egg-info elsewhere."""
    return Path(shutil.copytree(ROOT, tmp / "streamproof-src", ignore=NOT_SOURCES))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Wheel:
    tmp = tmp_path_factory.mktemp("wheel")
    output = _pip("wheel", "--no-deps", "-v", "-w", str(tmp / "dist"), str(_source_copy(tmp)))
    (path,) = (tmp / "dist").glob("streamproof-*.whl")
    return Wheel(path, output)


@pytest.fixture(scope="module")
def wheel(built: Wheel) -> Path:
    return built.path


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """``pip install <wheel>[reference]``: streamproof, its dependencies and the reference
    systems, resolved from the package index (pip's cache makes it a minute, not a download)."""
    require_module("google.adk")  # the extra's systems are installable here
    venv = _fresh_venv(tmp_path_factory.mktemp("installed") / "venv")
    _pip("--python", str(venv.python), "install", "-q", f"{wheel}[reference]", timeout=900)
    return venv


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_the_wheel_holds_every_module_and_the_bundled_suites(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    source = ROOT / "harness"
    modules = {
        str(p.relative_to(source))
        for p in (source / "streamproof").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert modules <= names, sorted(modules - names)[:10]
    # one import name: no module named harness, and none of the harness's own tests
    assert not [n for n in names if n.startswith(("harness/", "tests/"))]
    suites = {
        "streamproof/scenarios/" + str(p.relative_to(ROOT / "scenarios"))
        for p in (ROOT / "scenarios").rglob("*")
        if p.suffix in (".yaml", ".yml", ".py") and "__pycache__" not in p.parts
    }
    assert any(s.startswith("streamproof/scenarios/gateway/") for s in suites)
    assert any(s.startswith("streamproof/scenarios/a2a_client/") for s in suites)
    assert suites <= names, sorted(suites - names)[:10]
    fixtures = {
        "streamproof/fixtures/" + str(p.relative_to(ROOT / "fixtures"))
        for p in (ROOT / "fixtures").rglob("*")
        if p.suffix in (".sse", ".md")
    }
    assert "streamproof/fixtures/gemini/worked_example_answer.sse" in fixtures
    assert "streamproof/fixtures/a2a/1.0/summary_survives_proxy_timeout.sse" in fixtures
    assert fixtures <= names, sorted(fixtures - names)[:10]
    assert {
        "streamproof/suites/gateway/reference-gateway.yaml",
        "streamproof/py.typed",
        "streamproof/report/templates/report.html.j2",  # report.html's template
    } <= names
    metadata = zipfile.ZipFile(wheel).read(f"{wheel.name.split('-py3')[0]}.dist-info/METADATA")
    assert b"License-Expression: Apache-2.0" in metadata
    # The proxy engine the bundled corporate-proxy scenarios need comes with every install.
    assert b"Requires-Dist: mitmproxy==12.3.1\n" in metadata


def test_building_the_wheel_prints_no_warning(built: Wheel) -> None:
    warnings = [line for line in built.build_output.splitlines() if "warn" in line.lower()]
    assert warnings == [], "\n".join(warnings)


def test_the_installed_package_is_the_one_imported(installed: Venv, empty: Path) -> None:
    code = (
        "import streamproof, streamproof.runtime.bundled as b; "
        "print(streamproof.__file__); print(b.bundled_scenarios())"
    )
    run = installed.run(empty, str(installed.python), "-c", code)
    assert run.returncode == 0, run.stderr
    module, bundled = run.stdout.split("\n")[:2]
    assert Path(module).is_relative_to(installed.purelib), module
    assert Path(bundled) == installed.purelib / "streamproof" / "scenarios"
    # one import name: the wheel has no module named harness
    run = installed.run(empty, str(installed.python), "-c", "import harness")
    assert run.returncode == 1 and "No module named 'harness'" in run.stderr


def test_list_from_an_empty_folder_shows_the_bundled_scenarios(
    installed: Venv, empty: Path
) -> None:
    run = installed.run(empty, "streamproof", "list")
    assert run.returncode == 0, run.stderr
    assert "gateway/one-tool-call-streamed" in run.stdout
    assert "a2a_client/summary-survives-proxy-timeout" in run.stdout
    assert "scenarios: (none)" not in run.stdout
    run = installed.run(empty, "streamproof", "list", "--markdown")
    assert run.returncode == 0, run.stderr
    assert "`gateway/plain-streamed-answer`" in run.stdout
    assert "(none)" not in run.stdout


def test_bundled_scenarios_read_their_fixtures_from_the_package(
    installed: Venv, empty: Path
) -> None:
    # The worked examples' model turns and task timeline are canned streams: from the wheel,
    # "fixtures/..." resolves from streamproof/scenarios/<suite>/ up to
    # streamproof/fixtures/.
    code = (
        "import streamproof.runtime.bundled as b\n"
        "from streamproof.suites.fixture_files import resolve_fixture\n"
        "from streamproof.suites.loading import load_scenarios\n"
        "root = b.bundled_scenarios()\n"
        "for name in ('gateway/worked_example.yaml', "
        "'a2a_client/summary_survives_proxy_timeout.yaml'):\n"
        "    (s,) = load_scenarios(root / name)\n"
        "    print(s.scenario.id)\n"
        "print(resolve_fixture('fixtures/gemini/worked_example_call.sse', "
        "root / 'gateway' / 'worked_example.yaml'))\n"
    )
    run = installed.run(empty, str(installed.python), "-c", code)
    assert run.returncode == 0, run.stderr
    gateway_id, client_id, resolved = run.stdout.split("\n")[:3]
    assert (gateway_id, client_id) == (
        "gateway/one-tool-call-streamed",
        "a2a_client/summary-survives-proxy-timeout",
    )
    assert Path(resolved) == (
        installed.purelib / "streamproof" / "fixtures" / "gemini" / "worked_example_call.sse"
    )
    run = installed.run(
        empty, "streamproof", "validate", str(installed.purelib / "streamproof" / "scenarios")
    )
    assert run.returncode == 0, run.stdout + run.stderr


PACKAGE_DATA_SCENARIOS = (
    "gateway/one-tool-call-streamed",  # its model turns: fixtures/gemini/ in the wheel
    "gateway/corporate-proxy-tls",  # the mitmproxy engine the install brings, its CA
    "a2a_client/summary-survives-proxy-timeout",  # fixtures/a2a/, the reference client
    "a2a_client/push-happy-path",  # the reference client's webhook
    "browser_client/worked-example",  # the reference page and the screen recorder
)
"""One scenario per suite and per kind of file a run reads from the installed package. Every
bundled scenario is in the wheel and loads from it (the tests above); that each passes on the
references is proven from the repository (system/test_end_to_end.py, the suites' runner tests),
so a whole suite run here would judge the same verdicts a second time."""


def test_run_from_an_empty_folder_runs_the_bundled_suites(installed: Venv, empty: Path) -> None:
    """``streamproof run`` with no path: the bundled suites against the bundled references,
    from the installed package alone, judged and passed, none skipped (``--require-all``
    would fail a skip)."""
    picked = " or ".join(i.split("/")[1] for i in PACKAGE_DATA_SCENARIOS)
    argv = ("streamproof", "run", "--require-all", "-n", "2", "-q", "-k", picked)
    run = installed.run(empty, *argv, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-3000:]
    report = json.loads((empty / "reports" / "results.json").read_text())
    assert report["summary"]["ok"] is True
    # the installed package found report.html's template (package data)
    assert '<header class="verdict ok">' in (empty / "reports" / "report.html").read_text()
    from streamproof.suites.a2a_client.scenario import A2AClientScenario
    from streamproof.suites.a2a_client.target import load_client_target
    from streamproof.suites.loading import load_scenarios

    # a client scenario runs once per binding the reference client declares
    bindings = load_client_target(None).bindings
    loaded = [s.scenario for f in (ROOT / "scenarios").rglob("*.yaml") for s in load_scenarios(f)]
    expected = sorted(
        run.id
        for scenario in loaded
        if scenario.id in PACKAGE_DATA_SCENARIOS
        for run in (
            scenario.variants(bindings) if isinstance(scenario, A2AClientScenario) else (scenario,)
        )
    )
    assert len(expected) > len(PACKAGE_DATA_SCENARIOS)  # the client's REST runs are in
    ids = sorted(s["id"] for s in report["scenarios"])
    assert ids == expected
    assert report["summary"]["passed"] == len(expected)
    assert not [s for s in report["scenarios"] if s["outcome"] != "passed"]
    bundled = installed.purelib / "streamproof" / "scenarios"
    assert all(Path(s["file"]).is_relative_to(bundled) for s in report["scenarios"])


def test_pytest_runs_the_installed_suite_by_name_from_an_empty_folder(
    installed: Venv, empty: Path
) -> None:
    """The pytest route needs no copy of the suite: ``--streamproof-suite`` collects it from
    the installed package, and the reports follow the CLI's run-folder layout."""
    require_module("google.adk")
    picked = "plain-streamed-answer or one-tool-call-streamed"
    argv = [
        "-m",
        "pytest",
        "--streamproof-suite",
        "gateway",
        "-k",
        picked,
        "-p",
        "no:cacheprovider",
    ]
    run = installed.run(empty, str(installed.python), *argv, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-3000:]
    assert "2 passed" in run.stdout
    report = json.loads((empty / "reports" / "latest" / "results.json").read_text())
    assert sorted(s["id"] for s in report["scenarios"]) == [
        "gateway/one-tool-call-streamed",
        "gateway/plain-streamed-answer",
    ]
    bundled = installed.purelib / "streamproof" / "scenarios" / "gateway"
    assert all(Path(s["file"]).parent == bundled for s in report["scenarios"])
    assert json.loads((empty / "reports" / "results.json").read_text()) == report


def test_an_editable_install_finds_the_repository_folder(tmp_path: Path, empty: Path) -> None:
    source = _source_copy(tmp_path)
    venv = _fresh_venv(tmp_path / "venv")
    _pip("--python", str(venv.python), "install", "--no-deps", "-q", "-e", str(source))
    _borrow_dependencies(venv)
    code = "import streamproof.runtime.bundled as b; print(b.bundled_scenarios())"
    run = venv.run(empty, str(venv.python), "-c", code)
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()) == source / "scenarios"
    run = venv.run(empty, "streamproof", "list", "--json")
    assert run.returncode == 0, run.stderr
    rows = {r["id"]: r for r in json.loads(run.stdout)}
    assert "gateway/one-tool-call-streamed" in rows["GW-NO-TOOL-LEAK"]["scenarios"]
