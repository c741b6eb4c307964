"""A2A 0.3 and 1.0 over JSON-RPC, as pure functions: one task model, two wire codecs, no I/O.

The fake A2A server (:mod:`streamproof.fakes.a2a`) must look like a real A2A server to real
clients, and the checks that come later must read what it sent; both go through this package.
Nothing here touches a socket. Every spelling was checked against the wire facts
(``docs/explanation/wire-facts/a2a.md``, cited as §n) and against the installed a2a-sdk 1.3 source
(``a2a/compat/v0_3/types.py`` for 0.3, ``a2a/types/a2a_pb2`` for 1.0); the tests compare the
two byte for byte through the SDK's own models and parsers.

One internal model, two codecs
------------------------------
The internal model (:class:`Task`, :class:`Message`, :class:`StatusUpdate`,
:class:`ArtifactUpdate`, parts) follows 0.3 names and states, because the seed recipe and the
fake's scripts speak 0.3. Each object is written for one :data:`WireVersion`:

* **0.3** (§1.3-§1.4): methods ``message/send``, ``message/stream``, ``tasks/get``,
  ``tasks/cancel``, ``tasks/resubscribe``. Every polymorphic object carries ``kind``
  (``task``, ``message``, ``status-update``, ``artifact-update``; parts ``text``, ``data``,
  ``file``). States are lower-case with hyphens (``input-required``). A status update carries
  ``final``; an artifact update ``append`` and ``lastChunk``, both written out even when false,
  as the a2a-sdk servers do (§1.5 observed stream). Keys come out in alphabetical order, which
  is what the SDK's generated pydantic models dump.
* **1.0** (§2): PascalCase methods (``SendMessage``, ``SendStreamingMessage``, ``GetTask``,
  ``CancelTask``, ``SubscribeToTask``); no ``kind``: the member name is the discriminator
  (``{"task": …}``, ``{"statusUpdate": …}``), for stream results and for the ``SendMessage``
  result alike, while ``GetTask``/``CancelTask`` return a bare Task. Enums are ProtoJSON
  (``TASK_STATE_WORKING``, ``ROLE_USER``; 0.3's ``unknown`` is ``TASK_STATE_UNSPECIFIED``).
  ``final`` is gone; fields equal to their proto default are left out (``append: false``,
  empty lists), exactly as ``MessageToDict`` writes them; keys follow proto field order.
  Errors carry ``data`` as an array holding a ``google.rpc.ErrorInfo`` (§2 table, "errors").

A 1.0 request must say ``A2A-Version: 1.x``; a missing header means 0.3 (§2.1, spec §3.6), so
a 1.0 method without it gets -32009, as a2a-sdk 1.3 answers (:func:`check_version`); a server
checks the header before the params (:func:`decode_served_request`), as a2a-sdk does.

Decoding is strict about what the schema requires (``kind`` on 0.3 parts and messages,
``messageId``, ``role``, one content member per 1.0 part) and ignores members it does not use
(``metadata``, ``extensions``, ``tenant``), as the SDK servers do. ProtoJSON lets a 1.0 peer
spell a field in snake_case and an enum as its number, so the 1.0 decoder accepts both.


What lives where
----------------
Every name below is importable from ``streamproof.protocol.a2a`` itself; the modules say what
the code is about.

* :mod:`~streamproof.protocol.a2a.vocabulary`: wire versions, header and content types, task
  states and roles with their 1.0 spellings, the operations and their method names, error
  codes; :func:`version_of`, :func:`op_of`, :func:`method_name`, :func:`state_name`.
* :mod:`~streamproof.protocol.a2a.model`: the internal pydantic model (parts, messages, tasks,
  updates, request params, :class:`RpcRequest`, :class:`RpcError` and :func:`rpc_error`) and
  the helpers over it (:func:`new_id`, :func:`timestamp`, :func:`text_of`, :func:`ends_turn`,
  :func:`apply_event`, :func:`limit_history`).
* :mod:`~streamproof.protocol.a2a.jsontext`: :func:`dumps` (one-line JSON) and :func:`loads`
  (strict JSON).
* :mod:`~streamproof.protocol.a2a.encode`: the model written for one wire version: objects, stream
  and send results, success and error envelopes, client requests.
* :mod:`~streamproof.protocol.a2a.card`: :data:`AGENT_CARD_PATH` and :func:`agent_card`.
* :mod:`~streamproof.protocol.a2a.reader`: :class:`WireFormatError` and the typed JSON reader the
  decoders share.
* :mod:`~streamproof.protocol.a2a.decode`: wire objects, results and response envelopes read back
  into the model.
* :mod:`~streamproof.protocol.a2a.requests`: requests as a server takes them
  (:func:`decode_request`, :func:`decode_request_object`, :func:`decode_served_request`) and
  the ``A2A-Version`` check (:func:`check_version`).
* :mod:`~streamproof.protocol.a2a.rest`: the 1.0 HTTP+JSON (REST) binding: its routes
  (:func:`match_route`, :func:`rest_method`), its requests decoded into the same
  :class:`RpcRequest` (:func:`decode_rest_request`), its errors as HTTP statuses
  (:func:`encode_rest_error`).
"""

