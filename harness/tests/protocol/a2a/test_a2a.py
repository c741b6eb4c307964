"""A2A codecs: spellings proven against the real a2a-sdk 1.3, round trips, requests, errors.

Wire compatibility is proven with the SDK's own code, never with our memory of it: 0.3 objects
must be exactly what the SDK's generated pydantic models (``a2a.compat.v0_3.types``) dump,
key order included; 1.0 objects exactly what protobuf's ``MessageToDict`` prints for the
parsed ``a2a_pb2`` message; and the SDK's 0.3 -> 1.0 converter must turn our 0.3 encoding into
the very message our 1.0 encoding parses to.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03
from a2a.helpers import new_text_message
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors
from google.protobuf.json_format import MessageToDict, ParseDict
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonrpc.jsonrpc2 import JSONRPC20Request

from streamproof.protocol import a2a
from streamproof.protocol.a2a import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    RpcError,
    RpcRequest,
    SendParams,
    StatusUpdate,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TextPart,
)

VERSIONS = ("0.3", "1.0")

# --- samples -----------------------------------------------------------------------------------

AGENT_MSG = Message(
    message_id="m2",
    role="agent",
    parts=(TextPart(text="gathering sources"),),
    task_id="t1",
    context_id="c1",
)
USER_MSG = Message(
    message_id="m1",
    role="user",
    parts=(
        TextPart(text="hi"),
        DataPart(data={"k": [1, "two", None, True]}),
        FilePart(uri="https://example.com/a.pdf", name="a.pdf", media_type="application/pdf"),
        FilePart(bytes=base64.b64encode(b"\x00\x01raw").decode(), name="b.bin"),
    ),
    task_id="t1",
    context_id="c1",
)
ARTIFACT = Artifact(
    artifact_id="summary",
    name="Summary",
    description="the report",
    parts=(TextPart(text="Section 1 ..."), TextPart(text="Section 2 ...")),
)
TASK = Task(
    id="t1",
    context_id="c1",
    status=TaskStatus(
        state=TaskState.WORKING, message=AGENT_MSG, timestamp="2026-11-29T19:39:03.359482Z"
    ),
    artifacts=(ARTIFACT,),
    history=(USER_MSG,),
)
STATUS = StatusUpdate(
    task_id="t1",
    context_id="c1",
    status=TaskStatus(state=TaskState.COMPLETED, timestamp="2026-11-29T19:39:05.364Z"),
    final=True,
)
CHUNK = ArtifactUpdate(
    task_id="t1", context_id="c1", artifact=ARTIFACT, append=True, last_chunk=False
)
LAST = ArtifactUpdate(
    task_id="t1", context_id="c1", artifact=ARTIFACT, append=False, last_chunk=True
)

SAMPLES: list[Any] = [TASK, AGENT_MSG, USER_MSG, STATUS, CHUNK, LAST]
V03_CLASS = {
    "task": v03.Task,
    "message": v03.Message,
    "status-update": v03.TaskStatusUpdateEvent,
    "artifact-update": v03.TaskArtifactUpdateEvent,
}


def key_order(value: Any) -> Any:
    """The keys of every object, in order, at every depth."""
    if isinstance(value, dict):
        return [(k, key_order(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [key_order(v) for v in value]
    return None


# By position, not id(): pytest-xdist requires every worker to collect the same test ids.
SAMPLE_IDS = [f"{event.kind}-{i}" for i, event in enumerate(SAMPLES)]


# --- spellings against the SDK -----------------------------------------------------------------


def test_0_3_method_names_are_the_sdk_request_models() -> None:
    sdk = {
        "send": v03.SendMessageRequest,
        "stream": v03.SendStreamingMessageRequest,
        "get": v03.GetTaskRequest,
        "cancel": v03.CancelTaskRequest,
        "subscribe": v03.TaskResubscriptionRequest,
    }
    for op, model in sdk.items():
        assert a2a.METHODS["0.3"][op] == model.model_fields["method"].default  # type: ignore[index]


def test_1_0_method_names_are_the_proto_service_methods() -> None:
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    names = {m.name for m in service.methods}
    assert set(a2a.METHODS["1.0"].values()) <= names
    # every other service method is known (answered with its feature's error, not -32601)
    for name in names - set(a2a.METHODS["1.0"].values()):
        assert a2a.version_of(name) == "1.0"
        assert a2a.op_of(name) is None


def test_states_are_spelled_as_the_sdk_spells_them() -> None:
    assert {s.value for s in TaskState} == {s.value for s in v03.TaskState}
    names_1_0 = {a2a.state_name(s, "1.0") for s in TaskState}
    assert names_1_0 == set(pb.TaskState.keys())
    assert a2a.state_name(TaskState.UNKNOWN, "1.0") == "TASK_STATE_UNSPECIFIED"
    assert a2a.state_name(TaskState.INPUT_REQUIRED, "0.3") == "input-required"


def test_error_codes_and_messages_match_the_sdk() -> None:
    v03_codes = {
        v03.JSONParseError: a2a.PARSE_ERROR,
        v03.InvalidRequestError: a2a.INVALID_REQUEST,
        v03.MethodNotFoundError: a2a.METHOD_NOT_FOUND,
        v03.InvalidParamsError: a2a.INVALID_PARAMS,
        v03.InternalError: a2a.INTERNAL_ERROR,
        v03.TaskNotFoundError: a2a.TASK_NOT_FOUND,
        v03.TaskNotCancelableError: a2a.TASK_NOT_CANCELABLE,
        v03.PushNotificationNotSupportedError: a2a.PUSH_NOTIFICATION_NOT_SUPPORTED,
        v03.UnsupportedOperationError: a2a.UNSUPPORTED_OPERATION,
        v03.ContentTypeNotSupportedError: a2a.CONTENT_TYPE_NOT_SUPPORTED,
        v03.InvalidAgentResponseError: a2a.INVALID_AGENT_RESPONSE,
        v03.AuthenticatedExtendedCardNotConfiguredError: a2a.EXTENDED_CARD_NOT_CONFIGURED,
    }
    for model, code in v03_codes.items():
        assert model.model_fields["code"].default == code
    for error_type, code in sdk_errors.JSON_RPC_ERROR_CODE_MAP.items():
        ours = a2a.rpc_error(code)
        assert ours.message == error_type.message, error_type
        detail = a2a.encode_error(ours, "1.0")["error"]["data"][0]
        assert detail["reason"] == sdk_errors.A2A_ERROR_REASONS.get(error_type, "UNKNOWN_ERROR")


@pytest.mark.parametrize("event", SAMPLES, ids=SAMPLE_IDS)
def test_0_3_encoding_is_exactly_what_the_sdk_models_dump(event: Any) -> None:
    ours = a2a.encode_stream_event(event, "0.3")
    sdk = V03_CLASS[event.kind].model_validate(ours)
    dumped = sdk.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert dumped == ours
    assert list(dumped) == list(ours)  # the same key order, so the same bytes
    assert json.dumps(dumped) == json.dumps(ours)


@pytest.mark.parametrize("event", SAMPLES, ids=SAMPLE_IDS)
def test_1_0_encoding_is_exactly_what_protobuf_prints(event: Any) -> None:
    ours = a2a.encode_stream_event(event, "1.0")
    printed = MessageToDict(ParseDict(ours, pb.StreamResponse()))
    assert printed == ours
    assert key_order(printed) == key_order(ours)  # the same layout, up to how numbers print


@pytest.mark.parametrize("event", SAMPLES, ids=SAMPLE_IDS)
def test_the_sdk_converts_our_0_3_into_our_1_0(event: Any) -> None:
    """a2a-sdk's own 0.3 -> 1.0 conversion of our 0.3 object is our 1.0 object."""
    compat = V03_CLASS[event.kind].model_validate(a2a.encode_stream_event(event, "0.3"))
    converted = conversions.to_core_stream_response(
        v03.SendStreamingMessageSuccessResponse(id="r", result=compat)
    )
    assert converted == ParseDict(a2a.encode_stream_event(event, "1.0"), pb.StreamResponse())


