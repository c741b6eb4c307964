"""``gateway_env`` and ``a2a_env``: a fake behind a fault link, ready for a system under test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamproof.fakes.records import ToolCall
from streamproof.protocol import a2a
from streamproof.testing.a2a import FakeA2A
from streamproof.testing.hub import TOOL_MARKER, Fakes
from streamproof.testing.links import FaultLink
from streamproof.testing.model import FakeModelServer

__all__ = ["A2AEnv", "GatewayEnv"]

# --- ready environments -------------------------------------------------------------------------


class GatewayEnv:
    """What a gateway under test needs (``gateway_env``): the fake model behind a fault link,
    and the fake tool service. Give the gateway :attr:`env`."""

    __test__ = False

    def __init__(self, fakes: Fakes, model: FakeModelServer, link: FaultLink) -> None:
        self._fakes = fakes
        self.model = model
        self.link = link
        self._tools = fakes.tools()

    @property
    def model_url(self) -> str:
        """The link's URL: what ``GOOGLE_GEMINI_BASE_URL`` should name."""
        return self.link.url

    @property
    def tools_url(self) -> str:
        return self._tools.base_url

    @property
    def env(self) -> dict[str, str]:
        """Environment variables for a gateway process (the reference gateway reads these)."""
        return {
            "GOOGLE_GEMINI_BASE_URL": self.model_url,
            "GOOGLE_API_KEY": "streamproof-fake-key",
            "STREAMPROOF_TOOL_URL": self.tools_url,
        }

    def tools(self, payloads: Mapping[str, Any]) -> None:
        """Script each tool's JSON answer (``{{marker}}`` becomes :data:`TOOL_MARKER`)."""
        self._fakes.call(lambda: self._tools.load(dict(payloads), TOOL_MARKER))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self._fakes.call(lambda: self._tools.calls)


class A2AEnv:
    """What an A2A client under test needs (``a2a_env``): the fake agent behind a fault link.
    The card names the link's URL (:attr:`FakeA2A.advertised_url`), so a client that follows
    it stays on the link: the proxy forwards requests with the upstream's own ``Host``."""

    __test__ = False

    def __init__(self, agent: FakeA2A, link: FaultLink) -> None:
        self.agent = agent
        self.link = link
        agent.advertised_url = self.rpc_url

    @property
    def card_url(self) -> str:
        return self.link.url + a2a.AGENT_CARD_PATH

    @property
    def rpc_url(self) -> str:
        return self.link.url + "/"
