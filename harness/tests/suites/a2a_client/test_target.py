"""The A2A client target: the target file, the contract's environment, and one turn of a
client command that behaves (a valid result) or misbehaves (garbage, nothing, a crash, a hang):
every misbehaviour is a clear failure within the bound, and no process is left behind."""

from __future__ import annotations

import asyncio
import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from streamproof.suites.a2a_client.reference.mutants import BUGS, INTENDED
from streamproof.suites.a2a_client.result import ClientRun, looks_like_result, parse_result_line
from streamproof.suites.a2a_client.target import (
    DEFAULT_CLIENT_TARGET,
    ClientTarget,
    client_environment,
    load_client_target,
    run_client_turn,
)
from streamproof.targets.errors import TargetConfigError

RESULT = {
    "status": "completed",
    "taskId": "t-1",
    "contextId": "c-1",
    "artifacts": [{"id": "summary", "name": "Summary", "text": "All good."}],
    "message": None,
    "incomplete": False,
}


def target(code: str, **extra: object) -> ClientTarget:
    return ClientTarget.model_validate(
        {"name": "probe", "command": ["{python}", "-c", textwrap.dedent(code)], **extra}
    )


async def run(client: ClientTarget, *, deadline: float = 0.5, **kw: object) -> ClientRun:
    return await run_client_turn(
        client,
        url="http://127.0.0.1:9/",
        prompt="Summarise",
        deadline_s=deadline,
        idle_s=0.2,
        grace_s=0.1,
        epoch=time.monotonic(),
        **kw,  # type: ignore[arg-type]
    )


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def pids(run_: ClientRun) -> list[int]:
    return [int(x) for line in run_.stdout_tail.splitlines() for x in line.split() if x.isdigit()]


# --- results -----------------------------------------------------------------------------------


async def test_a_valid_result_line_is_parsed() -> None:
    code = f"""
        import json, sys
        print("progress: working", flush=True)
        print("debug on stderr", file=sys.stderr)
        print(json.dumps({RESULT!r}))
    """
    done = await run(target(code))
    assert done.failure is None, done.failure
    assert done.result is not None and done.result.status == "completed"
    assert done.result.task_id == "t-1" and done.result.context_id == "c-1"
    assert done.result.artifacts[0].text == "All good."
    assert done.result_lines == 1 and done.exit_code == 0
    assert done.t_result is not None and done.t_exit is not None
    assert done.t_result <= done.t_exit
    assert "debug on stderr" in done.stderr_tail


def test_result_lines_parse_strictly_but_ignore_extra_members() -> None:
    parsed = parse_result_line(json.dumps({**RESULT, "elapsedMs": 12}))
    assert parsed.status == "completed"
    with pytest.raises(ValueError, match="statuses: completed"):
        parse_result_line(json.dumps({**RESULT, "status": "success"}))
    with pytest.raises(ValueError, match="not an object"):
        parse_result_line("[1, 2]")
    assert looks_like_result('{"status": "error"}') and not looks_like_result("status: ok")


@pytest.mark.parametrize(
    ("code", "kind", "shown"),
    [
        ("print('hello, I am done')", "bad-result", "hello, I am done"),
        ('print(\'{"status": "fine"}\')', "bad-result", "statuses:"),
        ("import sys; print('oops', file=sys.stderr)", "no-result", "oops"),
        ("import sys; print('partial'); sys.exit(3)", "crash", "exited with code 3"),
        ("raise SystemExit('boom')", "crash", "boom"),
    ],
    ids=["garbage", "wrong-status", "nothing", "exit-3", "traceback"],
)
async def test_a_client_that_breaks_the_contract_is_a_clear_failure(
    code: str, kind: str, shown: str
) -> None:
    started = time.monotonic()
    done = await run(target(code))
    assert time.monotonic() - started < 5
    assert done.result is None and done.failure is not None
    assert done.failure.kind == kind
    assert shown in done.failure.message
    assert "stdout:" in done.failure.message and "stderr:" in done.failure.message


async def test_a_hanging_client_is_killed_at_its_bound_with_its_children() -> None:
    code = """
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(os.getpid(), child.pid, flush=True)
        print("waiting for the stream...", file=sys.stderr, flush=True)
        time.sleep(60)
    """
    started = time.monotonic()
    done = await run(target(code), deadline=0.5)
    took = time.monotonic() - started
    assert done.failure is not None and done.failure.kind == "hang", done.failure
    assert "was killed" in done.failure.message
    assert "waiting for the stream..." in done.failure.message
    assert done.bound_s == pytest.approx(1.5)  # deadline + max(grace, 1 s)
    assert 1.4 < took < 6
    found = pids(done)
    assert len(found) == 2
    for _ in range(60):  # the kernel may take a moment to finish them off
        if not any(alive(p) for p in found):
            break
        await asyncio.sleep(0.05)
    assert not any(alive(p) for p in found), "a client process outlived its turn"


