"""Open a local page in a real browser for a test: headless Debian Chromium driven by Playwright.

Playwright (the ``playwright`` package, in the ``test`` extra) drives the system browser,
``/usr/bin/chromium`` from Debian's packages (``scripts/install-chromium``); nothing here downloads
a browser (never run ``playwright install``). Chromium starts with the flags that keep it off
the network on its own (no background networking, component updates, sync or QUIC) and a
fresh, empty profile that is removed afterwards.

Everything the page does wrong is collected while it is open: console messages of type error,
uncaught page errors, requests that failed, and every request that is not ``file:`` or
``data:``, which is reported as network use and blocked before it leaves the machine. A report
page must be self-contained, so a test asserts :meth:`OpenedPage.problems` is empty.

Without Chromium or Playwright a test using :func:`open_in_browser` skips (fails under
``STREAMPROOF_REQUIRE_ALL=1``, like every test needing a real component). Every step is bounded
by ``timeout_s`` and the browser is always closed, whatever the test does.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from harness.tests.conftest import require_executable, require_module
from streamproof.suites.browser_client.drivers.chromium import CHROMIUM_FLAGS

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Error, Page, Request, Route, WebSocket

LOCAL_SCHEMES = frozenset({"file", "data", "about", "blob"})


class OpenedPage:
    """A page open in headless Chromium, with what went wrong while it loaded and since."""

    def __init__(self, page: Page, url: str) -> None:
        self._page = page
        self.url = url
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.failed_requests: list[str] = []
        self.network: list[str] = []

    # -- collectors (Playwright calls these on its own thread of events) --

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url", "")
            line = message.location.get("lineNumber")
            at = f" (at {where}:{line})" if where else ""
            self.console_errors.append(f"{message.text}{at}")

    def _on_page_error(self, error: Error) -> None:
        self.page_errors.append(str(error.message or error))

    def _note_network(self, url: str) -> None:
        if url not in self.network:
            self.network.append(url)

    def _on_request(self, request: Request) -> None:
        if not _is_local(request.url):
            self._note_network(request.url)

    def _on_request_failed(self, request: Request) -> None:
        if _is_local(request.url):
            self.failed_requests.append(f"{request.url}: {request.failure or 'failed'}")

    def _on_websocket(self, socket: WebSocket) -> None:
        self._note_network(socket.url)

    def _route(self, route: Route) -> None:
        url = route.request.url
        if _is_local(url):
            route.continue_()
        else:
            self._note_network(url)
            route.abort("blockedbyclient")

    # -- what a test asks --

    def count(self, selector: str) -> int:
        """How many elements match the CSS ``selector``."""
        return self._page.locator(selector).count()

    def texts(self, selector: str) -> list[str]:
        """The text content of each element matching ``selector``."""
        return [text or "" for text in self._page.locator(selector).all_text_contents()]

    def evaluate(self, expression: str) -> object:
        """The value of a JavaScript expression in the page."""
        return self._page.evaluate(expression)

    def screenshot(self, path: Path, selector: str | None = None) -> Path:
        """Save a PNG of the whole page (scrolled full length), or of the one element matching
        ``selector``, to ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if selector is None:
            self._page.screenshot(path=str(path), full_page=True)
        else:
            found = self._page.locator(selector)
            if found.count() != 1:
                raise AssertionError(
                    f"screenshot of {selector!r} in {self.url}: {found.count()} elements match, "
                    "expected exactly 1"
                )
            found.screenshot(path=str(path))
        return path

    def problems(self) -> list[str]:
        """Everything that went wrong, one line each: empty for a sound, self-contained page."""
        self._page.evaluate("0")  # a round trip: events the page sent before it have arrived
        return (
            [f"console error: {text}" for text in self.console_errors]
            + [f"page error: {text}" for text in self.page_errors]
            + [f"failed request: {text}" for text in self.failed_requests]
            + [f"network use (blocked): {url}" for url in self.network]
        )


def _is_local(url: str) -> bool:
    return urlsplit(url).scheme in LOCAL_SCHEMES


def chromium() -> Path:
    """Debian's Chromium, or skip (fail under STREAMPROOF_REQUIRE_ALL=1) without it."""
    return require_executable("chromium")


@contextmanager
def open_in_browser(
    page_file: Path, *, timeout_s: float = 30.0, width: int = 1280, height: int = 900
) -> Iterator[OpenedPage]:
    """Open the local file ``page_file`` in headless Chromium and yield it once loaded.

    ``timeout_s`` bounds the browser's start and each step (load, query, screenshot); the
    browser and its throwaway profile are removed on leaving, also after a failure.
    """
    if not page_file.is_file():
        raise FileNotFoundError(f"no page to open: {page_file} is not a file")
    browser_path = chromium()
    sync_api = require_module("playwright.sync_api")
    timeout_ms = timeout_s * 1000
    url = page_file.resolve().as_uri()
    with (
        tempfile.TemporaryDirectory(prefix="streamproof-chromium-") as profile,
        sync_api.sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(browser_path),
            headless=True,
            args=list(CHROMIUM_FLAGS),
            timeout=timeout_ms,
            viewport={"width": width, "height": height},
            service_workers="block",
        )
        try:
            context.set_default_timeout(timeout_ms)
            context.set_default_navigation_timeout(timeout_ms)
            page = context.pages[0] if context.pages else context.new_page()
            opened = OpenedPage(page, url)
            context.route("**/*", opened._route)
            page.on("console", opened._on_console)
            page.on("pageerror", opened._on_page_error)
            page.on("request", opened._on_request)
            page.on("requestfailed", opened._on_request_failed)
            page.on("websocket", opened._on_websocket)
            page.goto(url, wait_until="load")
            yield opened
        finally:
            context.close()