from __future__ import annotations

from streamproof.protocol.a2a.card import (
    AGENT_CARD_PATH,
    agent_card,
)
from streamproof.protocol.a2a.decode import (
    decode_message,
    decode_response,
    decode_send_result,
    decode_stream_event,
    decode_task,
)
from streamproof.protocol.a2a.encode import (
    encode_error,
    encode_message,
    encode_request,
    encode_result,
    encode_send_result,
    encode_stream_event,
    encode_task,
)
from streamproof.protocol.a2a.jsontext import (
    dumps,
    loads,
)
from streamproof.protocol.a2a.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    ListTasksParams,
    Message,
    Params,
    Part,
    PushConfig,
    RpcError,
    RpcRequest,
    SendParams,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TaskStatus,
    TextPart,
    apply_event,
    ends_turn,
    limit_history,
    new_id,
    rpc_error,
    text_of,
    timestamp,
)
from streamproof.protocol.a2a.reader import (
    WireFormatError,
)
from streamproof.protocol.a2a.requests import (
    check_version,
    decode_request,
    decode_request_object,
    decode_served_request,
)
from streamproof.protocol.a2a.rest import (
    REST_CONTENT_TYPE,
    REST_ERROR_CONTENT_TYPE,
    REST_STATUS,
    RestMiss,
    RestRoute,
    decode_rest_request,
    encode_rest_error,
    match_route,
    rest_method,
)
from streamproof.protocol.a2a.vocabulary import (
    CONTENT_TYPE_NOT_SUPPORTED,
    EXTENDED_CARD_NOT_CONFIGURED,
    EXTENSION_SUPPORT_REQUIRED,
    INTERNAL_ERROR,
    INTERRUPTED_STATES,
    INVALID_AGENT_RESPONSE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSON_CONTENT_TYPE,
    KNOWN_METHODS,
    METHOD_NOT_FOUND,
    METHODS,
    PARSE_ERROR,
    PUSH_NOTIFICATION_NOT_SUPPORTED,
    SSE_CONTENT_TYPE,
    STREAMING_OPS,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    TERMINAL_STATES,
    UNSUPPORTED_OPERATION,
    VERSION_HEADER,
    VERSION_NOT_SUPPORTED,
    Op,
    Role,
    ServedWire,
    TaskState,
    WireVersion,
    method_name,
    op_of,
    state_name,
    version_of,
)

__all__ = [
    "AGENT_CARD_PATH",
    "CONTENT_TYPE_NOT_SUPPORTED",
    "EXTENDED_CARD_NOT_CONFIGURED",
    "EXTENSION_SUPPORT_REQUIRED",
    "INTERNAL_ERROR",
    "INTERRUPTED_STATES",
    "INVALID_AGENT_RESPONSE",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSON_CONTENT_TYPE",
    "KNOWN_METHODS",
    "METHODS",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "REST_CONTENT_TYPE",
    "REST_ERROR_CONTENT_TYPE",
    "REST_STATUS",
    "SSE_CONTENT_TYPE",
    "STREAMING_OPS",
    "TASK_NOT_CANCELABLE",
    "TASK_NOT_FOUND",
    "TERMINAL_STATES",
    "UNSUPPORTED_OPERATION",
    "VERSION_HEADER",
    "VERSION_NOT_SUPPORTED",
    "Artifact",
    "ArtifactUpdate",
    "DataPart",
    "FilePart",
    "ListTasksParams",
    "Message",
    "Op",
    "Params",
    "Part",
    "PushConfig",
    "RestMiss",
    "RestRoute",
    "Role",
    "RpcError",
    "RpcRequest",
    "SendParams",
    "ServedWire",
    "StatusUpdate",
    "StreamEvent",
    "Task",
    "TaskIdParams",
    "TaskQueryParams",
    "TaskState",
    "TaskStatus",
    "TextPart",
    "WireFormatError",
    "WireVersion",
    "agent_card",
    "apply_event",
    "check_version",
    "decode_message",
    "decode_request",
    "decode_request_object",
    "decode_response",
    "decode_rest_request",
    "decode_send_result",
    "decode_served_request",
    "decode_stream_event",
    "decode_task",
    "dumps",
    "encode_error",
    "encode_message",
    "encode_request",
    "encode_rest_error",
    "encode_result",
    "encode_send_result",
    "encode_stream_event",
    "encode_task",
    "ends_turn",
    "limit_history",
    "loads",
    "match_route",
    "method_name",
    "new_id",
    "op_of",
    "rest_method",
    "rpc_error",
    "state_name",
    "text_of",
    "timestamp",
    "version_of",
]
