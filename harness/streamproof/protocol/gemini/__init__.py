"""The Gemini API wire format, as pure functions from a scripted :class:`ModelTurn` to bytes.

The fake model (``streamproof.fakes.model``) must be indistinguishable from the real Gemini
Developer API to the SDKs that ADK uses, so everything it writes is built here and nothing here
does I/O. What the real SDKs require, measured with google-genai 2.34 / google-adk 2.13 (see
``docs/explanation/wire-facts/adk-gemini.md`` sections 0, 4 and 6):

* A stream is ``data: <json>`` plus a blank line per chunk. The SDKs accept only ``data: `` *with*
  one space (``line.startswith('data: ')``), and the JS SDK's regex needs each JSON object on one
  line, so :func:`dumps_line` never emits a raw line break, not even U+2028/U+2029/U+0085, which
  ``str.splitlines`` based readers (httpx) would split on.
* Every chunk carries ``candidates[0].content`` with ``role: model`` and ``index: 0``, the last
  one included: ADK Java turns a final chunk without ``content`` into an error event.
* ``finishReason`` rides only on the last chunk. Function calls carry no ``id`` (the Developer
  API omits it; ADK mints ``adk-...`` ids itself).
* A mid-stream failure is a ``data: {"error": {...}}`` line after which the body ends; the SDKs
  raise ``APIError`` when a chunk's JSON starts with ``{"error":``.
* There is no ``[DONE]`` sentinel: the body simply ends.

The JSON layout copies recorded Gemini traffic: key order ``candidates, usageMetadata,
modelVersion, responseId``; separators ``","`` between items and ``": "`` after keys (the real
servers' one-line protobuf printer); non-ASCII text written as UTF-8, not ``\\u`` escapes.
Non-streaming answers and HTTP error bodies are pretty-printed with two-space indents, as the
real API does.

A turn can also come from a canned stream (``fixture:``, ``fixtures/gemini/``): then the fake
writes the file's events as they are, and :func:`fixture_replay` checks at load that each one
is what the SDKs above read (one ``data: `` line, one candidate with ``content``, text or
function-call parts, ``finishReason`` only last, an error body only last).

The package's modules: :mod:`~streamproof.protocol.gemini.turn` (the scripted turn),
:mod:`~streamproof.protocol.gemini.wire` (the JSON layout),
:mod:`~streamproof.protocol.gemini.answers` (whole answers to a turn),
:mod:`~streamproof.protocol.gemini.requests` (what a request says) and
:mod:`~streamproof.protocol.gemini.replay` (canned streams).
"""

from streamproof.protocol.gemini.answers import (
    Answer,
    StreamEvent,
    error_answer,
    error_body,
    function_call_dict,
    function_call_part,
    generate_content_answer,
    invalid_argument,
    merged_parts,
    not_found,
    stream_events,
)
from streamproof.protocol.gemini.replay import ReplayEvent, fixture_replay
from streamproof.protocol.gemini.requests import (
    Method,
    Route,
    agent_name,
    parse_route,
    prompt_tokens,
)
from streamproof.protocol.gemini.turn import (
    RUNAWAY_TEXT,
    CallChunk,
    Chunk,
    ErrorChunk,
    FunctionCall,
    GoogleError,
    ModelTurn,
    TextChunk,
    chunk_delay,
    runaway_turn,
    total_delay,
    unscripted_error,
)
from streamproof.protocol.gemini.wire import (
    JSON_CONTENT_TYPE,
    SSE_CONTENT_TYPE,
    FinishReason,
    candidate,
    count_tokens,
    dumps_line,
    dumps_pretty,
    new_response_id,
    response,
    sse_frame,
    text_part,
    usage,
)

__all__ = [
    "JSON_CONTENT_TYPE",
    "RUNAWAY_TEXT",
    "SSE_CONTENT_TYPE",
    "Answer",
    "CallChunk",
    "Chunk",
    "ErrorChunk",
    "FinishReason",
    "FunctionCall",
    "GoogleError",
    "Method",
    "ModelTurn",
    "ReplayEvent",
    "Route",
    "StreamEvent",
    "TextChunk",
    "agent_name",
    "candidate",
    "chunk_delay",
    "count_tokens",
    "dumps_line",
    "dumps_pretty",
    "error_answer",
    "error_body",
    "fixture_replay",
    "function_call_dict",
    "function_call_part",
    "generate_content_answer",
    "invalid_argument",
    "merged_parts",
    "new_response_id",
    "not_found",
    "parse_route",
    "prompt_tokens",
    "response",
    "runaway_turn",
    "sse_frame",
    "stream_events",
    "text_part",
    "total_delay",
    "unscripted_error",
    "usage",
]