def test_send_results_and_envelopes() -> None:
    assert a2a.encode_send_result(TASK, "1.0") == {"task": a2a.encode_task(TASK, "1.0")}
    assert a2a.encode_send_result(AGENT_MSG, "0.3")["kind"] == "message"
    ok = a2a.encode_result("r1", a2a.encode_send_result(TASK, "0.3"), "0.3")
    assert list(ok) == ["id", "jsonrpc", "result"]
    assert v03.SendMessageSuccessResponse.model_validate(ok).result.id == "t1"  # type: ignore[union-attr]
    ok10 = a2a.encode_result(7, a2a.encode_send_result(TASK, "1.0"), "1.0")
    assert list(ok10) == ["result", "id", "jsonrpc"]
    assert ParseDict(ok10["result"], pb.SendMessageResponse()).task.id == "t1"


def test_error_envelopes() -> None:
    err = a2a.rpc_error(a2a.TASK_NOT_FOUND, id="r1", method="tasks/get")
    body = a2a.encode_error(err)  # version from the method: 0.3
    assert body == {
        "error": {"code": -32001, "message": "Task not found"},
        "id": "r1",
        "jsonrpc": "2.0",
    }
    assert v03.JSONRPCErrorResponse.model_validate(body).error.code == -32001  # type: ignore[union-attr]
    body10 = a2a.encode_error(a2a.rpc_error(a2a.UNSUPPORTED_OPERATION, id=1, method="GetTask"))
    assert body10["error"]["data"] == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "UNSUPPORTED_OPERATION",
            "domain": "a2a-protocol.org",
            "metadata": {},
        }
    ]
    decoded = a2a.decode_response(body10)
    assert isinstance(decoded, RpcError) and decoded.code == -32004 and decoded.id == 1


