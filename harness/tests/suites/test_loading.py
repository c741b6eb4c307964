from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.protocol.gemini import CallChunk, ErrorChunk, TextChunk
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.loading import ScenarioError, ScenarioIds, load_scenarios, parse_scenarios

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"

GOOD = """\
id: gateway/example
title: An example
requirements: [GW-NO-TOOL-LEAK]
model:
  - chunks:
      - function_call: {name: lookupOrder, args: {orderId: "1042"}}
  - chunks: ["Order 1042 ", {text: shipped., delay: 50ms}]
    chunk_delay: 10ms
tools:
  lookupOrder: {secret: "{{marker}}"}
request: Where is order 1042?
expect:
  frames: tool_call tool_result delta+ message done
  history: [user, function_call, function_response, text]
"""


def test_good_scenario_loads_with_shorthands() -> None:
    [loaded] = parse_scenarios(GOOD, "good.yaml")
    s = loaded.scenario
    assert isinstance(s, GatewayScenario)
    assert s.request.text == "Where is order 1042?" and s.request.streaming
    assert isinstance(s.model[0].chunks[0], CallChunk)
    first, second = s.model[1].chunks
    assert isinstance(first, TextChunk) and first.delay is None
    assert isinstance(second, TextChunk) and second.delay == pytest.approx(0.05)
    assert s.model[1].text == "Order 1042 shipped."
    assert s.model[0].function_calls[0].args == {"orderId": "1042"}
    assert loaded.line == 1


def test_models_are_frozen() -> None:
    [loaded] = parse_scenarios(GOOD, "good.yaml")
    with pytest.raises(Exception, match="frozen"):
        loaded.scenario.title = "changed"  # type: ignore[misc]


