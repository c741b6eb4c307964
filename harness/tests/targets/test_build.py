"""The ``build`` key: built once, skipped while up to date, rebuilt on change, every failure a
bounded, named error."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.suites.a2a_client.target import load_client_target
from streamproof.suites.gateway.target.config import load_target
from streamproof.targets import build as build_module
from streamproof.targets.build import STAMP, Build, ensure_built
from streamproof.targets.errors import TargetConfigError, TargetError

# Appends a line to count.txt (one per build run) and writes out/app.txt from src/.
_COUNTING = (
    "import pathlib;"
    "pathlib.Path('count.txt').open('a').write('x\\n');"
    "pathlib.Path('out').mkdir(exist_ok=True);"
    "pathlib.Path('out/app.txt').write_text(pathlib.Path('src/main.txt').read_text())"
)


@pytest.fixture(autouse=True)
def _fresh_memory() -> Iterator[None]:
    build_module._BUILT.clear()
    yield
    build_module._BUILT.clear()


def _project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.txt").write_text("v1")
    return tmp_path


def _counting(folder: Path, **extra: object) -> Build:
    return Build.model_validate(
        {
            "command": [sys.executable, "-c", _COUNTING],
            "cwd": str(folder),
            "inputs": ["src"],
            "outputs": ["out/app.txt"],
            **extra,
        }
    )


def _builds(folder: Path) -> int:
    count = folder / "count.txt"
    return len(count.read_text().splitlines()) if count.exists() else 0


async def test_builds_once_then_skips_while_up_to_date(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    build = _counting(folder)
    await ensure_built("t", build)
    assert (folder / "out" / "app.txt").read_text() == "v1"
    assert (folder / STAMP).is_file()
    build_module._BUILT.clear()  # as a new run would start
    await ensure_built("t", build)
    assert _builds(folder) == 1


async def test_a_changed_input_or_a_missing_output_rebuilds(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    build = _counting(folder)
    await ensure_built("t", build)
    (folder / "src" / "main.txt").write_text("v2")
    build_module._BUILT.clear()
    await ensure_built("t", build)
    assert _builds(folder) == 2
    assert (folder / "out" / "app.txt").read_text() == "v2"
    (folder / "out" / "app.txt").unlink()
    build_module._BUILT.clear()
    await ensure_built("t", build)
    assert _builds(folder) == 3


async def test_parallel_runs_share_one_build(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    slow = _COUNTING + ";import time;time.sleep(0.3)"
    build = Build.model_validate(
        {
            "command": [sys.executable, "-c", slow],
            "cwd": str(folder),
            "inputs": ["src"],
            "outputs": ["out/app.txt"],
        }
    )
    # The first holds the folder's lock while it builds; the second waits, then finds the
    # stamp up to date.
    first = asyncio.create_task(ensure_built("t", build))
    await asyncio.sleep(0.05)
    build_module._BUILT.clear()
    await asyncio.gather(first, ensure_built("t", build))
    assert _builds(folder) == 1


async def test_a_failed_build_names_the_target_the_code_and_its_output(tmp_path: Path) -> None:
    build = Build(
        command=(sys.executable, "-c", "print('cannot find symbol Foo'); raise SystemExit(3)"),
        cwd=str(tmp_path),
    )
    with pytest.raises(TargetError) as caught:
        await ensure_built("java-gateway", build)
    message = str(caught.value)
    assert "'java-gateway'" in message
    assert "exit code 3" in message
    assert "cannot find symbol Foo" in message
    assert not (tmp_path / STAMP).exists()


async def test_a_build_that_leaves_no_output_fails(tmp_path: Path) -> None:
    build = Build(command=(sys.executable, "-c", "pass"), cwd=str(tmp_path), outputs=("app.jar",))
    with pytest.raises(TargetError, match=r"left no app\.jar"):
        await ensure_built("t", build)


async def test_a_build_past_its_timeout_is_killed(tmp_path: Path) -> None:
    build = Build(
        command=(
            sys.executable,
            "-c",
            "print('resolving', flush=True); import time; time.sleep(60)",
        ),
        cwd=str(tmp_path),
        timeout=0.5,
    )
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"did not finish within 0\.5s[\s\S]*resolving"):
        await ensure_built("t", build)
    assert time.monotonic() - started < 10


async def test_a_missing_program_or_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="cannot run its build command"):
        await ensure_built("t", Build(command=("no-such-mvn-here",), cwd=str(tmp_path)))
    missing_input = Build(command=("true",), cwd=str(tmp_path), inputs=("pom.xml",))
    with pytest.raises(TargetConfigError, match=r"build\.inputs: 'pom\.xml' does not exist"):
        await ensure_built("t", missing_input)


def test_paths_must_stay_inside_the_build_folder() -> None:
    with pytest.raises(ValueError, match="inside the build folder"):
        Build.model_validate({"command": ["true"], "inputs": ["../elsewhere"]})
    with pytest.raises(ValueError, match="inside the build folder"):
        Build.model_validate({"command": ["true"], "outputs": ["/abs/app.jar"]})


def test_target_files_resolve_the_build_folder_beside_the_file(tmp_path: Path) -> None:
    (tmp_path / "refs" / "gw").mkdir(parents=True)
    (tmp_path / "targets").mkdir()
    gateway = tmp_path / "targets" / "gw.yaml"
    gateway.write_text(
        "kind: gateway\ncommand: [java, -jar, app.jar]\n"
        "build: {command: [bash, build.sh], cwd: ../refs/gw}\n"
    )
    assert load_target(gateway).build == Build(
        command=("bash", "build.sh"), cwd=str((tmp_path / "refs" / "gw").resolve())
    )
    client = tmp_path / "targets" / "client.yaml"
    client.write_text("kind: a2a-client\ncommand: [java, -jar, c.jar]\nbuild: {command: [make]}\n")
    built = load_client_target(client).build
    assert built is not None and built.cwd == str((tmp_path / "targets").resolve())


def test_a_bad_build_key_names_the_file_and_the_key(tmp_path: Path) -> None:
    wrong = tmp_path / "gw.yaml"
    wrong.write_text("kind: gateway\ncommand: [x]\nbuild: {command: [make], cwd: nowhere}\n")
    with pytest.raises(TargetConfigError, match=r"gw\.yaml: build\.cwd: 'nowhere' is not a fold"):
        load_target(wrong)
    wrong.write_text("kind: gateway\nurl: http://127.0.0.1:1\nbuild: {command: [make]}\n")
    with pytest.raises(TargetConfigError, match="a target attached by url has none"):
        load_target(wrong)
    wrong.write_text("kind: gateway\ncommand: [x]\nbuild: {command: [make], outputz: [a]}\n")
    with pytest.raises(TargetConfigError, match=r"build\.outputz: unknown key"):
        load_target(wrong)