# --- decoding what the SDK writes --------------------------------------------------------------


def test_decode_what_the_sdk_writes_in_0_3() -> None:
    sdk_task = v03.Task(
        id="t1",
        context_id="c1",
        status=v03.TaskStatus(state=v03.TaskState.input_required),
        history=[
            v03.Message(
                message_id="m1",
                role=v03.Role.user,
                parts=[v03.Part(root=v03.TextPart(text="hi"))],
            )
        ],
    )
    task = a2a.decode_task(
        sdk_task.model_dump(by_alias=True, exclude_none=True, mode="json"), "0.3"
    )
    assert task.status.state is TaskState.INPUT_REQUIRED
    assert a2a.text_of(task.history[0].parts) == "hi"
    update = v03.TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=v03.Artifact(artifact_id="a1", parts=[v03.Part(root=v03.TextPart(text="x"))]),
    )
    event = a2a.decode_stream_event(update.model_dump(by_alias=True, exclude_none=True), "0.3")
    assert isinstance(event, ArtifactUpdate)
    assert (event.append, event.last_chunk) == (False, False)  # absent (null in 0.3) is false


def test_decode_what_the_sdk_writes_in_1_0() -> None:
    response = pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(
            task_id="t1",
            context_id="c1",
            status=pb.TaskStatus(
                state=pb.TaskState.TASK_STATE_AUTH_REQUIRED,
                message=new_text_message("log in", task_id="t1", context_id="c1"),
            ),
        )
    )
    event = a2a.decode_stream_event(MessageToDict(response), "1.0")
    assert isinstance(event, StatusUpdate)
    assert event.status.state is TaskState.AUTH_REQUIRED
    assert event.final  # 1.0 has no "final": derived from the state
    assert event.status.message is not None and event.status.message.role == "agent"
    # ProtoJSON also allows proto field names and enum numbers
    snake = MessageToDict(response, preserving_proto_field_name=True, use_integers_for_enums=True)
    assert a2a.decode_stream_event(snake, "1.0") == event


