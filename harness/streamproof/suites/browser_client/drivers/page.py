"""A page under test in headless Chromium: opened with the screen recorder
(``screen.js``), the prompt typed and sent, the screen read after each frame, the tab hidden on
request, and everything read back at the end.

The recorder sees what the page's stream readers receive, so :meth:`PageDriver.wait_received`
knows when a frame reached the page, and :meth:`PageDriver.settle` waits until the page has
gone quiet after it (no DOM change for :data:`QUIET_S`) before the settled read.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from importlib import resources
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from streamproof.suites.browser_client.drivers.chromium import CHROMIUM_FLAGS, chromium_path
from streamproof.suites.browser_client.target import Screen
from streamproof.targets.errors import TargetError

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, Playwright

__all__ = ["PageDriver", "with_query"]

QUIET_S: Final = 0.04
"""A page is settled after a frame once its DOM has not changed for this long since the frame
reached it (a page that renders on the next animation frame has changed by then)."""
STEP_TIMEOUT_S: Final = 10.0
"""Bound on each browser step (load, type, click, read)."""


POLL_S: Final = 0.01
"""How often the page checks, while it waits, whether a frame has arrived or its DOM is quiet."""
WAIT_SLICE_S: Final = 0.05
"""The longest the page waits for a frame before the harness asks again whether the stream
ended (so a frame that will never come is given up within this much of the stream's end)."""

_WAIT_RECEIVED: Final = """async ([block, forMs, pollMs]) => {
  const sp = window.__streamproof, end = performance.now() + forMs;
  while (!sp.text.includes(block)) {
    if (performance.now() >= end) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return true;
}"""
_SETTLE: Final = """async ([quietMs, forMs, pollMs]) => {
  const sp = window.__streamproof, end = performance.now() + forMs;
  while (performance.now() < end
         && performance.now() - Math.max(sp.lastChange, sp.lastRead) < quietMs) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  sp.record(true);
}"""


def with_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *params.items()]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _recorder(screen: Screen) -> str:
    script = resources.files(__package__).joinpath("screen.js").read_text(encoding="utf-8")
    selectors = json.dumps(screen.model_dump())
    return f"window.__STREAMPROOF_SCREEN__ = {selectors};\n{script}"


class PageDriver:
    """One Chromium for an environment; a fresh context and page per scenario."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self.console_errors: list[str] = []
        self._wall_t0 = time.time()

    async def start(self) -> None:
        try:
            from playwright.async_api import async_playwright
        except ImportError:
            raise TargetError(
                "the browser-client suite needs Playwright (pip install playwright; it drives "
                "Debian's Chromium, no browser download)"
            ) from None
        path = chromium_path()
        self._playwright = await async_playwright().start()
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=str(path), args=list(CHROMIUM_FLAGS), timeout=30_000
            )
        except Exception as exc:
            await self.close()
            raise TargetError(f"Chromium ({path}) did not start: {exc}") from None

    async def close(self) -> None:
        await self.leave()
        if self._browser is not None:
            await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    @property
    def page(self) -> Page:
        if self._page is None:
            raise RuntimeError("PageDriver: no page open")
        return self._page

    async def open(self, url: str, wall_t0: float) -> None:
        """Open ``url`` in a fresh context with the recorder; ``wall_t0`` is the scenario's
        epoch in wall-clock seconds (the page's clock)."""
        assert self._browser is not None
        await self.leave()
        self.console_errors = []
        self._wall_t0 = wall_t0
        self._context = await self._browser.new_context(service_workers="block")
        self._context.set_default_timeout(STEP_TIMEOUT_S * 1000)
        await self._context.add_init_script(script=_recorder(self.screen))
        self._page = await self._context.new_page()
        self._page.on("console", self._on_console)
        self._page.on("pageerror", lambda error: self.console_errors.append(f"page error: {error}"))
        try:
            await self._page.goto(url, wait_until="load")
        except Exception as exc:
            raise TargetError(f"the page {url} did not load: {exc}") from None

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)

    async def send(self, prompt: str) -> str | None:
        """Type ``prompt`` and press the send control; a problem (a selector that matches
        nothing) as text, ``None`` when it went."""
        page = self.page
        for key in ("prompt", "send"):
            selector = getattr(self.screen, key)
            if await page.locator(selector).count() == 0:
                return f"screen.{key} {selector!r} matches nothing on the page"
        try:
            await page.locator(self.screen.prompt).first.fill(prompt)
            await page.locator(self.screen.send).first.click()
        except Exception as exc:
            return f"typing and sending the prompt failed: {exc}"
        return None

    async def received(self, block: str) -> bool:
        return bool(await self.page.evaluate("b => window.__streamproof.text.includes(b)", block))

    async def wait_received(self, block: str, timeout: float, gone: Any = None) -> bool:
        """Whether the page's readers got ``block`` within ``timeout`` (stops early once
        ``gone()`` says the stream ended before it).

        The page waits on itself (:data:`WAIT_SLICE_S` at a time, ``gone()`` asked between
        slices): polling it from here cost a DevTools round trip every 10 ms, most of the
        browser's CPU in a run."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0 or (gone is not None and gone()):
                return await self.received(block)
            got = await self.page.evaluate(
                _WAIT_RECEIVED, [block, min(left, WAIT_SLICE_S) * 1000, POLL_S * 1000]
            )
            if got:
                return True

    async def settle(self, timeout: float = 1.0) -> None:
        """Wait until the DOM has been quiet for :data:`QUIET_S` (at most ``timeout``), then
        take a settled read: one call, the page waiting on itself."""
        await self.page.evaluate(_SETTLE, [QUIET_S * 1000, timeout * 1000, POLL_S * 1000])

    async def hide(self, for_s: float) -> None:
        """The tab hidden, then shown again ``for_s`` later (``visibilitychange`` each time)."""
        await self.page.evaluate("window.__streamproof.setHidden(true)")
        await asyncio.sleep(for_s)
        await self.page.evaluate("window.__streamproof.setHidden(false)")

    async def states(self) -> tuple[str, list[dict[str, Any]]]:
        """What the page's readers received, and every screen state recorded (``t`` in
        seconds since the scenario's epoch)."""
        data = await self.page.evaluate(
            "() => ({text: window.__streamproof.text, states: window.__streamproof.states})"
        )
        states = [
            {**s, "t": round(float(s["t"]) / 1000 - self._wall_t0, 4)} for s in data["states"]
        ]
        return str(data["text"]), states

    async def screenshot(self) -> str | None:
        """A PNG of the page as a data URI (``None`` when it cannot be taken)."""
        try:
            png = await self.page.screenshot(full_page=True, timeout=5_000)
        except Exception:
            return None
        return "data:image/png;base64," + base64.b64encode(png).decode("ascii")

    async def leave(self) -> None:
        if self._context is not None:
            try:
                await self._context.close()
            finally:
                self._context, self._page = None, None
