"""A fake gateway for browser clients: the seed's typed frames from a script, a history endpoint,
and a record of every request the page makes (docs/reference/browser-client-contract.md)."""

from streamproof.fakes.gateway.frames import GatewayFrame, history_events
from streamproof.fakes.gateway.server import FakeGateway, GatewayRequest, Pace

__all__ = ["FakeGateway", "GatewayFrame", "GatewayRequest", "Pace", "history_events"]
