"""A found plan becomes a scenario the normal loader accepts, with its provenance in a header."""

from __future__ import annotations

from pathlib import Path

import yaml

from streamproof.explore.reproducer import (
    Provenance,
    file_name,
    has_link_faults,
    reproducer_id,
    reproducer_text,
    with_plan,
)
from streamproof.suites.loading import parse_scenarios

ROOT = Path(__file__).resolve().parents[3]
SUMMARY = ROOT / "scenarios" / "a2a_client" / "summary_survives_proxy_timeout.yaml"


def _data() -> dict[str, object]:
    data = yaml.safe_load(SUMMARY.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_with_plan_replaces_the_faults_and_keeps_the_links_other_keys() -> None:
    data = {"id": "x", "links": {"a2a": [{"do": "rst"}], "forward": ["a2a"]}}
    assert has_link_faults(data)
    stripped = with_plan(data, {})
    assert stripped["links"] == {"forward": ["a2a"]}
    assert not has_link_faults(stripped)
    assert data["links"] == {"a2a": [{"do": "rst"}], "forward": ["a2a"]}  # not changed
    assert "links" not in with_plan({"id": "x", "links": {"a2a": [{"do": "rst"}]}}, {"a2a": []})
    planned = with_plan(data, {"a2a": [{"do": "fin"}]})
    assert planned["links"] == {"forward": ["a2a"], "a2a": [{"do": "fin"}]}


def test_names() -> None:
    name = file_name("a2a_client/summary-survives-proxy-timeout", "A2A-C-RECOVERY")
    assert name == "a2a_client-summary-survives-proxy-timeout--A2A-C-RECOVERY.yaml"
    rid = reproducer_id("a2a_client/summary-survives-proxy-timeout", "A2A-C-RECOVERY")
    assert rid == "explore/a2a_client-summary-survives-proxy-timeout--a2a-c-recovery"


def test_the_reproducer_loads_with_its_plan_and_says_how_it_was_found() -> None:
    plan = {
        "a2a": [
            {"when": {"rpc": "message/stream", "after_event": 2, "occurrence": 1}, "do": "stall"}
        ]
    }
    found = Provenance(
        scenario_file=str(SUMMARY),
        scenario_id="a2a_client/summary-survives-proxy-timeout",
        requirement="A2A-C-RECOVERY",
        target="bundled a2a-client reference",
        bug="no-watchdog",
        seed=7,
        examples=12,
        wall_s=34.5,
        fault="a2a (rpc message/stream, occurrence 1): after_event: 2 -> stall",
        rerun="streamproof run x.yaml --bug no-watchdog",
        message="no recovery\nsecond line",
    )
    text = reproducer_text(_data(), plan, found)
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("seed: 7; examples tried: 12; wall time: 34.5s" in line for line in header)
    assert any("bug: no-watchdog" in line for line in header)
    assert any(line.startswith("# Rerun: streamproof run x.yaml") for line in header)
    [loaded] = parse_scenarios(text, "reproducer.yaml")
    scenario = loaded.scenario
    assert scenario.id == "explore/a2a_client-summary-survives-proxy-timeout--a2a-c-recovery"
    assert scenario.requirements == ("A2A-C-RECOVERY",)
    [fault] = scenario.links.a2a
    assert fault.action == "stall" and str(fault.trigger) == "after_event: 2"
    assert fault.when.rpc == "message/stream"


def test_elements_are_written_as_plain_scenario_yaml() -> None:
    from streamproof.explore.scenario import load_scenario
    from streamproof.protocol.gemini import ErrorChunk

    worked = ROOT / "scenarios" / "gateway" / "worked_example.yaml"
    scenario, _ = load_scenario(str(worked))  # both turns replay fixtures
    plan: dict[str, list[dict[str, object]]] = {
        "browser": [],
        "model": [],
        "leave": [{"after_frames": 3}],
        "model_turns": [{"turn": 2, "error_after": 1}],
    }
    found = Provenance(
        scenario_file=str(worked),
        scenario_id=scenario.id,
        requirement="GW-NO-HALF-RECORD",
        target="bundled gateway reference",
        bug="persist-draft-on-error",
        seed=1,
        examples=3,
        wall_s=9.0,
        fault="browser: leaves after frame 3; model turn 2: error event after chunk 1",
        rerun="streamproof run x.yaml --bug persist-draft-on-error",
        message="half answer stored",
    )
    text = reproducer_text(scenario.data, plan, found, scenario.turns)
    assert "# Model turn 2 is written out as its chunks below, changed so." in text
    assert "fixture:" in text  # turn 1 is left as it was: its canned stream
    [loaded] = parse_scenarios(text, "reproducer.yaml")
    written = loaded.scenario
    assert written.request.disconnect_after_frames == 3
    assert written.request.text == "Where is order 1042?"
    first, second = written.model
    assert first.replay is not None and second.replay is None
    assert [type(c).__name__ for c in second.chunks] == ["TextChunk", "ErrorChunk"]
    assert isinstance(second.chunks[-1], ErrorChunk) and second.is_error
    assert second.chunks[0].delay == 0.02  # the fixture's recorded wait, kept


def test_a_split_and_a_delay_keep_the_turn_s_text() -> None:
    from streamproof.explore.reproducer import changed_turn

    turn = {"chunks": [{"text": "Hello "}, {"text": "world."}], "finish_reason": "STOP"}
    split = changed_turn(turn, {"turn": 1, "split": 2})
    assert [c["text"] for c in split["chunks"]] == ["Hello ", "wor", "ld."]
    assert split["chunks"][2]["delay"] == "0s" and split["finish_reason"] == "STOP"
    delayed = changed_turn(turn, {"turn": 1, "delay": {"chunk": 1, "for": "4s"}})
    assert delayed["chunks"][0] == {"text": "Hello ", "delay": "4s"}
    finish = changed_turn(turn, {"turn": 1, "finish": "MAX_TOKENS"})
    assert finish["finish_reason"] == "MAX_TOKENS" and finish["chunks"] == turn["chunks"]
    assert turn["chunks"][0] == {"text": "Hello "}  # not changed in place


def test_a_slower_task_moves_its_later_steps() -> None:
    from streamproof.explore.reproducer import later_steps

    happy = ROOT / "scenarios" / "a2a_client" / "happy_path_1_0_wire.yaml"
    data = yaml.safe_load(happy.read_text(encoding="utf-8"))
    plan: dict[str, list[dict[str, object]]] = {
        "a2a": [],
        "task_steps": [{"from_step": 3, "later": "30s"}],
    }
    moved = with_plan(data, plan)
    assert [step["at"] for step in moved["task"]] == ["0s", "1s", "32s", "33s", "34s"]
    assert [step["at"] for step in data["task"]] == ["0s", "1s", "2s", "3s", "4s"]  # as it was
    [loaded] = parse_scenarios(yaml.safe_dump(moved, sort_keys=False), "slower.yaml")
    assert [float(step.at) for step in loaded.scenario.task or ()] == [0, 1, 32, 33, 34]
    assert later_steps([{"at": "1s"}], {"from_step": 2, "later": "5s"}) == [{"at": "1s"}]
