"""The fakes and gateway processes of the tests that start the reference (process.py):
module-scoped, so a module's tests share them on the module's event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest_asyncio

from harness.tests.suites.gateway.reference.process import (
    Gateway,
    GatewayFactory,
    start_gateway,
)
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model() -> AsyncIterator[FakeModel]:
    fake = FakeModel()
    await fake.start()
    yield fake
    await fake.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tools() -> AsyncIterator[FakeTools]:
    fake = FakeTools()
    await fake.start()
    yield fake
    await fake.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gateways(model: FakeModel, tools: FakeTools) -> AsyncIterator[GatewayFactory]:
    """Gateway processes by bug name (None: the reference), started once and shared."""
    started: dict[str | None, Gateway] = {}

    async def get(bug: str | None) -> Gateway:
        if bug not in started:
            started[bug] = await start_gateway(model, tools, bug=bug)
        return started[bug]

    yield get
    codes = await asyncio.gather(*(g.stop() for g in started.values()))
    for gateway in started.values():
        assert "Traceback" not in gateway.stderr_path.read_text()
        gateway.stderr_path.unlink()
    assert codes == [0] * len(codes), f"a gateway did not exit 0 on SIGTERM: {codes}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def reference(gateways: GatewayFactory) -> Gateway:
    return await gateways(None)