def _error(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        parse_scenarios(text, "bad.yaml")
    return info.value


def test_unknown_key_names_file_line_and_field() -> None:
    err = _error(GOOD.replace("    chunk_delay: 10ms", "    chunk_dealy: 10ms"))
    assert (err.file, err.line, err.field) == ("bad.yaml", 8, "model[1].chunk_dealy")
    assert str(err) == "bad.yaml:8: model[1].chunk_dealy: unknown key; did you mean 'chunk_delay'?"


def test_typo_inside_a_union_member_is_reported_at_its_line() -> None:
    err = _error(GOOD.replace("{name: lookupOrder,", "{nam: lookupOrder,"))
    assert err.line == 6
    assert err.field == "model[0].chunks[0].function_call.nam"


def test_wrong_type() -> None:
    err = _error(GOOD.replace("chunk_delay: 10ms", "chunk_delay: soon"))
    assert err.line == 8 and err.field == "model[1].chunk_delay"
    assert "not a duration" in err.problem


def test_malformed_yaml_names_the_line() -> None:
    err = _error("id: a\ntitle: [unclosed\nrequirements: []\n")
    assert err.file == "bad.yaml" and err.line is not None
    assert "malformed YAML" in str(err)


def test_unknown_requirement_and_bad_pattern() -> None:
    assert "GW-NOPE" in str(_error(GOOD.replace("GW-NO-TOOL-LEAK", "GW-NOPE")))
    err = _error(GOOD.replace("delta+ message done", "delta+ message done!"))
    assert err.field == "expect.frames" and err.line == 13


def test_turn_consistency() -> None:
    err = _error(GOOD.replace("    chunk_delay: 10ms", "    http_error: {code: 503}"))
    assert "http_error" in err.problem
    err = _error(
        GOOD.replace(
            '["Order 1042 ", {text: shipped., delay: 50ms}]', '[{error: {code: 500}}, "after"]'
        )
    )
    assert "must be last" in err.problem


def test_error_chunk_and_times() -> None:
    text = GOOD.replace(
        '["Order 1042 ", {text: shipped., delay: 50ms}]', '["a", {error: {code: 500}}]'
    )
    text = text.replace("    chunk_delay: 10ms", "    times: forever")
    [loaded] = parse_scenarios(text, "x.yaml")
    turn = loaded.scenario.model[1]
    assert isinstance(turn.chunks[1], ErrorChunk) and turn.times == "forever"
    assert turn.mid_stream_error is not None and turn.mid_stream_error.code == 500
    assert "at least 1" in _error(GOOD.replace("    chunk_delay: 10ms", "    times: 0")).problem


def test_several_documents_and_duplicate_ids() -> None:
    two = GOOD + "---\n" + GOOD.replace("gateway/example", "gateway/other")
    loaded = parse_scenarios(two, "two.yaml")
    assert [x.scenario.id for x in loaded] == ["gateway/example", "gateway/other"]
    assert loaded[1].line == GOOD.count("\n") + 2
    err = _error(GOOD + "---\n" + GOOD)
    assert str(err) == (
        f"bad.yaml:{GOOD.count(chr(10)) + 2}: id: duplicate scenario id 'gateway/example', "
        "first at bad.yaml:1"
    )


def test_an_id_registry_shared_by_files_rejects_an_id_used_in_two() -> None:
    ids = ScenarioIds()
    parse_scenarios(GOOD, "a.yaml", ids)
    other = GOOD.replace("gateway/example", "gateway/other")
    with pytest.raises(ScenarioError) as info:
        parse_scenarios(f"{other}---\n{GOOD}", "b.yaml", ids)
    # The other scenario of b.yaml is fine; the duplicate names both files and lines.
    assert str(info.value) == (
        f"b.yaml:{GOOD.count(chr(10)) + 2}: id: duplicate scenario id 'gateway/example', "
        "first at a.yaml:1"
    )
    # Loading one file again is no duplicate of itself; without a registry, files are alone.
    parse_scenarios(GOOD, "a.yaml", ids)
    parse_scenarios(GOOD, "b.yaml")


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just text\n"])
def test_documents_that_are_not_scenarios(text: str) -> None:
    assert _error(text).file == "bad.yaml"


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenarios(tmp_path / "missing.yaml")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenarios(binary)


def test_every_bundled_scenario_loads() -> None:
    files = sorted(SCENARIOS.rglob("*.yaml"))
    assert files
    ids = [entry.scenario.id for f in files for entry in load_scenarios(f)]
    assert len(ids) == len(set(ids))


def test_fault_plan_errors_name_file_line_and_field() -> None:
    links = GOOD + "links:\n  model:\n    - when: {after_event: 2}\n      do: rest\n"
    err = _error(links)
    assert (err.line, err.field) == (18, "links.model[0].do")
    assert "unknown action 'rest' (did you mean 'rst'?)" in err.problem
    err = _error(links.replace("do: rest", "do: {status: 502}"))
    assert err.line == 17 and "status cannot fire on when.after_event" in err.problem
    err = _error(
        links.replace("do: rest", "do: rst").replace("  model:\n    - when", "  a2a:\n    - when")
    )
    assert err.field == "links" and "no 'a2a' link" in err.problem


def test_reload_needs_a_drop() -> None:
    err = _error(GOOD.replace("request: Where is order 1042?", "request: {text: hi, reload: true}"))
    assert err.field == "request" and "disconnect_after_frames" in err.problem


A2A_GOOD = """\
id: a2a_client/example
title: An example
kind: a2a-client
requirements: [A2A-C-RECOVERY]
client: {deadline: 90s, idle: 20s}
task:
  - {at: 0s, status: submitted}
  - {at: 2s, artifact: {id: s, text: x}}
  - {at: 3s, heartbeat: true}
  - {at: 4s, status: completed}
"""


def test_every_error_of_every_document_is_reported() -> None:
    gateway = (
        GOOD.replace("{name: lookupOrder,", "{nam: lookupOrder,")
        .replace("{text: shipped., delay: 50ms}", "{txt: shipped., delay: 50ms}")
        .replace("chunk_delay: 10ms", "chunk_delay: soon")
    )
    client = (
        A2A_GOOD.replace("idle: 20s}", "idle: 20s, promt: x}")
        .replace("status: submitted", "status: submited")
        .replace("heartbeat: true}", "heartbeat: true, coment: x}")
    )
    err = _error(gateway + "---\n- not a mapping\n---\n" + client)
    offset = GOOD.count("\n") + 3
    assert [str(p) for p in err.problems] == [
        "bad.yaml:6: model[0].chunks[0].function_call.nam: unknown key; did you mean 'name'?",
        "bad.yaml:6: model[0].chunks[0].function_call.name: Field required",
        "bad.yaml:7: model[1].chunks[1].txt: unknown key; did you mean 'text'?",
        "bad.yaml:7: model[1].chunks[1].text: Field required",
        "bad.yaml:8: model[1].chunk_delay: 'soon' is not a duration; write it as a number "
        "with a unit: '250ms', '40s', '1.5m', '2h'",
        f"bad.yaml:{offset - 1}: a scenario document must be a mapping",
        f"bad.yaml:{offset + 5}: client.promt: unknown key; did you mean 'prompt'?",
        f"bad.yaml:{offset + 7}: task[0].status: Input should be 'submitted', 'working', "
        "'input-required', 'auth-required', 'completed', 'failed', 'canceled', 'rejected' or "
        "'unknown'",
        f"bad.yaml:{offset + 9}: task[2].coment: unknown key; did you mean 'comment'?",
    ]
    # str() is one problem per line; the first problem's fields stay on the error.
    assert str(err) == "\n".join(str(p) for p in err.problems)
    assert (err.line, err.field) == (6, "model[0].chunks[0].function_call.nam")


def test_a_valid_file_of_both_kinds_loads() -> None:
    loaded = parse_scenarios(GOOD + "---\n" + A2A_GOOD, "two.yaml")
    assert [x.scenario.kind for x in loaded] == ["gateway", "a2a-client"]


def test_only_the_union_member_the_document_meant_is_reported() -> None:
    # A chunk is text, a function call or an error: one typo is one problem, not three.
    err = _error(GOOD.replace('["Order 1042 ", {text: shipped., delay: 50ms}]', "[{txt: a}]"))
    assert [p.field for p in err.problems] == ["model[1].chunks[0].txt", "model[1].chunks[0].text"]
    err = _error(GOOD.replace("{name: lookupOrder,", "{name: 5,"))
    assert [str(p) for p in err.problems] == [
        "bad.yaml:6: model[0].chunks[0].function_call.name: Input should be a valid string"
    ]


def test_a_key_the_user_named_stays_in_the_path() -> None:
    text = GOOD.replace("history: [user,", "tool_calls: {lookupOrder: many}\n  history: [user,")
    assert str(_error(text)) == (
        "bad.yaml:14: expect.tool_calls.lookupOrder: Input should be a valid integer, unable to "
        "parse string as an integer"
    )


@pytest.mark.parametrize(
    ("old", "new", "messages"),
    [
        # a top-level key (the field it misspells is then missing too)
        (
            "request:",
            "requets:",
            [
                "bad.yaml:1: request: Field required",
                "bad.yaml:11: requets: unknown key; did you mean 'request'?",
            ],
        ),
        # a key of a union member: the member the document meant (a text chunk)
        (
            "{text: shipped., delay: 50ms}",
            "{text: shipped., dealy: 50ms}",
            ["bad.yaml:7: model[1].chunks[1].dealy: unknown key; did you mean 'delay'?"],
        ),
    ],
)
def test_an_unknown_key_suggests_the_nearest_valid_one(
    old: str, new: str, messages: list[str]
) -> None:
    assert str(_error(GOOD.replace(old, new))).splitlines() == messages


LINKS = GOOD + "links:\n  model:\n    - when: {after_event: 2}\n      do: {stall: {for: 1s}}\n"


def test_fault_keys_and_aliases_are_suggested() -> None:
    assert str(_error(LINKS.replace("    - when:", "    - wen:"))) == (
        "bad.yaml:17: links.model[0].wen: unknown key; did you mean 'when'?"
    )
    assert str(_error(LINKS.replace("{for: 1s}", "{fr: 1s}"))) == (
        "bad.yaml:18: links.model[0].do.stall.fr: unknown key; did you mean 'for'?"
    )


def test_an_unknown_key_like_no_valid_one_lists_them() -> None:
    err = _error(GOOD.replace("request: Where", "request: {text: Where, zzz: 1}\nx: Where"))
    assert [p.problem for p in err.problems] == [
        "unknown key; keys here are text, streaming, disconnect_after_frames, reload",
        "unknown key; keys here are id, title, kind, requirements, needs, model, tools, "
        "request, expect, limits, links, model_path",
    ]


def test_a_frame_pattern_typo_is_a_load_error_naming_the_nearest_frame_type() -> None:
    err = _error(GOOD.replace("delta+ message done", "delta+ mesage done"))
    assert str(err) == (
        "bad.yaml:13: expect.frames: unknown frame type 'mesage' (did you mean 'message'?) in "
        "'tool_call tool_result delta+ mesage done'; frame types are delta, message, tool_call, "
        "tool_result, error, done"
    )


def test_a_history_pattern_names_history_kinds() -> None:
    text = GOOD.replace(
        "history: [user, function_call, function_response, text]",
        "history: user function_call function_respons text",
    )
    assert str(_error(text)) == (
        "bad.yaml:14: expect.history: unknown history kind 'function_respons' (did you mean "
        "'function_response'?) in 'user function_call function_respons text'; history kinds are "
        "user, function_call, function_response, text, error"
    )
    parse_scenarios(text.replace("respons ", "response "), "good.yaml")


def test_a_ledger_pattern_typo_names_the_nearest_method() -> None:
    text = A2A_GOOD + "expect:\n  ledger: message/stream tasks/gett\n"
    assert str(_error(text)) == (
        "bad.yaml:12: expect.ledger: 'tasks/gett' in the ledger pattern is not an A2A JSON-RPC "
        "method (did you mean 'tasks/get'?); e.g. message/send, message/stream, tasks/get, "
        "tasks/cancel, tasks/resubscribe"
    )
    parse_scenarios(text.replace("gett", "get?"), "good.yaml")


def test_a_type_tag_is_never_read_as_a_key() -> None:
    # times is an int or 'forever': pydantic tags its errors 'int' and "literal['forever']".
    err = _error(GOOD.replace("    chunk_delay: 10ms", "    times: {a: 1}"))
    assert [p.field for p in err.problems] == ["model[1].times"]
    # A tools key is the user's, whatever it is called.
    text = GOOD.replace("history: [user,", "tool_calls: {int: x}\n  history: [user,")
    assert [p.field for p in _error(text).problems] == ["expect.tool_calls.int"]


def test_a_link_engine_that_cannot_do_the_plan_is_a_load_error_naming_it() -> None:
    text = (
        "id: a2a_client/named-engine\ntitle: t\nkind: a2a-client\nrequirements: [A2A-C-RECOVERY]\n"
        "client: {deadline: 90s, idle: 20s, prompt: hi}\n"
        "task:\n  - {at: 0s, status: submitted}\n  - {at: 5s, status: completed}\n"
        "links:\n  engine: {a2a: toxiproxy}\n"
        "  a2a:\n    - {when: {rpc: message/stream, after: 40s}, do: stall}\n"
    )
    with pytest.raises(
        ScenarioError, match=r"links\.a2a\[0\]: engine toxiproxy cannot do when\.rpc"
    ):
        parse_scenarios(text, "named.yaml")
    # the same plan on an engine that can do it loads
    parse_scenarios(text.replace("{a2a: toxiproxy}", "{a2a: mitmproxy}"), "named.yaml")


def test_a_gateway_scenario_names_engines_per_link() -> None:
    text = (
        "id: gateway/named-engine\ntitle: t\nrequirements: [GW-STREAM-TERMINAL]\n"
        "model:\n  - chunks: [hi]\nrequest: hello\n"
        "links:\n  engine: {model: mitmproxy, browser: inline}\n"
        "  model:\n    - {when: {after_event: 1}, do: rst}\n"
    )
    (loaded,) = parse_scenarios(text, "named.yaml")
    assert dict(loaded.scenario.links.engine) == {"model": "mitmproxy", "browser": "inline"}
    with pytest.raises(ScenarioError, match=r"engine toxiproxy cannot do do\.status"):
        parse_scenarios(
            text.replace("mitmproxy", "toxiproxy")
            .replace("do: rst", "do: {status: 502}")
            .replace("{after_event: 1}", "{on_request: true}"),
            "named.yaml",
        )


def test_libyaml_composes_the_same_data_and_lines_and_a_refused_file_keeps_pythons_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Scenario files are composed by LibYAML when PyYAML has it (docs/explanation/performance.md):
    the
    data and every key's line must be those of the pure-Python parser, and a malformed file's
    problem must quote the pure-Python parser's message, as before."""
    import yaml

    from streamproof.suites import loading

    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML without LibYAML: the pure-Python parser is the only one")
    assert loading._FastComposer is yaml.CSafeLoader
    texts = [GOOD, *(p.read_text(encoding="utf-8") for p in sorted(SCENARIOS.rglob("*.yaml")))]
    fast = [loading.yaml_documents(t, "f.yaml") for t in texts]
    monkeypatch.setattr(loading, "_FastComposer", loading._LineLoader)
    slow = [loading.yaml_documents(t, "f.yaml") for t in texts]
    assert [[(d.data, d.lines) for d in docs] for docs, _ in fast] == [
        [(d.data, d.lines) for d in docs] for docs, _ in slow
    ]
    monkeypatch.undo()
    broken = "id: x\nmodel: [1, 2\nrequest: hi\n"
    _, problems = loading.yaml_documents(broken, "bad.yaml")
    with pytest.raises(yaml.YAMLError) as python_error:
        list(yaml.compose_all(broken, Loader=yaml.SafeLoader))
    assert [str(p) for p in problems] == [str(loading._malformed("bad.yaml", python_error.value))]


A2A_PUSH = A2A_GOOD.replace(
    "task:", 'server: {wire: "1.0"}\npush:\n  faults:\n    - {delivery: 2, do: duplicate}\ntask:'
)


def test_a_push_scenario_loads_and_needs_push() -> None:
    [loaded] = parse_scenarios(A2A_PUSH, "push.yaml")
    scenario = loaded.scenario
    assert isinstance(scenario, A2AClientScenario)
    assert scenario.push is not None and scenario.script.push == scenario.push
    assert scenario.missing_needs(frozenset({"wire 1.0", "binding jsonrpc"})) == ["push"]
    assert scenario.missing_needs(frozenset({"wire 1.0", "binding jsonrpc", "push"})) == []


def test_a_bad_push_fault_names_the_file_and_the_field() -> None:
    err = _error(A2A_PUSH.replace("do: duplicate}", "do: duplicat}"))
    assert err.file == "bad.yaml"
    assert err.field == "push.faults[0].do"
    err = _error(A2A_PUSH.replace("do: duplicate}", "do: delay}"))
    assert err.field == "push.faults[0]" and "'by'" in err.problem


def test_push_on_the_0_3_wire_and_a_fault_beyond_the_timeline_are_load_errors() -> None:
    err = _error(A2A_PUSH.replace('wire: "1.0"', 'wire: "0.3"'))
    assert 'push needs server.wire: "1.0"' in err.problem
    err = _error(A2A_PUSH.replace("delivery: 2", "delivery: 7"))
    assert "push.faults[0] (delivery 7: duplicate): the task makes 3 deliveries" in err.problem


def test_a_push_link_plan_needs_a_push_section() -> None:
    text = A2A_GOOD + "links:\n  push:\n    - {when: {on_request: true}, do: rst}\n"
    assert "links.push needs a push: section" in _error(text).problem
