"""Target files: a relative working directory is relative to the file, and must exist."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from streamproof.suites.a2a_client.target import ClientTarget
from streamproof.suites.gateway.target.config import GatewayTarget
from streamproof.targets.errors import TargetConfigError
from streamproof.targets.files import load_target_file
from streamproof.targets.process import TargetProcess


def test_a_relative_cwd_is_taken_from_the_target_files_folder(tmp_path: Path) -> None:
    (tmp_path / "ci" / "app").mkdir(parents=True)
    file = tmp_path / "ci" / "client.yaml"
    file.write_text("kind: a2a-client\ncommand: [./run]\ncwd: app\n")
    target = load_target_file(file, ClientTarget, "a2a-client")
    assert target.cwd == str((tmp_path / "ci" / "app").resolve())


def test_a_cwd_that_is_not_a_folder_is_named_at_load(tmp_path: Path) -> None:
    file = tmp_path / "gateway.yaml"
    file.write_text("kind: gateway\ncommand: [./run]\ncwd: missing\n")
    with pytest.raises(TargetConfigError, match=r"gateway\.yaml: cwd: 'missing' is not a folder"):
        load_target_file(file, GatewayTarget, "gateway")


def test_a_gateway_attached_by_url_has_no_cwd(tmp_path: Path) -> None:
    file = tmp_path / "gateway.yaml"
    file.write_text("kind: gateway\nurl: http://127.0.0.1:1\ncwd: .\n")
    with pytest.raises(TargetConfigError, match="a target attached by url has none"):
        load_target_file(file, GatewayTarget, "gateway")


def test_the_command_runs_in_its_cwd(tmp_path: Path) -> None:
    async def run() -> str:
        process = TargetProcess("pwd", ["pwd"], {"PATH": "/usr/bin:/bin"}, cwd=str(tmp_path))
        await process.start()
        try:
            match = await process.wait_for_line(re.compile(r"^\[stdout\] (/.*)$"), 10)
        finally:
            await process.close()
        return match.group(1)

    assert Path(asyncio.run(run())).resolve() == tmp_path.resolve()