@pytest.mark.parametrize(
    ("value", "version", "fragment"),
    [
        ({"id": "t", "contextId": "c", "status": {"state": "working"}}, "0.3", "result.kind"),
        (
            {
                "kind": "status-update",
                "taskId": "t",
                "contextId": "c",
                "status": {"state": "working"},
            },
            "0.3",
            "final",
        ),
        (
            {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "busy"}},
            "0.3",
            "0.3 task state",
        ),
        ({"statusUpdate": {}, "task": {}}, "1.0", "exactly one"),
        ({"task": {"id": "t", "status": {"state": "working"}}}, "1.0", "1.0 task state"),
        ({"message": {"messageId": "m", "role": "user", "parts": []}}, "1.0", "ROLE_USER"),
        (
            {
                "message": {
                    "messageId": "m",
                    "role": "ROLE_USER",
                    "parts": [{"text": "a", "data": {}}],
                }
            },
            "1.0",
            "exactly one",
        ),
        (
            {"kind": "message", "messageId": "m", "role": "user", "parts": [{"text": "no kind"}]},
            "0.3",
            "parts[0].kind",
        ),
    ],
)
def test_decoders_reject_malformed_objects(value: Any, version: str, fragment: str) -> None:
    with pytest.raises(a2a.WireFormatError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        a2a.decode_stream_event(value, version)  # type: ignore[arg-type]


# --- round trips -------------------------------------------------------------------------------

_ids = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
_opt = st.none() | _ids
_text = st.text(max_size=30)
_json_leaf = st.none() | st.booleans() | st.integers(-(2**31), 2**31) | _text
_parts = st.lists(
    st.one_of(
        st.builds(TextPart, text=_text),
        st.builds(DataPart, data=st.dictionaries(_ids, _json_leaf, max_size=3)),
        st.builds(FilePart, uri=_ids, name=_opt, media_type=_opt),
        st.builds(
            FilePart,
            bytes=st.binary(max_size=8).map(lambda b: base64.b64encode(b).decode()),
            name=_opt,
            media_type=_opt,
        ),
    ),
    max_size=3,
).map(tuple)
_messages = st.builds(
    Message,
    message_id=_ids,
    role=st.sampled_from(["user", "agent"]),
    parts=_parts,
    task_id=_opt,
    context_id=_opt,
)
_stamps = st.none() | st.datetimes(timezones=st.just(UTC)).map(a2a.timestamp)
_status = st.builds(
    TaskStatus,
    state=st.sampled_from(list(TaskState)),
    message=st.none() | _messages,
    timestamp=_stamps,
)
_artifacts = st.builds(Artifact, artifact_id=_ids, parts=_parts, name=_opt, description=_opt)
_events = st.one_of(
    st.builds(
        Task,
        id=_ids,
        context_id=_ids,
        status=_status,
        artifacts=st.lists(_artifacts, max_size=2).map(tuple),
        history=st.lists(_messages, max_size=2).map(tuple),
    ),
    _messages,
    st.builds(StatusUpdate, task_id=_ids, context_id=_ids, status=_status, final=st.booleans()),
    st.builds(
        ArtifactUpdate,
        task_id=_ids,
        context_id=_ids,
        artifact=_artifacts,
        append=st.booleans(),
        last_chunk=st.booleans(),
    ),
)


@settings(max_examples=150, deadline=None)
@given(event=_events, version=st.sampled_from(VERSIONS))
def test_encode_decode_round_trip(event: Any, version: str) -> None:
    wire = json.loads(a2a.dumps(a2a.encode_stream_event(event, version)))  # type: ignore[arg-type]
    back = a2a.decode_stream_event(wire, version)  # type: ignore[arg-type]
    if version == "1.0" and isinstance(event, StatusUpdate):
        # 1.0 has no "final"; a decoder derives it from the state
        event = event.model_copy(
            update={"final": a2a.ends_turn(event.model_copy(update={"final": False}))}
        )
    assert back == event


@settings(max_examples=100, deadline=None)
@given(
    message=_messages,
    version=st.sampled_from(VERSIONS),
    blocking=st.none() | st.booleans(),
    history=st.none() | st.integers(0, 50),
    request_id=st.none() | st.integers(-5, 10**6) | _ids,
)
def test_request_round_trip(
    message: Message, version: str, blocking: bool | None, history: int | None, request_id: Any
) -> None:
    for op, params in (
        ("stream", SendParams(message=message, blocking=blocking, history_length=history)),
        ("get", TaskQueryParams(id=message.message_id, history_length=history)),
        ("subscribe", TaskIdParams(id=message.message_id)),
    ):
        request = RpcRequest(id=request_id, version=version, op=op, params=params)  # type: ignore[arg-type]
        assert a2a.decode_request(a2a.dumps(a2a.encode_request(request))) == request


def test_timestamps_are_spelled_as_protobuf_prints_them() -> None:
    for micro in (0, 574000, 574650):
        text = a2a.timestamp(datetime(2026, 11, 29, 19, 40, 21, micro, tzinfo=UTC))
        status = ParseDict({"state": "TASK_STATE_WORKING", "timestamp": text}, pb.TaskStatus())
        assert MessageToDict(status)["timestamp"] == text
    assert a2a.timestamp(datetime(2026, 1, 2, 3, 4, 5, 0, tzinfo=UTC)) == "2026-01-02T03:04:05Z"


def test_dumps_keeps_one_line() -> None:
    line = a2a.dumps({"text": "a\nb\u2028c\u2029d\x85é"})
    assert "\n" not in line and "\u2028" not in line and "\x85" not in line
    assert json.loads(line)["text"] == "a\nb\u2028c\u2029d\x85é"


# --- requests ----------------------------------------------------------------------------------


def test_decode_the_requests_the_sdk_client_sends_in_0_3() -> None:
    """The 1.3 client's 0.3 transport builds its params with this conversion (§1.3)."""
    request = pb.SendMessageRequest(message=new_text_message("hi there", role=pb.Role.ROLE_USER))
    request.configuration.return_immediately = False  # BaseClient always sets configuration
    params = conversions.to_compat_send_message_request(request, request_id=0).params
    body = JSONRPC20Request(
        method="message/stream",
        params=params.model_dump(by_alias=True, exclude_none=True, mode="json"),
        _id="abc",
    ).data
    decoded = a2a.decode_request(json.dumps(body))
    assert isinstance(decoded, RpcRequest)
    assert (decoded.version, decoded.op, decoded.id, decoded.method) == (
        "0.3",
        "stream",
        "abc",
        "message/stream",
    )
    assert isinstance(decoded.params, SendParams)
    assert a2a.text_of(decoded.params.message.parts) == "hi there"
    assert decoded.params.blocking is True  # the SDK always sends blocking: true (§1.3)
    get = conversions.to_compat_get_task_request(
        pb.GetTaskRequest(id="t1", history_length=0), request_id=0
    )
    body = JSONRPC20Request(
        method="tasks/get", params=get.params.model_dump(by_alias=True, exclude_none=True), _id="x"
    ).data
    decoded = a2a.decode_request(json.dumps(body))
    # the SDK sends historyLength 0 as 0 (§1.9), which a 0.3 server reads as "all"
    assert isinstance(decoded, RpcRequest)
    assert decoded.params == TaskQueryParams(id="t1", history_length=0)


def test_decode_the_requests_the_sdk_client_sends_in_1_0() -> None:
    request = pb.SendMessageRequest(
        message=new_text_message("hi", role=pb.Role.ROLE_USER, task_id="t1", context_id="c1")
    )
    request.configuration.return_immediately = True
    request.configuration.history_length = 0
    body = JSONRPC20Request(method="SendMessage", params=MessageToDict(request), _id="q").data
    decoded = a2a.decode_request(json.dumps(body))
    assert isinstance(decoded, RpcRequest) and isinstance(decoded.params, SendParams)
    assert decoded.params.blocking is False
    assert decoded.params.history_length == 0
    assert (decoded.params.message.task_id, decoded.params.message.context_id) == ("t1", "c1")


MSG_03 = {
    "kind": "message",
    "messageId": "m1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}


def _rpc(method: str, params: Any = ..., *, request_id: Any = 1) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not ...:
        body["params"] = params
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("body", "code", "request_id"),
    [
        (b"{not json", -32700, None),
        (b"", -32700, None),
        (b"\xff\xfe", -32700, None),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": NaN}}',
            -32700,
            None,
        ),
        (b"[]", -32600, None),
        (b"[" + _rpc("tasks/get", {"id": "t"}) + b"]", -32600, None),
        (b'"hello"', -32600, None),
        (b"42", -32600, None),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600, 1),
        (b'{"jsonrpc": "2.0", "id": "a", "method": 5}', -32600, "a"),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}', -32600, 1),
        (b'{"id": 1, "method": "tasks/get", "params": {"id": "t"}}', -32600, 1),
        (_rpc("tasks/get", {"id": "t"}, request_id=True), -32600, None),
        (_rpc("tasks/get", {"id": "t"}, request_id={}), -32600, None),
        (_rpc("tasks/list", {}), -32601, 1),
        (_rpc("message/sned", {}), -32601, 1),
        (_rpc("tasks/pushNotificationConfig/set", {}), -32003, 1),
        (_rpc("GetExtendedAgentCard", {}), -32004, 1),
        (_rpc("agent/getAuthenticatedExtendedCard", {}), -32004, 1),
        (_rpc("ListTasks", {"pageSize": 0}), -32602, 1),
        (_rpc("ListTasks", {"pageSize": 101}), -32602, 1),
        (_rpc("ListTasks", {"historyLength": -1}), -32602, 1),
        (_rpc("ListTasks", {"status": "TASK_STATE_BORED"}), -32602, 1),
        (_rpc("ListTasks", {"statusTimestampAfter": "yesterday"}), -32602, 1),
        (_rpc("ListTasks", ["t"]), -32602, 1),
        (_rpc("tasks/get"), -32602, 1),
        (_rpc("tasks/get", ["t"]), -32602, 1),
        (_rpc("tasks/get", {}), -32602, 1),
        (_rpc("tasks/get", {"id": 7}), -32602, 1),
        (_rpc("tasks/get", {"id": "t", "historyLength": "2"}), -32602, 1),
        (_rpc("GetTask", {"id": "t", "historyLength": -1}), -32602, 1),
        (_rpc("message/send", {}), -32602, 1),
        (_rpc("message/send", {"message": {"role": "user", "parts": []}}), -32602, 1),
        (
            _rpc("SendMessage", {"message": {"messageId": "m", "role": "user", "parts": []}}),
            -32602,
            1,
        ),
    ],
)
def test_malformed_requests_get_the_right_error(body: bytes, code: int, request_id: Any) -> None:
    result = a2a.decode_request(body)
    assert isinstance(result, RpcError), result
    assert (result.code, result.id) == (code, request_id)
    envelope = a2a.encode_error(result)
    assert envelope["jsonrpc"] == "2.0" and envelope["error"]["code"] == code


