"""What ``streamproof run`` imports, imported at once, for a zygote to import before it forks
runs (docs/explanation/performance.md#warm-starts): ``streamproof mutants`` and the harness's
own tests start hundreds of runs, and each spent about a CPU-second importing and setting up
pytest, aiohttp, pydantic and the suites. Importing this module only imports: it builds no
rule, registers no plugin and reads no environment."""

from __future__ import annotations

import importlib

import aiohttp  # noqa: F401
import pytest  # noqa: F401
import pytest_asyncio.plugin  # noqa: F401
import yaml  # noqa: F401

import streamproof.cli.run
import streamproof.cli.run_reports
import streamproof.plugin
import streamproof.report.html
import streamproof.report.runs  # noqa: F401
from streamproof.runtime.imports import import_early
from streamproof.suites import SUITES

for _module in SUITES.values():
    importlib.import_module(_module)
# What a run imports once it runs a scenario: each suite's runner and the fault engines
# (mitmproxy's alone took about 0.5 CPU-s in every run that carried a link through it).
for _module in (
    "streamproof.suites.gateway.runner",
    "streamproof.suites.a2a_client.runner",
    "streamproof.suites.browser_client.runner",
    "streamproof.faults.engines.inline",
    "streamproof.faults.engines.toxiproxy",
):
    importlib.import_module(_module)
# The mitmproxy engine and Playwright only where they are installed.
import_early(("streamproof.faults.engines.mitmproxy", "playwright.async_api"))
