"""The bundled suites are package data, found through importlib.resources wherever the
package lives: a folder, a zip, or nowhere (a source tree that was never installed)."""

from __future__ import annotations

import sys
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.runtime.bundled import SCENARIO_PACKAGE, bundled_scenarios

SCENARIO = "id: gateway/x\ntitle: t\nrequirements: [GW-SSE-RESPONSE]\nmodel: [{text: hi}]\n"


@pytest.fixture
def package_name(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh top-level package name, forgotten again after the test."""
    name = f"sp_bundled_{uuid.uuid4().hex[:8]}"
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, module)


def test_the_package_is_harness_scenarios() -> None:
    assert SCENARIO_PACKAGE == "streamproof.scenarios"


def test_an_installed_folder_is_its_own_path(
    tmp_path: Path, package_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / package_name
    (package / "gateway").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "gateway" / "a.yaml").write_text(SCENARIO)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert bundled_scenarios(package_name) == package


def test_a_zipped_package_is_extracted_and_kept_for_the_run(
    tmp_path: Path, package_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "suites.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"{package_name}/__init__.py", "")
        zf.writestr(f"{package_name}/gateway/a.yaml", SCENARIO)
    monkeypatch.syspath_prepend(str(archive))
    found = bundled_scenarios(package_name)
    assert found is not None and found.is_dir()
    assert (found / "gateway" / "a.yaml").read_text() == SCENARIO
    # Asked again, the same extracted folder (it lives until the process ends).
    assert bundled_scenarios(package_name) == found


def test_no_installed_package_means_no_bundled_suites(package_name: str) -> None:
    assert bundled_scenarios(package_name) is None
    assert bundled_scenarios(f"{package_name}.scenarios") is None