def test_list_tasks_params_round_trip() -> None:
    params = a2a.ListTasksParams(
        context_id="c1",
        status=a2a.TaskState.INPUT_REQUIRED,
        page_size=5,
        page_token="abc",
        history_length=0,
        status_timestamp_after=datetime(2026, 11, 29, 19, 40, 21, tzinfo=UTC),
        include_artifacts=True,
    )
    for p in (params, a2a.ListTasksParams()):
        request = RpcRequest(id="r", version="1.0", op="list", params=p)
        assert request.method == "ListTasks" and not request.streaming
        assert a2a.decode_request(a2a.dumps(a2a.encode_request(request))) == request
    # 0.3 has no tasks/list on JSON-RPC, and the status filter's "unspecified" means none
    assert a2a.decode_request(_rpc("tasks/list", {})).code == -32601  # type: ignore[union-attr]
    unspecified = a2a.decode_request(_rpc("ListTasks", {"status": "TASK_STATE_UNSPECIFIED"}))
    assert isinstance(unspecified, RpcRequest)
    assert unspecified.params == a2a.ListTasksParams()


@pytest.mark.parametrize(
    ("body", "header", "code"),
    [
        # the header is checked as soon as the method is known and params is an object ...
        (_rpc("GetTask", {}), None, -32009),
        (_rpc("SendMessage", {"message": {"parts": []}}), None, -32009),
        (_rpc("ListTasks", {"pageSize": 0}), None, -32009),
        (_rpc("GetExtendedAgentCard", {}), None, -32009),
        (_rpc("CreateTaskPushNotificationConfig", {}), "0.3", -32009),
        (_rpc("tasks/get", {}), "1.0", -32603),
        # ... not before: an unknown method, params missing or not an object come first
        (_rpc("LaunchTask", {}), None, -32601),
        (_rpc("GetTask"), None, -32602),
        (_rpc("GetTask", ["t"]), None, -32602),
        # with the header, the params are read
        (_rpc("GetTask", {}), "1.0", -32602),
        (_rpc("GetExtendedAgentCard", {}), "1.0", -32004),
    ],
)
def test_a_server_checks_the_version_before_the_fields(
    body: bytes, header: str | None, code: int
) -> None:
    result = a2a.decode_served_request(a2a.loads(body), "both", header)
    assert isinstance(result, RpcError) and result.code == code, result
    # the plain decoder never looks at a header
    assert a2a.decode_request_object(a2a.loads(body), "both") != result or code != -32009


