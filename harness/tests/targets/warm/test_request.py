"""Which commands a zygote can become, and the messages between harness and zygote."""

from __future__ import annotations

import pytest

from streamproof.targets.warm.request import (
    HEADER,
    WarmCommand,
    check_warm_start,
    decode_length,
    encode,
    interpreter_env,
    warm_command,
)


def test_python_dash_m_module_with_its_arguments_is_a_warm_command() -> None:
    assert warm_command(["/venv/bin/python", "-m", "pkg.server", "--bug", "x"]) == WarmCommand(
        python="/venv/bin/python", module="pkg.server", args=("--bug", "x")
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["python", "script.py"],  # a script: its own sys.path[0], not a module
        ["python", "-X", "importtime", "-m", "pkg"],  # an interpreter option
        ["python", "-m"],
        ["python", "-m", "-c"],
        ["java", "-jar", "x.jar"],
    ],
)
def test_anything_else_is_not(argv: list[str]) -> None:
    assert warm_command(argv) is None


def test_the_interpreter_shaping_environment_is_python_and_locale_variables() -> None:
    env = {"PYTHONHASHSEED": "0", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "PORT": "1"}
    assert interpreter_env(env) == {
        "PYTHONHASHSEED": "0",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TZ": "UTC",
    }


def test_a_message_is_its_length_then_its_json() -> None:
    wire = encode({"pid": 12})
    assert decode_length(wire[: HEADER.size]) == len(wire) - HEADER.size
    assert wire[HEADER.size :] == b'{"pid":12}'


def test_warm_start_needs_the_harness_python_and_a_module() -> None:
    check_warm_start(False, ["java", "-jar", "x.jar"])
    check_warm_start(True, ["{python}", "-m", "pkg.server"])
    for command in (["python3", "-m", "pkg"], ["{python}", "server.py"], None):
        with pytest.raises(ValueError, match=r'\["\{python\}", "-m", MODULE, \.\.\.\]'):
            check_warm_start(True, command)
