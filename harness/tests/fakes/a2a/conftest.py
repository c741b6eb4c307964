"""The fake A2A server as a fixture for the tests that talk to it over HTTP (the real a2a-sdk
client, the raw wire, the REST routes): started on a free loopback port, closed after."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from streamproof.fakes.a2a import FakeA2AServer


@pytest.fixture
async def fake() -> AsyncIterator[FakeA2AServer]:
    server = FakeA2AServer()
    await server.start()
    yield server
    await server.close()