async def test_a_result_printed_without_exiting_is_kept_but_the_hang_is_reported() -> None:
    code = f"""
        import json, time
        print(json.dumps({RESULT!r}), flush=True)
        time.sleep(60)
    """
    done = await run(target(code))
    assert done.result is not None and done.result.status == "completed"
    assert done.failure is not None and done.failure.kind == "hang"
    assert "printed its result but was still running" in done.failure.message


async def test_two_result_lines_are_counted() -> None:
    code = f"""
        import json
        print(json.dumps({RESULT!r}))
        print(json.dumps({RESULT!r}))
    """
    done = await run(target(code))
    assert done.result_lines == 2 and done.failure is None


async def test_a_command_that_cannot_start_is_a_start_failure() -> None:
    missing = ClientTarget(name="ghost", command=("/nonexistent/streamproof-client",))
    done = await run(missing)
    assert done.failure is not None and done.failure.kind == "start"
    assert "/nonexistent/streamproof-client" in done.failure.message


async def test_startup_grace_extends_the_bound() -> None:
    slow = target(
        'import time, json; time.sleep(1.2); print(\'{"status": "error"}\')', startup_grace="1s"
    )
    done = await run(slow, deadline=0.1)
    assert done.failure is None and done.result is not None
    assert done.bound_s == pytest.approx(2.1)


async def _run_with_first_request(client: ClientTarget, marker: Path) -> ClientRun:
    """A turn whose "first request" is the client creating ``marker`` (as a server would see it:
    the moment, since the epoch, is noted by polling)."""
    epoch = time.monotonic()
    seen: dict[str, float] = {}

    async def watch() -> None:
        while "t" not in seen:
            if await asyncio.to_thread(marker.exists):
                seen["t"] = time.monotonic() - epoch
            await asyncio.sleep(0.01)

    watcher = asyncio.create_task(watch())
    try:
        return await run_client_turn(
            client,
            url="http://127.0.0.1:9/",
            prompt="Summarise",
            deadline_s=0.5,
            idle_s=0.2,
            grace_s=0.1,
            epoch=epoch,
            first_request=lambda after: seen.get("t") if seen.get("t", -1.0) >= after else None,
        )
    finally:
        watcher.cancel()


def _slow_boot(marker: Path, then: str) -> ClientTarget:
    """A client whose runtime takes 0.8 s to boot (a loaded machine), then sends its first
    request; the bound counted from the process start is deadline 0.5 s + grace 1 s."""
    return target(
        f"""
        import json, pathlib, time
        time.sleep(0.8)
        pathlib.Path({str(marker)!r}).touch()
        {then}
        """
    )


