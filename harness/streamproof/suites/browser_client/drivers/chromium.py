"""Debian's Chromium, driven by Playwright (never ``playwright install``): where it is, and the
flags that keep it off the network on its own (no background networking, updates, sync or
QUIC), as docs/how-to/browser-client.md says."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from streamproof.targets.errors import TargetError

__all__ = ["CHROMIUM_FLAGS", "chromium_path"]

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
)


def chromium_path() -> Path:
    """``STREAMPROOF_CHROMIUM`` or ``chromium`` on PATH; a clear error without one."""
    given = os.environ.get("STREAMPROOF_CHROMIUM")
    found = given or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found or not Path(found).is_file():
        raise TargetError(
            "the browser-client suite needs Chromium: install Debian's chromium package "
            "(scripts/install-chromium) or set STREAMPROOF_CHROMIUM to a Chromium binary"
        )
    return Path(found)
