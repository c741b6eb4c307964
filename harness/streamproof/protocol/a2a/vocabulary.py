"""The words of A2A and how each wire version spells them: versions, states, roles, methods,
error codes.

Everything here is a constant or a lookup over constants: :data:`WireVersion` and
:data:`ServedWire`, the HTTP header and content types, :class:`TaskState` with its terminal and
interrupted sets and its 1.0 ProtoJSON names (strings and enum numbers), the two roles, the six
operations the fake implements (:data:`Op`) and their method names in each grammar
(:data:`METHODS`), the JSON-RPC and A2A error codes with the SDK servers' default messages and
1.0 ``ErrorInfo`` reasons, and the real A2A methods the fake answers with an error.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal

WireVersion = Literal["0.3", "1.0"]
"""The two JSON-RPC wire grammars."""
ServedWire = Literal["0.3", "1.0", "both"]
"""What a server speaks: one grammar, or both on one endpoint as a2a-sdk 1.3 with
``enable_v0_3_compat`` does (§2.1)."""

VERSION_HEADER: Final = "A2A-Version"
SSE_CONTENT_TYPE: Final = "text/event-stream; charset=utf-8"
"""What a2a-sdk servers (sse-starlette) send (§1.5)."""
JSON_CONTENT_TYPE: Final = "application/json"


# --- states, methods, errors -------------------------------------------------------------------


class TaskState(StrEnum):
    """0.3 spellings (§1.4). 1.0 spellings come from :data:`_STATE_1_0`."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    AUTH_REQUIRED = "auth-required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    REJECTED = "rejected"
    UNKNOWN = "unknown"


TERMINAL_STATES: Final = frozenset(
    {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
        TaskState.UNKNOWN,
    }
)
"""States a task never leaves. The 0.3 spec lists four; ``unknown`` is added because the seed
(and Java's ``TaskState.isFinal()``) treats it as terminal."""
INTERRUPTED_STATES: Final = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
"""States that end a turn without ending the task: the agent waits for the client."""

_STATE_1_0: Final[dict[TaskState, str]] = {
    TaskState.SUBMITTED: "TASK_STATE_SUBMITTED",
    TaskState.WORKING: "TASK_STATE_WORKING",
    TaskState.INPUT_REQUIRED: "TASK_STATE_INPUT_REQUIRED",
    TaskState.AUTH_REQUIRED: "TASK_STATE_AUTH_REQUIRED",
    TaskState.COMPLETED: "TASK_STATE_COMPLETED",
    TaskState.FAILED: "TASK_STATE_FAILED",
    TaskState.CANCELED: "TASK_STATE_CANCELED",
    TaskState.REJECTED: "TASK_STATE_REJECTED",
    TaskState.UNKNOWN: "TASK_STATE_UNSPECIFIED",
}
_STATE_FROM_1_0: Final = {v: k for k, v in _STATE_1_0.items()}
_STATE_NUMBERS_1_0: Final = {  # a2a.proto enum numbers (ProtoJSON accepts them)
    0: TaskState.UNKNOWN,
    1: TaskState.SUBMITTED,
    2: TaskState.WORKING,
    3: TaskState.COMPLETED,
    4: TaskState.FAILED,
    5: TaskState.CANCELED,
    6: TaskState.INPUT_REQUIRED,
    7: TaskState.REJECTED,
    8: TaskState.AUTH_REQUIRED,
}

Role = Literal["user", "agent"]
_ROLE_1_0: Final[dict[str, str]] = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_ROLE_FROM_1_0: Final[dict[Any, Role]] = {
    "ROLE_USER": "user",
    "ROLE_AGENT": "agent",
    1: "user",
    2: "agent",
}

Op = Literal["send", "stream", "get", "cancel", "subscribe", "list"]
"""What a request asks for, whatever its wire spelling. ``list`` is 1.0 only: 0.3 has no
``tasks/list`` on JSON-RPC (§1.3), and a2a-sdk 1.3's compatibility layer answers it -32601."""

METHODS: Final[dict[WireVersion, dict[Op, str]]] = {
    "0.3": {
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
    },
    "1.0": {
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "get": "GetTask",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
        "list": "ListTasks",
    },
}
_OPS: Final[dict[str, tuple[WireVersion, Op]]] = {
    method: (version, op) for version, table in METHODS.items() for op, method in table.items()
}
STREAMING_OPS: Final[frozenset[Op]] = frozenset({"stream", "subscribe"})

