"""The fault plan: what parses, what is rejected (naming the field), and the matching logic."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from streamproof.faults.plan import (
    Fault,
    Links,
    PlanError,
    PlanState,
    RequestInfo,
    Trigger,
    parse_plan,
    request_rpc,
    rpc_method,
    same_rpc,
)

BRIEF_PLAN = """
- when: {method: POST, path: "/chat/*", occurrence: 1, after_event: 3}
  do: rst
- when: {rpc: message/stream, after: 40s}
  do: stall
- do: {status: 502, body: "<html>bad gateway</html>", content_type: text/html}
- when: {idle: 20s}
  do: end_clean
- do: {split: {pieces: 3, gap: 5ms}}
- do: {drip: 100ms}
- when: {after_event: 2}
  do: {corrupt: cr_only}
"""


def one(data: dict[str, Any]) -> Fault:
    (fault,) = parse_plan([data])
    return fault


# --- what parses -------------------------------------------------------------------------------


def test_the_documented_plan_parses() -> None:
    plan = parse_plan(yaml.safe_load(BRIEF_PLAN))
    assert [f.describe() for f in plan] == [
        "after_event: 3 -> rst",
        "after: 40s -> stall",
        "on_request -> status: 502",
        "idle: 20s -> end_clean",
        "on_response_headers -> split: {pieces: 3, gap: 5ms}",
        "on_response_headers -> drip: 100ms",
        "after_event: 2 -> corrupt: cr_only",
    ]
    first = plan[0]
    assert first.when.method == "POST" and first.when.path == "/chat/*"
    assert first.when.occurrences == frozenset({1})
    assert plan[2].do.status is not None
    assert plan[2].do.status.page() == b"<html>bad gateway</html>"
    assert plan[2].do.status.content_type == "text/html"
    assert plan[4].do.split is not None and plan[4].do.split.gap == pytest.approx(0.005)


def test_links_section_holds_one_plan_per_hop() -> None:
    links = Links.model_validate(
        {"browser": [{"do": "rst"}], "a2a": [{"when": {"after": "40s"}, "do": "stall"}]}
    )
    assert links.browser[0].action == "rst"
    assert links.a2a[0].trigger == Trigger("after", 40.0)
    assert links.model == ()


@pytest.mark.parametrize(
    ("do", "action", "trigger"),
    [
        ("rst", "rst", "on_response_headers"),
        ("fin", "fin", "on_response_headers"),
        ("end_clean", "end_clean", "on_response_headers"),
        ("stall", "stall", "on_response_headers"),
        ("refuse", "refuse", "on_request"),
        ("split", "split", "on_response_headers"),
        ({"status": 503}, "status", "on_request"),
        ({"delay": "2s"}, "delay", "on_request"),
        ({"drip": "1s"}, "drip", "on_response_headers"),
        ({"corrupt": "bom"}, "corrupt", "on_response_headers"),
        ({"stall": {"for": "3s"}}, "stall", "on_response_headers"),
        ({"stall": None}, "stall", "on_response_headers"),
        ({"fin": None}, "fin", "on_response_headers"),
        ({"rst": True}, "rst", "on_response_headers"),
    ],
)
def test_actions_and_their_default_trigger(do: Any, action: str, trigger: str) -> None:
    fault = one({"do": do})
    assert fault.action == action
    assert fault.trigger.kind == trigger


def test_status_spellings_agree() -> None:
    short = one({"do": {"status": 502}})
    long = one({"do": {"status": {"code": 502}}})
    flat = one({"do": {"status": 502, "content_type": "text/plain", "body": "x"}})
    assert short == long
    assert short.do.status is not None and b"502 Bad Gateway" in short.do.status.page()
    assert flat.do.status is not None and flat.do.status.page() == b"x"
    assert flat.do.status.content_type == "text/plain"
    assert one({"do": {"status": 204}}).do.status.page() == b""  # type: ignore[union-attr]


def test_stall_for_and_split_defaults() -> None:
    stall = one({"do": {"stall": {"for": "250ms"}}}).do.stall
    assert stall is not None and stall.for_ == pytest.approx(0.25)
    split = one({"do": "split"}).do.split
    assert split is not None and (split.pieces, split.gap) == (3, 0.005)


@pytest.mark.parametrize(
    ("when", "trigger"),
    [
        ({"on_request": True}, Trigger("on_request")),
        ({"on_response_headers": True}, Trigger("on_response_headers")),
        ({"after_event": 0}, Trigger("after_event", 0)),
        ({"after_bytes": 1024}, Trigger("after_bytes", 1024)),
        ({"after": "1.5m"}, Trigger("after", 90.0)),
        ({"idle": 20}, Trigger("idle", 20.0)),
    ],
)
def test_each_trigger(when: dict[str, Any], trigger: Trigger) -> None:
    assert one({"when": when, "do": "fin"}).trigger == trigger


def test_trigger_helpers() -> None:
    assert Trigger("on_response_headers").at_response_start
    assert Trigger("after_event", 0).at_response_start
    assert not Trigger("after_event", 1).at_response_start
    assert Trigger("idle", 1.0).timed and not Trigger("after_bytes", 5).timed
    assert str(Trigger("after", 0.25)) == "after: 250ms"
    assert str(Trigger("after_event", 3)) == "after_event: 3"


# --- what is rejected --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "field", "words"),
    [
        ({"do": "rest"}, "[0].do", ["unknown action 'rest'", "did you mean 'rst'"]),
        ({"do": {"stal": {}}}, "[0].do", ["unknown action 'stal'", "'stall'"]),
        ({"when": {"after_events": 3}, "do": "rst"}, "[0].when", ["'after_events'", "after_event"]),
        ({"when": {"after": "1s", "idle": "2s"}, "do": "rst"}, "[0].when", ["2 triggers"]),
        ({"do": {"fin": True, "rst": True}}, "[0].do", ["exactly one action", "fin, rst"]),
        ({"do": {}}, "[0].do", ["no action"]),
        ({"do": "drip"}, "[0].do", ["drip needs a value"]),
        ({"do": {"stall": {"for": "1s", "forever": True}}}, "[0].do.stall.forever", ["unknown"]),
        ({"do": {"corrupt": "zap"}}, "[0].do.corrupt", ["drop_blank_line"]),
        ({"do": {"split": {"pieces": 1}}}, "[0].do.split.pieces", ["greater than or equal to 2"]),
        ({"do": {"status": 99}}, "[0].do.status.code", ["greater than or equal to 200"]),
        ({"do": {"status": {"code": 204, "body": "x"}}}, "[0].do.status", ["no body"]),
        ({"when": {"occurrence": 0}, "do": "rst"}, "[0].when.occurrence", ["counts from 1"]),
        ({"when": {"occurrence": [1, -2]}, "do": "rst"}, "[0].when.occurrence", ["from 1"]),
        ({"when": {"occurrence": []}, "do": "rst"}, "[0].when.occurrence", ["at least one"]),
        ({"when": {"after_event": -1}, "do": "rst"}, "[0].when.after_event", ["greater"]),
        ({"when": {"after_bytes": -5}, "do": "rst"}, "[0].when.after_bytes", ["greater"]),
        ({"when": {"after_event": "3"}, "do": "rst"}, "[0].when.after_event", ["integer"]),
        ({"when": {"after": -1}, "do": "rst"}, "[0].when.after", ["negative"]),
        ({"when": {"idle": "-2s"}, "do": "rst"}, "[0].when.idle", ["not a duration"]),
        ({"do": {"delay": -0.5}}, "[0].do.delay", ["negative"]),
        ({"do": {"stall": {"for": "soon"}}}, "[0].do.stall.for", ["not a duration"]),
        ({"when": {"on_request": False}, "do": "rst"}, "[0].when.on_request", ["True"]),
        ({"when": {"method": "GET /x"}, "do": "rst"}, "[0].when.method", ["HTTP method"]),
        ({"when": {"path": "chat/*"}, "do": "rst"}, "[0].when.path", ["starting with '/'"]),
        ({"when": {"rst": True}, "do": "fin"}, "[0].when", ["unknown key 'rst'"]),
        ({"do": "rst", "note": "x"}, "[0].note", ["unknown key"]),
    ],
)
def test_invalid_faults_name_their_field(
    fault: dict[str, Any], field: str, words: list[str]
) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan([fault])
    assert info.value.field == field, str(info.value)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    ("action", "when"),
    [
        ({"status": 502}, {"after_event": 1}),
        ({"status": 502}, {"after_bytes": 10}),
        ({"status": 502}, {"after": "1s"}),
        ({"status": 502}, {"idle": "1s"}),
        ({"status": 502}, {"on_response_headers": True}),
        ("refuse", {"on_response_headers": True}),
        ("refuse", {"after_event": 2}),
        ("refuse", {"idle": "1s"}),
        ({"delay": "1s"}, {"after_event": 2}),
        ({"delay": "1s"}, {"after_bytes": 2}),
        ({"delay": "1s"}, {"after": "1s"}),
        ({"delay": "1s"}, {"idle": "1s"}),
        ({"drip": "1s"}, {"idle": "1s"}),
        ({"split": {}}, {"idle": "1s"}),
        ({"drip": "1s"}, {"on_request": True}),
        ("split", {"on_request": True}),
        ({"corrupt": "bom"}, {"on_request": True}),
        ({"corrupt": "cr_only"}, {"on_request": True}),
        ("end_clean", {"on_request": True}),
    ],
)
def test_impossible_combinations_are_rejected(action: Any, when: dict[str, Any]) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan([{"when": when, "do": action}])
    message = str(info.value)
    (trigger,) = when
    name = action if isinstance(action, str) else next(iter(action))
    assert info.value.field == "[0]"
    assert f"do: {name} cannot fire on when.{trigger}" in message


@pytest.mark.parametrize(
    ("action", "when"),
    [
        ("stall", {"on_request": True}),
        ("rst", {"on_request": True}),
        ("fin", {"on_request": True}),
        ("stall", {"idle": "5s"}),
        ("end_clean", {"idle": "5s"}),
        ({"corrupt": "bom"}, {"idle": "5s"}),
        ({"delay": "1s"}, {"on_response_headers": True}),
        ({"drip": "10ms"}, {"after": "1s"}),
        ({"split": {"pieces": 2}}, {"after_bytes": 100}),
    ],
)
def test_possible_combinations_are_accepted(action: Any, when: dict[str, Any]) -> None:
    parse_plan([{"when": when, "do": action}])


def test_a_fault_is_required_to_fire_unless_it_says_optional() -> None:
    required, optional = parse_plan([{"do": "rst"}, {"do": "rst", "optional": True}])
    assert required.optional is False and optional.optional is True
    with pytest.raises(PlanError, match=r"\[0\]\.optional"):
        parse_plan([{"do": "rst", "optional": "sometimes"}])


def test_plan_must_be_a_list() -> None:
    with pytest.raises(PlanError, match="list of faults"):
        parse_plan({"do": "rst"})
    assert parse_plan(None) == ()


# --- matching ----------------------------------------------------------------------------------


def test_method_path_rpc_matching() -> None:
    fault = one(
        {"when": {"method": "post", "path": "/chat/*", "rpc": "message/stream"}, "do": "rst"}
    )
    assert fault.when.method == "POST"
    assert fault.when.matches(RequestInfo("POST", "/chat/s1", "message/stream"))
    assert fault.when.matches(RequestInfo("post", "/chat/a/b", "message/stream"))  # * spans '/'
    assert not fault.when.matches(RequestInfo("GET", "/chat/s1", "message/stream"))
    assert not fault.when.matches(RequestInfo("POST", "/history/s1", "message/stream"))
    assert not fault.when.matches(RequestInfo("POST", "/chat/s1", "tasks/get"))
    assert not fault.when.matches(RequestInfo("POST", "/chat/s1", None))
    assert not one({"when": {"path": "/Chat"}, "do": "rst"}).when.matches(
        RequestInfo("GET", "/chat")
    )
    assert one({"do": "rst"}).when.matches(RequestInfo("DELETE", "/anything", None))


def test_occurrence_counts_each_faults_own_matches() -> None:
    state = PlanState(
        parse_plan(
            [
                {"when": {"method": "POST", "occurrence": 2}, "do": "rst"},
                {"when": {"occurrence": [1, 3]}, "do": "fin"},
                {"when": {"rpc": "tasks/resubscribe"}, "do": "stall"},
            ]
        )
    )
    get = RequestInfo("GET", "/x")
    post = RequestInfo("POST", "/rpc", "message/stream")
    resub = RequestInfo("POST", "/rpc", "tasks/resubscribe")
    picks = [[i for i, _ in state.select(r)] for r in (get, post, post, resub, resub)]
    # fault 0 counts POSTs (1: post, 2: post, 3: resub...), fault 1 counts every request.
    assert picks == [[1], [], [0, 1], [2], [2]]
    assert state.matched(0) == 4 and state.matched(1) == 5 and state.matched(2) == 2


def test_a_new_state_resets_counters() -> None:
    plan = parse_plan([{"when": {"occurrence": 1}, "do": "rst"}])
    state = PlanState(plan)
    assert state.select(RequestInfo("GET", "/")) and not state.select(RequestInfo("GET", "/"))
    assert PlanState(plan).select(RequestInfo("GET", "/"))


@pytest.mark.parametrize(
    ("body", "method"),
    [
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {}}',
            "message/stream",
        ),
        (b'  {"method": "SendStreamingMessage"}', "SendStreamingMessage"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": {}}', None),
        (b'{"method": 5}', None),
        (b'[{"method": "message/stream"}]', None),  # a batch has no single method
        (b"{not json", None),
        (b"hello", None),
        (b"", None),
    ],
)
def test_rpc_method(body: bytes, method: str | None) -> None:
    assert rpc_method(body) == method


def test_rpc_names_one_method_on_either_wire_and_binding() -> None:
    """``rpc: message/stream`` fires on the 0.3 and 1.0 spellings and on a REST stream (the
    engines classify a request by :func:`request_rpc`); other names stay exact."""
    fault = one({"when": {"rpc": "message/stream"}, "do": "rst"})
    for seen in ("message/stream", "SendStreamingMessage"):
        assert fault.when.matches(RequestInfo("POST", "/", seen))
    rest = request_rpc("POST", "/message:stream", b'{"message": {}}')
    assert rest == "SendStreamingMessage"
    assert fault.when.matches(RequestInfo("POST", "/message:stream", rest))
    assert not fault.when.matches(RequestInfo("POST", "/", "SendMessage"))
    resubscribe = one({"when": {"rpc": "SubscribeToTask"}, "do": "rst"})
    assert resubscribe.when.matches(RequestInfo("GET", "/t/tasks/x:subscribe", "tasks/resubscribe"))
    assert same_rpc("tasks/launch", "tasks/launch") and not same_rpc("tasks/launch", "tasks/get")
    assert not same_rpc(None, "tasks/get")


@pytest.mark.parametrize(
    ("method", "path", "body", "rpc"),
    [
        ("POST", "/", b'{"jsonrpc": "2.0", "method": "tasks/get"}', "tasks/get"),
        ("POST", "/message:send", b'{"message": {}}', "SendMessage"),
        ("GET", "/tasks/t-1", b"", "GetTask"),
        ("POST", "/sp-1/tasks/t-1:cancel", b"", "CancelTask"),  # under a --concurrency prefix
        ("GET", "/tasks/t-1:subscribe", b"", "SubscribeToTask"),
        ("GET", "/.well-known/agent-card.json", b"", None),
        ("GET", "/chat/s1", b"", None),
        ("POST", "/", b"{not json", None),
    ],
)
def test_request_rpc(method: str, path: str, body: bytes, rpc: str | None) -> None:
    assert request_rpc(method, path, body) == rpc