def test_a_well_formed_request_decodes() -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "message/stream",
        "params": {"message": MSG_03, "metadata": {"x": 1}},
    }
    decoded = a2a.decode_request(json.dumps(body).encode())
    assert isinstance(decoded, RpcRequest) and decoded.streaming
    # a 1.0 GetTask with ProtoJSON's string int64 spelling
    get = a2a.decode_request(
        '{"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":"t","historyLength":"3","tenant":""}}'
    )
    assert isinstance(get, RpcRequest) and get.params == TaskQueryParams(id="t", history_length=3)


def _req(method: str) -> RpcRequest:
    version = a2a.version_of(method)
    op = a2a.op_of(method)
    assert version is not None and op is not None
    params = TaskIdParams(id="t") if op in ("cancel", "subscribe") else TaskQueryParams(id="t")
    return RpcRequest(id=1, version=version, op=op, params=params)


@pytest.mark.parametrize(
    ("method", "header", "served", "code"),
    [
        ("tasks/get", None, "0.3", None),
        ("tasks/get", "1.0", "0.3", None),  # a 0.3 server predates the header
        ("tasks/get", None, "1.0", -32601),
        ("GetTask", "1.0", "0.3", -32601),
        ("GetTask", None, "1.0", -32009),  # no header means 0.3
        ("GetTask", "", "1.0", -32009),
        ("GetTask", "0.3", "both", -32009),
        ("GetTask", "1.0", "1.0", None),
        ("GetTask", "1.2", "both", None),
        ("GetTask", "2.0", "1.0", -32009),
        ("tasks/get", "0.3", "both", None),
        ("tasks/get", None, "both", None),
        ("tasks/get", "1.0", "both", -32603),  # a2a-sdk 1.3: VersionNotSupported has no 0.3 code
    ],
)
def test_check_version(method: str, header: str | None, served: str, code: int | None) -> None:
    error = a2a.check_version(_req(method), header, served)  # type: ignore[arg-type]
    assert (error.code if error else None) == code


