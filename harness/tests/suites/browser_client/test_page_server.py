"""The command serving a page: started on a port of its own, waited for, its failures named."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from streamproof.suites.browser_client.page_server import PageServer
from streamproof.suites.browser_client.target import load_browser_target
from streamproof.targets.errors import TargetError

SCREEN = 'screen: {prompt: "#p", send: "#s", message: ".m", draft: ".d"}\n'


def _target(tmp_path: Path, command: str, extra: str = "") -> Path:
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "site" / "page.html").write_text("<p>hello</p>", encoding="utf-8")
    path = tmp_path / "page.yaml"
    path.write_text(
        f"kind: browser-client\nname: p\ncommand: {command}\ncwd: site\npath: /page.html\n"
        f"ready_timeout: 10s\n{extra}{SCREEN}",
        encoding="utf-8",
    )
    return path


async def test_a_served_page_is_waited_for_and_stopped(tmp_path: Path) -> None:
    command = '["{python}", "-m", "http.server", "{port}", "--bind", "127.0.0.1"]'
    target = load_browser_target(_target(tmp_path, command))
    server = PageServer(target, gateway_url="http://127.0.0.1:1")
    await server.start()
    try:
        async with aiohttp.ClientSession() as session, session.get(server.url) as response:
            assert response.status == 200 and "hello" in await response.text()
    finally:
        await server.close()
    assert server.process.returncode is not None


async def test_a_command_that_exits_is_named_with_its_output(tmp_path: Path) -> None:
    command = '["{python}", "-c", "import sys; print(\'no page here\'); sys.exit(3)"]'
    target = load_browser_target(_target(tmp_path, command, "env: {GW: x}\ngateway: {env: GW}\n"))
    server = PageServer(target, gateway_url="http://127.0.0.1:1")
    assert server.process.env["GW"] == "http://127.0.0.1:1"
    with pytest.raises(TargetError, match=r"exited with code 3(.|\n)*no page here"):
        await server.start()
