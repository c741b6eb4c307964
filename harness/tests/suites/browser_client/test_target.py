"""Target files: a page by url or command, or a reducer module; errors name the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.suites.browser_client.target import (
    DEFAULT_PAGE_TARGET,
    REDUCER_TARGET,
    load_browser_target,
)
from streamproof.targets.errors import TargetConfigError

SCREEN = 'screen: {prompt: "#p", send: "#s", message: ".m", draft: ".d"}\n'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "target.yaml"
    path.write_text("kind: browser-client\nname: t\n" + text, encoding="utf-8")
    return path


def test_the_bundled_references_load() -> None:
    page = load_browser_target(None)
    assert page.name == "reference-page" and page.capabilities == ("transport",)
    assert load_browser_target(DEFAULT_PAGE_TARGET) == page
    reducer = load_browser_target(REDUCER_TARGET)
    assert reducer.is_module and reducer.capabilities == ()
    assert Path(reducer.module or "").is_absolute()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("url: http://127.0.0.1:1/\n", "needs screen"),
        ("url: http://127.0.0.1:1/\nmodule: r.mjs\n" + SCREEN, "exactly one of"),
        (SCREEN, "exactly one of"),
        ("module: r.mjs\n" + SCREEN, "a module has none"),
        ("url: http://127.0.0.1:1/\ngateway: {env: GW}\n" + SCREEN, "gateway.env"),
        ("url: http://127.0.0.1:1/\nbugs: [x]\n" + SCREEN, "bug_param"),
        ("command: [serve]\npath: page.html\n" + SCREEN, "starts with '/'"),
    ],
)
def test_a_bad_target_names_the_file_and_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    with pytest.raises(TargetConfigError, match=problem) as raised:
        load_browser_target(_write(tmp_path, text))
    assert str(tmp_path / "target.yaml") in str(raised.value)


def test_a_missing_module_is_named(tmp_path: Path) -> None:
    with pytest.raises(TargetConfigError, match=r"'nowhere\.mjs' is not a file"):
        load_browser_target(_write(tmp_path, "module: nowhere.mjs\n"))


def test_the_command_gets_the_port_and_the_interpreter(tmp_path: Path) -> None:
    target = load_browser_target(
        _write(tmp_path, 'command: ["{python}", "-m", "http.server", "{port}"]\n' + SCREEN)
    )
    argv = target.argv(8123)
    assert argv[1:] == ["-m", "http.server", "8123"] and argv[0].endswith(("python", "python3"))


def test_a_profile_and_endpoints_are_read_and_a_module_takes_typed_frames_only(
    tmp_path: Path,
) -> None:
    page = load_browser_target(
        _write(
            tmp_path,
            "url: http://127.0.0.1:1/\nprofile: ag-ui\n"
            'endpoints: {chat: "POST /agent/{sessionId}"}\n' + SCREEN,
        )
    )
    assert page.profile == "ag-ui" and page.endpoints.chat == "POST /agent/{sessionId}"
    assert page.endpoints.history == "GET /history/{sessionId}"
    (tmp_path / "r.mjs").write_text("export function reduce(s) { return s; }\n")
    with pytest.raises(TargetConfigError, match="typed frames only"):
        load_browser_target(_write(tmp_path, "module: r.mjs\nprofile: ag-ui\n"))
    with pytest.raises(TargetConfigError, match="METHOD /path"):
        load_browser_target(_write(tmp_path, "module: r.mjs\nendpoints: {chat: chat}\n"))
