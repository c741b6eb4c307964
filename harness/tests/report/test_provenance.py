"""The report's environment names where the run happened: real versions, the platform, the
targets, the settings and the command line."""

from __future__ import annotations

import json
import platform
from importlib import metadata

from streamproof.report.provenance import PACKAGES, package_version, provenance, streamproof_version


def test_versions_are_the_installed_ones() -> None:
    env = provenance(
        targets={"gateway": {"name": "g", "command": ["x"], "capabilities": ["history"]}},
        time_scale=0.1,
        bug="no-dispose",
        strict=True,
        command_line=["streamproof", "run", "--bug", "no-dispose"],
        pytest_args=["scenarios"],
    )
    assert env["streamproof"] == metadata.version("streamproof")
    assert env["python"]["version"] == platform.python_version()
    assert env["python"]["implementation"] == platform.python_implementation()
    assert env["os"]["system"] == platform.system()
    assert set(env["packages"]) == set(PACKAGES)
    for name in ("aiohttp", "pydantic", "pytest"):  # dependencies: always installed
        assert env["packages"][name] == metadata.version(name)
    assert env["targets"]["gateway"]["capabilities"] == ["history"]
    assert (env["time_scale"], env["bug"], env["strict"]) == (0.1, "no-dispose", True)
    assert env["command_line"][:2] == ["streamproof", "run"]
    assert env["pytest_args"] == ["scenarios"]
    json.dumps(env)  # plain data


def test_a_package_that_is_not_installed_is_none() -> None:
    assert package_version("streamproof-no-such-distribution") is None
    assert streamproof_version() != ""
