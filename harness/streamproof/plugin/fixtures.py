"""The fixtures the streamproof pytest plugin ships for a team's own tests.

Loaded by :mod:`streamproof.plugin` (``pytest_plugins``), so they exist in every pytest run
of an environment where streamproof is installed. This module imports only pytest and the
standard library: the fakes (aiohttp, pydantic) load when a test first asks for a fixture.

Shape, as pytest-httpserver's: a session-scoped fixture starts each server once
(``streamproof_fakes``, on a background event loop thread, 127.0.0.1 only, bounded startup,
closed at session end) and a function-scoped fixture resets it before each test:

* ``fake_model``: :class:`streamproof.testing.FakeModelServer`, the fake Gemini endpoint.
* ``fake_a2a``: :class:`streamproof.testing.FakeA2A`, the fake A2A agent.
* ``fault_link``: :class:`streamproof.testing.FaultLinks`; ``fault_link(upstream, "after_event 3:
  rst")`` is a fault proxy in front of ``upstream`` with that plan.
* ``gateway_env``: :class:`streamproof.testing.GatewayEnv`, the fake model behind a fault link plus
  the fake tool service, with the environment a gateway process reads.
* ``a2a_env``: :class:`streamproof.testing.A2AEnv`, the fake A2A agent behind a fault link.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from streamproof.testing import A2AEnv, FakeA2A, FakeModelServer, Fakes, FaultLinks, GatewayEnv


@pytest.fixture(scope="session")
def streamproof_fakes() -> Iterator[Fakes]:
    """The session's event loop thread and servers (each started on first use)."""
    from streamproof.testing import Fakes

    fakes = Fakes()
    try:
        yield fakes
    finally:
        fakes.close()


@pytest.fixture
def fault_link(streamproof_fakes: Fakes) -> FaultLinks:
    """``fault_link(upstream, *faults)``: a fault proxy in front of ``upstream``, reset per test."""
    from streamproof.testing import FaultLinks

    streamproof_fakes.reset_links()
    return FaultLinks(streamproof_fakes)


@pytest.fixture
def fake_model(streamproof_fakes: Fakes) -> FakeModelServer:
    """The fake Gemini endpoint, with no script and no calls."""
    from streamproof.testing import FakeModelServer

    streamproof_fakes.reset_model()
    return FakeModelServer(streamproof_fakes)


@pytest.fixture
def fake_a2a(streamproof_fakes: Fakes) -> FakeA2A:
    """The fake A2A agent, with no script and an empty ledger."""
    from streamproof.testing import FakeA2A

    streamproof_fakes.reset_a2a()
    return FakeA2A(streamproof_fakes)


@pytest.fixture
def gateway_env(
    streamproof_fakes: Fakes, fake_model: FakeModelServer, fault_link: FaultLinks
) -> GatewayEnv:
    """The fake model behind a fault link (no faults until ``gateway_env.link.plan(...)``) and
    the fake tool service."""
    from streamproof.testing import GatewayEnv

    return GatewayEnv(streamproof_fakes, fake_model, fault_link(fake_model.base_url))


@pytest.fixture
def a2a_env(fake_a2a: FakeA2A, fault_link: FaultLinks) -> A2AEnv:
    """The fake A2A agent behind a fault link (no faults until ``a2a_env.link.plan(...)``)."""
    from streamproof.testing import A2AEnv

    return A2AEnv(fake_a2a, fault_link(fake_a2a.base_url))
