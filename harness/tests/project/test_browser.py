"""The browser helper (harness/tests/browser.py) on small pages of its own: it must report what
a page does wrong (console errors, page errors, failed loads, any network use, blocked before it
leaves), stay quiet on a sound page, and take real screenshots."""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.tests.browser import open_in_browser

# Slow: drives Chromium.
pytestmark = pytest.mark.slow

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _page(tmp_path: Path, body: str, name: str = "page.html") -> Path:
    page = tmp_path / name
    page.write_text(
        f'<!doctype html><html><head><meta charset="utf-8"><title>t</title></head>'
        f"<body>{body}</body></html>",
        encoding="utf-8",
    )
    return page


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == _PNG_SIGNATURE, f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


class _Counting(BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def loopback_server() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 that counts the requests reaching it."""
    hits: list[str] = []
    handler = type("Handler", (_Counting,), {"hits": hits})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_sound_self_contained_page_has_no_problems(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        '<table class="matrix"><tr><td class="cell pass">✓</td><td class="cell fail">✗</td>'
        '</tr></table><img alt="dot" src="data:image/png;base64,'
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5"
        'ErkJggg=="><script>console.log("info is fine"); console.warn("so is a warning")</script>',
    )
    with open_in_browser(page) as opened:
        assert opened.problems() == []
        assert opened.count("table.matrix td.cell") == 2
        assert opened.count("td.cell.pass") == 1
        assert opened.count("svg.timeline") == 0
        assert opened.texts("td.cell.fail") == ["✗"]
        assert opened.evaluate("document.images[0].naturalWidth") == 1


def test_a_console_error_and_an_uncaught_exception_are_reported(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        '<script>console.error("deliberate: the matrix is empty")</script>'
        "<script>undefinedFunction()</script>",
    )
    with open_in_browser(page) as opened:
        problems = opened.problems()
    assert any(p.startswith("console error: deliberate: the matrix is empty") for p in problems), (
        problems
    )
    assert any(p.startswith("page error:") and "undefinedFunction" in p for p in problems), problems


def test_any_request_off_the_file_system_is_network_use_and_never_leaves(
    tmp_path: Path, loopback_server: tuple[str, list[str]]
) -> None:
    base, hits = loopback_server
    page = _page(
        tmp_path,
        f'<img src="{base}/pixel.png"><link rel="stylesheet" href="{base}/style.css">'
        f'<script>fetch("{base}/api").catch(() => {{}})</script>',
    )
    with open_in_browser(page) as opened:
        opened.evaluate("new Promise(r => setTimeout(r, 200))")
        problems = opened.problems()
        network = list(opened.network)
    assert {f"{base}/pixel.png", f"{base}/style.css", f"{base}/api"} <= set(network), problems
    assert f"network use (blocked): {base}/pixel.png" in problems
    assert hits == [], f"a request reached the loopback server: {hits}"


def test_a_websocket_is_network_use(tmp_path: Path) -> None:
    page = _page(tmp_path, '<script>new WebSocket("ws://127.0.0.1:9/live")</script>')
    with open_in_browser(page) as opened:
        opened.evaluate("new Promise(r => setTimeout(r, 200))")
        problems = opened.problems()
    assert "network use (blocked): ws://127.0.0.1:9/live" in problems, problems


def test_a_missing_local_file_is_a_failed_request(tmp_path: Path) -> None:
    page = _page(tmp_path, '<img src="missing.png" alt="gone">')
    with open_in_browser(page) as opened:
        problems = opened.problems()
    missing = (tmp_path / "missing.png").as_uri()
    assert any(p.startswith(f"failed request: {missing}") for p in problems), problems
    assert not any(p.startswith("network use") for p in problems), problems


def test_screenshots_of_the_page_and_of_one_element(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        '<section class="scenario" id="scn-a--b" style="width:300px;height:120px;'
        'background:#c33">x</section><div style="height:2000px">long</div>',
    )
    with open_in_browser(page, width=800, height=600) as opened:
        whole = opened.screenshot(tmp_path / "out" / "page.png")
        part = opened.screenshot(tmp_path / "out" / "part.png", "section.scenario#scn-a--b")
        with pytest.raises(AssertionError, match="0 elements match"):
            opened.screenshot(tmp_path / "out" / "none.png", "svg.timeline")
    page_width, page_height = _png_size(whole)
    assert page_width == 800 and page_height > 2000  # the full length, not the viewport
    assert _png_size(part) == (300, 120)
    assert not (tmp_path / "out" / "none.png").exists()


def test_a_page_that_is_not_there_is_a_clear_error(tmp_path: Path) -> None:
    with (
        pytest.raises(FileNotFoundError, match="no page to open"),
        open_in_browser(tmp_path / "absent.html"),
    ):
        pass