# --- agent cards -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "transport", "version"),
    [
        ("0.3", "CompatJsonRpcTransport", "0.3.0"),
        ("1.0", "JsonRpcTransport", "1.0"),
        ("both", "JsonRpcTransport", "1.0"),
    ],
)
def test_the_sdk_client_picks_the_transport_the_card_says(
    wire: str, transport: str, version: str
) -> None:
    card = a2a.agent_card("http://127.0.0.1:9/", wire)  # type: ignore[arg-type]
    parsed = parse_agent_card(json.loads(json.dumps(card)))
    assert parsed.capabilities.streaming
    client = ClientFactory(ClientConfig()).create(parsed)
    assert type(client._transport).__name__ == transport  # type: ignore[attr-defined]
    chosen = ClientFactory._find_best_interface(list(parsed.supported_interfaces))
    assert (
        chosen is not None
        and chosen.protocol_version == version
        and chosen.url == "http://127.0.0.1:9/"
    )


def test_the_0_3_card_has_every_field_java_and_the_schema_require() -> None:
    card = a2a.agent_card("http://h/", "0.3")
    v03.AgentCard.model_validate(card)
    for key in (
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "description",
        "name",
        "skills",
        "url",
        "version",
    ):
        assert key in card
    assert "supportedInterfaces" not in card  # else the 1.3 client would pick 1.0 (§1.1)