async def test_a_slow_boot_does_not_eat_the_deadline_counted_from_the_first_request(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "first-request"
    answer = f"time.sleep(0.9); print(json.dumps({RESULT!r}), flush=True)"
    done = await _run_with_first_request(_slow_boot(marker, answer), marker)
    assert done.failure is None, done.failure
    assert done.result is not None and done.result.status == "completed"
    assert done.bound_s > 2.2  # 0.8 s boot + 0.5 s deadline + 1 s grace; the result at ~1.7 s
    # Without the first request's moment, the same client is killed at the process bound.
    marker.unlink()
    killed = await run(_slow_boot(marker, answer))
    assert killed.failure is not None and killed.failure.kind == "hang", killed.failure
    assert killed.bound_s == pytest.approx(1.5)


async def test_a_client_that_hangs_after_a_slow_boot_is_still_killed(tmp_path: Path) -> None:
    marker = tmp_path / "first-request"
    started = time.monotonic()
    done = await _run_with_first_request(_slow_boot(marker, "time.sleep(60)"), marker)
    took = time.monotonic() - started
    assert done.failure is not None and done.failure.kind == "hang", done.failure
    assert "was killed" in done.failure.message
    assert 2.2 < done.bound_s < 4.0  # the first request (~0.8 s) + deadline + grace
    assert took < 8


# --- the contract's environment ----------------------------------------------------------------


async def test_the_turn_gets_the_contract_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMPROOF_TASK_ID", "leaked-from-the-harness")
    code = """
        import json, os
        env = {k: v for k, v in os.environ.items() if k.startswith(("STREAMPROOF_", "MY_"))}
        print(json.dumps({"status": "message", "message": json.dumps(env, sort_keys=True)}))
    """
    done = await run(
        target(code, env={"MY_FLAG": "1"}), deadline=2.5, task_id="t-9", context_id="c-9"
    )
    assert done.result is not None and done.result.message is not None
    env = json.loads(done.result.message)
    assert env == {
        "MY_FLAG": "1",
        "STREAMPROOF_A2A_URL": "http://127.0.0.1:9/",
        "STREAMPROOF_A2A_BINDING": "jsonrpc",
        "STREAMPROOF_PROMPT": "Summarise",
        "STREAMPROOF_DEADLINE_S": "2.5",
        "STREAMPROOF_IDLE_S": "0.2",
        "STREAMPROOF_TASK_ID": "t-9",
        "STREAMPROOF_CONTEXT_ID": "c-9",
    }
    first = client_environment(
        target(code), url="u", prompt="p", deadline_s=1, idle_s=0.5, bug=None
    )
    assert "STREAMPROOF_TASK_ID" not in first and "STREAMPROOF_CONTEXT_ID" not in first
    on_rest = client_environment(
        target(code), url="u", prompt="p", deadline_s=1, idle_s=0.5, binding="rest"
    )
    assert on_rest["STREAMPROOF_A2A_BINDING"] == "rest"


def test_a_bug_needs_a_target_that_takes_one() -> None:
    with pytest.raises(TargetConfigError, match="declares no bug_env"):
        client_environment(target("pass"), url="u", prompt="p", deadline_s=1, idle_s=1, bug="x")
    reference = load_client_target(None)
    env = client_environment(
        reference, url="u", prompt="p", deadline_s=1, idle_s=1, bug="no-watchdog"
    )
    assert env["STREAMPROOF_BUG"] == "no-watchdog"


def test_a_target_that_lists_its_bugs_takes_only_those() -> None:
    own = target("pass", bug_env="MY_BUG", bugs=["no-watchdog", "stream-end-as-completed"])
    env = client_environment(
        own, url="u", prompt="p", deadline_s=1, idle_s=1, bug="stream-end-as-completed"
    )
    assert env["MY_BUG"] == "stream-end-as-completed"
    with pytest.raises(TargetConfigError, match="has no such mutant; its bugs: no-watchdog, "):
        client_environment(own, url="u", prompt="p", deadline_s=1, idle_s=1, bug="gap-loss")


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"bugs": ["no-watchdog"]}, "set bug_env too"),
        ({"bug_env": "B", "bugs": ["x", "x"]}, "x: listed more than once"),
        ({"bug_env": "B", "bugs": [" "]}, "a mutant name is empty"),
    ],
)
def test_bad_bug_lists_are_rejected(extra: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        target("pass", **extra)


# --- target files ------------------------------------------------------------------------------


def test_the_bundled_reference_target_loads() -> None:
    reference = load_client_target(None)
    assert reference.name == "reference-client" and reference.bug_env == "STREAMPROOF_BUG"
    assert reference.argv()[1:] == ["-m", "streamproof.suites.a2a_client.reference.client"]
    assert load_client_target(DEFAULT_CLIENT_TARGET) == reference


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("kind: a2a-client\nname: x\n", "command: Field required"),
        ("kind: a2a-client\ncommand: []\n", "command: Tuple should have at least 1 item"),
        ("kind: a2a-client\ncommand: [java]\nport: 8080\n", "port: unknown key"),
        ("kind: gateway\ncommand: [java]\n", "kind: expected 'a2a-client', found 'gateway'"),
        (
            "command: [java]\nenv: {STREAMPROOF_A2A_URL: http://x}\n",
            "STREAMPROOF_A2A_URL: STREAMPROOF_* variables are set by streamproof",
        ),
        ("command: [java]\nstartup_grace: soon\n", "startup_grace"),
        ("command: [java\n", "malformed YAML"),
        ("- java\n", "must be a mapping"),
    ],
    ids=[
        "no-command",
        "empty-command",
        "unknown-key",
        "wrong-kind",
        "contract-env",
        "bad-duration",
        "malformed",
        "not-a-mapping",
    ],
)
def test_a_bad_target_file_names_the_file_and_the_field(
    tmp_path: Path, text: str, problem: str
) -> None:
    file = tmp_path / "client.yaml"
    file.write_text(text)
    with pytest.raises(TargetConfigError) as info:
        load_client_target(file)
    assert str(info.value).startswith(str(file))
    assert problem in str(info.value)


def test_a_missing_target_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(TargetConfigError, match="cannot read target file"):
        load_client_target(tmp_path / "absent.yaml")


def test_the_reference_lists_its_mutants_with_their_requirements() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "streamproof.suites.a2a_client.reference.client", "--list-bugs"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("STREAMPROOF_")},
    ).stdout
    lines = out.strip().splitlines()
    assert len(lines) == len(BUGS)
    for line, (name, requirement) in zip(lines, INTENDED.items(), strict=True):
        assert line.split()[:2] == [name, requirement]
