"""Warm starts end to end: a zygote of real processes, small modules of the tests' own.

Each test writes its modules into its own folder and runs there, so each gets its own zygote
(the working folder is part of what a zygote is for), closed after the test.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.targets.process import TargetProcess
from streamproof.targets.warm import pool

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="warm starts need Linux")

HEAVY = "import os\nLOADED_IN = os.getpid()\n"
PROBE = """
import json, os, sys
import heavy
if __name__ == "__main__":
    print(json.dumps({
        "name": __name__, "args": sys.argv[1:], "probe": os.environ.get("PROBE"),
        "cwd": os.getcwd(), "pid": os.getpid(), "pgid": os.getpgid(0), "ppid": os.getppid(),
        "heavy_loaded_in": heavy.LOADED_IN, "stdin": sys.stdin.read(), "hash": hash("x"),
    }))
    print("said on stderr", file=sys.stderr)
    sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""
SLEEPER = """
import subprocess, sys, time
if __name__ == "__main__":
    child = subprocess.Popen(["sleep", "30"])
    print(child.pid, flush=True)
    time.sleep(30)
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv(pool.SHARED, raising=False)  # this process's own zygotes, not the session's
    (tmp_path / "heavy.py").write_text(HEAVY)
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "__init__.py").write_text("import heavy\n")
    (tmp_path / "package" / "__main__.py").write_text(PROBE)
    (tmp_path / "broken.py").write_text("raise RuntimeError('cannot be imported')\n")
    (tmp_path / "threaded.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True)"
        ".start()\nif __name__ == '__main__':\n    print('ran')\n"
    )
    yield tmp_path
    pool._close_all()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMPROOF_")}
    return {**env, **extra}


async def _run(
    folder: Path, module: str, *args: str, warm: bool = True, **env: str
) -> tuple[TargetProcess, int, list[str]]:
    process = TargetProcess(
        "probe", [sys.executable, "-m", module, *args], _env(**env), cwd=str(folder), warm=warm
    )
    await process.start()
    proc = process._proc
    assert proc is not None
    code = await asyncio.wait_for(proc.wait(), 30)
    await process.drain()
    await process.close()
    return process, code, list(process.output.lines)


def _said(lines: list[str]) -> dict[str, object]:
    [line] = [x for x in lines if x.startswith("[stdout] ")]
    value = json.loads(line.removeprefix("[stdout] "))
    assert isinstance(value, dict)
    return value


def test_a_warm_start_is_the_command_with_its_own_arguments_environment_and_group(
    folder: Path,
) -> None:
    async def both() -> list[tuple[TargetProcess, int, list[str]]]:
        return [
            await _run(folder, "probe", "--one", PROBE="first", PROBE_EXIT="3"),
            await _run(folder, "probe", "two", "words", PROBE="second"),
        ]

    (first, code1, lines1), (second, code2, lines2) = asyncio.run(both())
    assert first.cold_reason is None and second.cold_reason is None
    one, two = _said(lines1), _said(lines2)
    assert (code1, code2) == (3, 0)
    assert one["name"] == two["name"] == "__main__"
    assert (one["args"], two["args"]) == (["--one"], ["two", "words"])
    assert (one["probe"], two["probe"]) == ("first", "second")
    assert one["cwd"] == two["cwd"] == str(folder)
    assert one["pgid"] == one["pid"] and two["pgid"] == two["pid"]  # its own process group
    assert one["stdin"] == two["stdin"] == ""
    assert "[stderr] said on stderr" in lines1 and "[stderr] said on stderr" in lines2
    # Both were forked from one interpreter, which had imported the module's imports once.
    assert one["ppid"] == two["ppid"] != os.getpid()
    assert one["heavy_loaded_in"] == two["heavy_loaded_in"] == one["ppid"]


def test_a_package_runs_its_main_module_as_python_dash_m_does(folder: Path) -> None:
    async def both() -> tuple[dict[str, object], dict[str, object]]:
        warm = _said((await _run(folder, "package", "x", PROBE="p"))[2])
        cold = _said((await _run(folder, "package", "x", warm=False, PROBE="p"))[2])
        return warm, cold

    warm, cold = asyncio.run(both())
    assert warm["name"] == cold["name"] == "__main__"
    assert warm["args"] == cold["args"] == ["x"] and warm["probe"] == "p"
    assert warm["heavy_loaded_in"] == warm["ppid"]  # the package was imported in the zygote


def test_a_cold_start_says_the_same_but_imports_for_itself(folder: Path) -> None:
    async def both() -> tuple[dict[str, object], dict[str, object]]:
        warm = _said((await _run(folder, "probe", "a", PROBE="p", PYTHONHASHSEED="7"))[2])
        cold = _said(
            (await _run(folder, "probe", "a", warm=False, PROBE="p", PYTHONHASHSEED="7"))[2]
        )
        return warm, cold

    warm, cold = asyncio.run(both())
    assert cold["heavy_loaded_in"] == cold["pid"] and warm["heavy_loaded_in"] != warm["pid"]
    different = ("pid", "pgid", "ppid", "heavy_loaded_in")
    assert {k: v for k, v in warm.items() if k not in different} == {
        k: v for k, v in cold.items() if k not in different
    }


def test_other_python_variables_get_a_zygote_of_their_own(folder: Path) -> None:
    async def both() -> tuple[dict[str, object], dict[str, object]]:
        one = _said((await _run(folder, "probe", PYTHONHASHSEED="1"))[2])
        two = _said((await _run(folder, "probe", PYTHONHASHSEED="2"))[2])
        return one, two

    one, two = asyncio.run(both())
    assert one["ppid"] != two["ppid"]
    assert one["hash"] != two["hash"]  # each child hashes as its own PYTHONHASHSEED says


def test_a_temporary_folder_too_deep_for_a_socket_path_still_starts_warm(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = folder / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr("tempfile.tempdir", str(deep))
    process, code, lines = asyncio.run(_run(folder, "probe"))
    assert process.cold_reason is None and code == 0
    assert _said(lines)["heavy_loaded_in"] == _said(lines)["ppid"]


def test_a_module_that_cannot_be_imported_is_started_cold_with_the_reason(folder: Path) -> None:
    process, code, lines = asyncio.run(_run(folder, "broken"))
    assert process.cold_reason is not None
    assert "exited with code 1" in process.cold_reason
    assert "cannot be imported" in process.cold_reason
    assert code == 1 and any("cannot be imported" in line for line in lines)


def test_a_module_that_starts_a_thread_is_not_forked(folder: Path) -> None:
    process, code, lines = asyncio.run(_run(folder, "threaded"))
    assert process.cold_reason is not None and "threads" in process.cold_reason
    assert code == 0 and "[stdout] ran" in lines


def test_the_switch_turns_warm_starts_off(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pool.SWITCH, "0")
    process, code, lines = asyncio.run(_run(folder, "probe"))
    assert process.cold_reason == f"warm starts are off ({pool.SWITCH}=0)"
    assert code == 0 and _said(lines)["heavy_loaded_in"] == _said(lines)["pid"]


def _python(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -c script`` in ``cwd`` as a streamproof process would be started; it must
    succeed."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=_env(**env),
    )
    assert done.returncode == 0, done.stderr
    return done


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().split(") ")[1].startswith("Z"):
                return True  # a zombie: dead, its parent not yet told
        time.sleep(0.05)
    return False


def test_close_ends_the_child_and_what_it_started(folder: Path) -> None:
    async def go() -> tuple[TargetProcess, int, int]:
        process = TargetProcess(
            "sleeper", [sys.executable, "-m", "sleeper"], _env(), cwd=str(folder), warm=True
        )
        await process.start()
        match = await process.wait_for_line(__import__("re").compile(r"^\[stdout\] (\d+)$"), 20)
        assert process.pid is not None
        pid, grandchild = process.pid, int(match.group(1))
        await process.close(grace=5)
        return process, pid, grandchild

    process, pid, grandchild = asyncio.run(go())
    assert process.cold_reason is None
    assert process.returncode == -signal.SIGTERM
    assert _gone(pid) and _gone(grandchild)


def test_when_the_harness_dies_its_zygote_and_warm_children_go_with_it(folder: Path) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio, os, sys
        from streamproof.targets.process import TargetProcess
        async def main():
            p = TargetProcess("s", [sys.executable, "-m", "sleeper"], dict(os.environ),
                              cwd={str(folder)!r}, warm=True)
            await p.start()
            assert p.cold_reason is None, p.cold_reason
            with open(f"/proc/{{p.pid}}/stat") as stat:
                zygote = stat.read().split(") ")[1].split()[1]
            with open(f"/proc/{{zygote}}/cmdline", "rb") as cmdline:
                socket = cmdline.read().split(b"\\0")[4].decode()
            print(p.pid, zygote, socket, flush=True)
            os._exit(0)   # no clean-up at all
        asyncio.run(main())
        """
    )
    done = _python(script, folder)
    pid, zygote, socket_path = done.stdout.split()
    assert _gone(int(zygote)) and _gone(int(pid))
    assert not Path(socket_path).parent.exists()  # the zygote removed its own folder


