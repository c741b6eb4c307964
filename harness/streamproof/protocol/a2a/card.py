"""The agent card: where a client finds it and what it says for each served wire."""

from __future__ import annotations

from typing import Any, Final, Literal

from streamproof.protocol.a2a.vocabulary import ServedWire

AGENT_CARD_PATH: Final = "/.well-known/agent-card.json"
"""0.3 and 1.0 alike; the 0.2 path ``agent.json`` is never fetched by current clients (§1.1)."""


def agent_card(
    url: str,
    wire: ServedWire,
    *,
    name: str = "streamproof-fake-agent",
    description: str = "A scripted A2A agent (streamproof fake server)",
    streaming: bool = True,
    binding: Literal["jsonrpc", "rest"] = "jsonrpc",
    push_notifications: bool = False,
) -> dict[str, Any]:
    """The card served at :data:`AGENT_CARD_PATH`; ``url`` is the JSON-RPC endpoint.

    ``binding: rest`` (a 1.0 wire only): the card lists one interface, HTTP+JSON 1.0 at the
    agent's base URL (``url`` without its trailing ``/``: a REST client appends
    ``/message:stream``...), as a2a-sdk 1.3 spells it, and none of the JSON-RPC ones, so a
    client that picks its transport from the card lands on REST
    (docs/reference/a2a-client-contract.md#bindings). The 0.3 top-level fields stay out: a
    0.3 client has no HTTP+JSON 1.0.

    How a2a-sdk 1.3 picks its transport from the card (§1.1, ``client_factory.py``):

    * **0.3**: ``url`` + ``preferredTransport`` + ``protocolVersion: "0.3.0"`` and no
      ``supportedInterfaces``. The client maps it to one interface at version 0.3.0 and picks
      ``CompatJsonRpcTransport`` (``0.3 <= v < 1.0``). Java 0.3.3 needs every field below
      (it throws on a card without ``capabilities``, ``skills``, ``url``…).
    * **1.0**: ``supportedInterfaces: [{url, protocolBinding: JSONRPC, protocolVersion: "1.0"}]``
      only; the client picks ``JsonRpcTransport``.
    * **both**: the merge a2a-sdk 1.3 serves with 0.3 compat on (1.0 interface first, then the
      0.3 one, plus the 0.3 top-level fields); the 1.3 client prefers 1.0 (§2.1).
    """
    capabilities = {"streaming": streaming, "pushNotifications": push_notifications}
    skill = {
        "id": "scripted",
        "name": "scripted",
        "description": "Plays a scripted task timeline",
        "tags": ["streamproof"],
    }
    if binding == "rest":
        if wire == "0.3":
            raise ValueError("the REST binding is served on the 1.0 wire only")
        rest = {
            "url": url.removesuffix("/"),
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        }
        return {
            "name": name,
            "description": description,
            "supportedInterfaces": [rest],
            "version": "1.0.0",
            "capabilities": capabilities,
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [skill],
        }
    if wire == "0.3":
        return {
            "protocolVersion": "0.3.0",
            "name": name,
            "description": description,
            "url": url,
            "preferredTransport": "JSONRPC",
            "version": "1.0.0",
            "capabilities": capabilities,
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [skill],
        }
    interfaces = [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "supportedInterfaces": interfaces,
        "version": "1.0.0",
        "capabilities": capabilities,
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [skill],
    }
    if wire == "both":
        interfaces.append({"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"})
        card.update(
            {
                "additionalInterfaces": [{"url": url, "transport": "JSONRPC"}],
                "preferredTransport": "JSONRPC",
                "protocolVersion": "0.3",
                "url": url,
            }
        )
    return card