# error codes (§1.7; 1.0 adds -32008 and -32009, §2 table)
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
TASK_NOT_FOUND: Final = -32001
TASK_NOT_CANCELABLE: Final = -32002
PUSH_NOTIFICATION_NOT_SUPPORTED: Final = -32003
UNSUPPORTED_OPERATION: Final = -32004
CONTENT_TYPE_NOT_SUPPORTED: Final = -32005
INVALID_AGENT_RESPONSE: Final = -32006
EXTENDED_CARD_NOT_CONFIGURED: Final = -32007
EXTENSION_SUPPORT_REQUIRED: Final = -32008
VERSION_NOT_SUPPORTED: Final = -32009

_ERRORS: Final[dict[int, tuple[str, str]]] = {
    # code: (default message as the a2a-sdk servers write it, 1.0 ErrorInfo reason)
    PARSE_ERROR: ("Invalid JSON payload", "UNKNOWN_ERROR"),  # the SDK has no reason for it
    INVALID_REQUEST: ("Invalid Request", "INVALID_REQUEST"),
    METHOD_NOT_FOUND: ("Method not found", "METHOD_NOT_FOUND"),
    INVALID_PARAMS: ("Invalid params", "INVALID_PARAMS"),
    INTERNAL_ERROR: ("Internal error", "INTERNAL_ERROR"),
    TASK_NOT_FOUND: ("Task not found", "TASK_NOT_FOUND"),
    TASK_NOT_CANCELABLE: ("Task cannot be canceled", "TASK_NOT_CANCELABLE"),
    PUSH_NOTIFICATION_NOT_SUPPORTED: (
        "Push Notification is not supported",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    UNSUPPORTED_OPERATION: ("This operation is not supported", "UNSUPPORTED_OPERATION"),
    CONTENT_TYPE_NOT_SUPPORTED: ("Incompatible content types", "CONTENT_TYPE_NOT_SUPPORTED"),
    INVALID_AGENT_RESPONSE: ("Invalid agent response", "INVALID_AGENT_RESPONSE"),
    EXTENDED_CARD_NOT_CONFIGURED: (
        "Authenticated Extended Card is not configured",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    EXTENSION_SUPPORT_REQUIRED: ("Extension support required", "EXTENSION_SUPPORT_REQUIRED"),
    VERSION_NOT_SUPPORTED: ("Version not supported", "VERSION_NOT_SUPPORTED"),
}
_ERROR_INFO_TYPE: Final = "type.googleapis.com/google.rpc.ErrorInfo"
_ERROR_DOMAIN: Final = "a2a-protocol.org"

# Real A2A methods the fake does not implement, and the error a server without the feature
# gives: push notifications -32003 (PushNotificationNotSupported); the extended card -32004,
# because the fake's card never declares ``capabilities.extendedAgentCard`` and the spec
# (1.0 §3.3.4) answers that case with UnsupportedOperationError, as a2a-sdk 1.3 does on both
# wires (-32007 is for a card that declares it but has none configured).
_UNIMPLEMENTED: Final[dict[str, tuple[WireVersion, int]]] = {
    "tasks/pushNotificationConfig/set": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "tasks/pushNotificationConfig/get": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "tasks/pushNotificationConfig/list": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "tasks/pushNotificationConfig/delete": ("0.3", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "agent/getAuthenticatedExtendedCard": ("0.3", UNSUPPORTED_OPERATION),
    "CreateTaskPushNotificationConfig": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "GetTaskPushNotificationConfig": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "ListTaskPushNotificationConfigs": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "DeleteTaskPushNotificationConfig": ("1.0", PUSH_NOTIFICATION_NOT_SUPPORTED),
    "GetExtendedAgentCard": ("1.0", UNSUPPORTED_OPERATION),
}
KNOWN_METHODS: Final[tuple[str, ...]] = (*_OPS, *_UNIMPLEMENTED)
"""Every method name :func:`version_of` knows, both wires, implemented by the fake or not."""


def version_of(method: str) -> WireVersion | None:
    """The wire grammar a method name belongs to (``None``: not an A2A method). The two
    grammars are disjoint, so one endpoint can tell them apart (§2.1)."""
    known = _OPS.get(method)
    if known is not None:
        return known[0]
    unimplemented = _UNIMPLEMENTED.get(method)
    return unimplemented[0] if unimplemented is not None else None


def op_of(method: str) -> Op | None:
    """What a method asks for, if it is one of those the fake implements."""
    known = _OPS.get(method)
    return known[1] if known is not None else None


def method_name(op: Op, version: WireVersion) -> str:
    return METHODS[version][op]


def state_name(state: TaskState, version: WireVersion) -> str:
    """A state as a version spells it (``input-required`` / ``TASK_STATE_INPUT_REQUIRED``)."""
    return state.value if version == "0.3" else _STATE_1_0[state]
