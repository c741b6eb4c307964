"""streamproof's fakes and fault proxy for a team's own Python tests, without YAML.

The pytest plugin ships these as fixtures (:mod:`streamproof.plugin.fixtures`, the way
pytest-httpserver ships its server): ``fake_model``, ``fake_a2a``, ``fault_link``,
``gateway_env`` and ``a2a_env``. This package holds what those fixtures hand out; it can also be
used without pytest (``with Fakes() as fakes: ...``).

Everything runs on one :class:`~streamproof.runtime.loop.BackgroundLoop`, an asyncio loop on a
daemon thread, so a test may be a plain function or a coroutine run by any async plugin: the methods
here are synchronous and return in bounded time (:data:`OP_S`), and each wait has an ``_async``
twin for a test whose own client runs on the test's event loop (a blocking wait there would
stop that client too). Servers bind 127.0.0.1 only, start once per :class:`Fakes` (per pytest
session) on first use, within :data:`START_S`, and are closed by :meth:`Fakes.close`.

Reset (what each fixture does before every test): the fake model forgets its script and calls
(an unscripted call answers HTTP 500), the fake A2A server unloads its script (the card answers
503, calls -32603) and forgets its ledger, every fault link drops its plan and records.
"""

from __future__ import annotations

from streamproof.fakes.a2a import A2ALedger, A2AScript
from streamproof.fakes.records import ModelCall
from streamproof.faults.records import LinkEvent
from streamproof.protocol.gemini import (
    CallChunk,
    ErrorChunk,
    FunctionCall,
    GoogleError,
    ModelTurn,
    TextChunk,
)
from streamproof.testing.a2a import FakeA2A
from streamproof.testing.envs import A2AEnv, GatewayEnv
from streamproof.testing.hub import OP_S, START_S, TOOL_MARKER, Fakes, ScriptError
from streamproof.testing.links import FaultLink, FaultLinks
from streamproof.testing.model import FakeModelServer, function_call, stream_error, text

__all__ = [
    "OP_S",
    "START_S",
    "TOOL_MARKER",
    "A2AEnv",
    "A2ALedger",
    "A2AScript",
    "CallChunk",
    "ErrorChunk",
    "FakeA2A",
    "FakeModelServer",
    "Fakes",
    "FaultLink",
    "FaultLinks",
    "FunctionCall",
    "GatewayEnv",
    "GoogleError",
    "LinkEvent",
    "ModelCall",
    "ModelTurn",
    "ScriptError",
    "TextChunk",
    "function_call",
    "stream_error",
    "text",
]