# --- the task model ----------------------------------------------------------------------------


def _chunk(text: str, *, append: bool, artifact_id: str = "a") -> ArtifactUpdate:
    return ArtifactUpdate(
        task_id="t",
        context_id="c",
        artifact=Artifact(artifact_id=artifact_id, parts=(TextPart(text=text),)),
        append=append,
    )


def test_apply_event_aggregates_like_the_sdk() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.SUBMITTED))
    for event in (
        _chunk("1", append=False),
        _chunk("2", append=True),
        _chunk("x", append=True, artifact_id="nope"),  # ignored, as a2a-sdk does
        _chunk("b", append=False, artifact_id="b"),
        _chunk("3", append=True),
    ):
        task = a2a.apply_event(task, event)
    assert [(a.artifact_id, a2a.text_of(a.parts)) for a in task.artifacts] == [
        ("a", "123"),
        ("b", "b"),
    ]
    task = a2a.apply_event(task, _chunk("new", append=False))  # replace keeps the position
    assert [(a.artifact_id, a2a.text_of(a.parts)) for a in task.artifacts] == [
        ("a", "new"),
        ("b", "b"),
    ]
    working = StatusUpdate(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING, message=AGENT_MSG)
    )
    done = StatusUpdate(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED), final=True
    )
    task = a2a.apply_event(a2a.apply_event(task, working), done)
    assert task.status.state is TaskState.COMPLETED
    assert task.history == (AGENT_MSG,)  # the replaced status message moved into the history


def test_history_length_semantics_differ_between_versions() -> None:
    task = TASK.model_copy(update={"history": (USER_MSG, AGENT_MSG, USER_MSG)})
    assert len(a2a.limit_history(task, 0, "0.3").history) == 3  # 0.3: 0 means all (§1.9)
    assert len(a2a.limit_history(task, 0, "1.0").history) == 0  # 1.0: 0 means none
    assert len(a2a.limit_history(task, None, "1.0").history) == 3
    assert a2a.limit_history(task, 1, "0.3").history == (USER_MSG,)
    assert "history" not in a2a.encode_task(task, "1.0", history_length=0)


def test_ends_turn() -> None:
    assert a2a.ends_turn(AGENT_MSG) and a2a.ends_turn(STATUS)
    for state in TaskState:
        update = StatusUpdate(task_id="t", context_id="c", status=TaskStatus(state=state))
        expected = state in a2a.TERMINAL_STATES or state in a2a.INTERRUPTED_STATES
        assert a2a.ends_turn(update) is expected
    assert not a2a.ends_turn(TASK) and not a2a.ends_turn(CHUNK)