def test_processes_inside_sharing_fork_from_one_zygote_that_ends_with_the_block(
    folder: Path,
) -> None:
    script = textwrap.dedent(
        """
        import asyncio, json, os, sys
        from streamproof.targets.process import TargetProcess
        async def main():
            p = TargetProcess("probe", [sys.executable, "-m", "probe"], dict(os.environ),
                              cwd=os.getcwd(), warm=True)
            await p.start()
            await p._proc.wait()
            await p.drain()
            await p.close()
            print(p.cold_reason, [l for l in p.output.lines if l.startswith("[stdout]")][0])
        asyncio.run(main())
        """
    )
    with pool.sharing() as shared:
        said = []
        for _ in range(2):  # two processes, each started as streamproof runs are
            done = _python(script, folder, **{pool.SHARED: shared})
            reason, line = done.stdout.split(" ", 1)
            assert reason == "None"
            said.append(json.loads(line.strip().removeprefix("[stdout] ")))
        zygote = said[0]["ppid"]
        assert isinstance(zygote, int) and said[1]["ppid"] == zygote and not _gone(zygote, 0.2)
    assert _gone(zygote)
    assert not Path(shared).exists()


def test_a_shared_zygote_ends_when_its_owner_does(folder: Path) -> None:
    script = textwrap.dedent(
        """
        import asyncio, os, sys
        from streamproof.targets.process import TargetProcess
        from streamproof.targets.warm import pool
        async def main():
            p = TargetProcess("s", [sys.executable, "-m", "sleeper"], dict(os.environ),
                              cwd=os.getcwd(), warm=True)
            await p.start()
            assert p.cold_reason is None, p.cold_reason
            with open(f"/proc/{p.pid}/stat") as stat:
                print(p.pid, stat.read().split(") ")[1].split()[1], flush=True)
            os._exit(0)   # the owner dies inside its block: no clean-up at all
        with pool.sharing():
            asyncio.run(main())
        """
    )
    done = _python(script, folder)
    pid, zygote = (int(word) for word in done.stdout.split())
    assert _gone(zygote) and _gone(pid)
