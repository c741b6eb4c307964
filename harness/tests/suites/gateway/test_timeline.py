"""The gateway timeline: lanes, the chat request, model and tool calls, the browser's frames
merged into bursts, link faults, how the response ended, and failures at the moment a frame broke
the rule; from hand-made observations, and from a real run of a bundled scenario with a fault."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.tests.conftest import require_module
from streamproof.core.timeline import Timeline, TimelineItem
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.fakes.records import TlsRefusal
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.suites.gateway.observation import ChatResponse, GatewayObservation
from streamproof.suites.gateway.profiles.registry import check_gateway
from streamproof.suites.gateway.suite import timeline

from .observations import (
    ANSWER,
    CHUNKS,
    DONE,
    EV_ANSWER,
    MARKER,
    assert_fails,
    delta,
    frames,
    message,
    renumber,
    text_with_tool_call,
    tool_call,
    tool_result,
    worked_example,
)

ROOT = Path(__file__).resolve().parents[4]
MODEL_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"


def _kinds(tl: Timeline, kind: str) -> list[TimelineItem]:
    return [i for i in tl.items if i.kind == kind]


def _of(verdicts: Sequence[Verdict], requirement: str) -> list[Verdict]:
    return [v for v in verdicts if v.requirement == requirement]


def _answered(obs: GatewayObservation) -> GatewayObservation:
    """``obs`` with each model call's end recorded (the fake's ``t_end``)."""
    calls = tuple(c.model_copy(update={"t_end": c.t + 0.02}) for c in obs.model_calls)
    return obs.model_copy(update={"model_calls": calls})


def test_the_worked_example_has_its_lanes_calls_and_frames() -> None:
    obs = _answered(
        worked_example(
            response=ChatResponse(
                status=200, content_type="text/event-stream", end="clean", elapsed=0.75
            ),
            history_read_at=0.9,
        )
    )
    tl = timeline(obs, check_gateway(obs))
    assert [lane.id for lane in tl.lanes] == ["browser", "gateway", "model", "tools"]
    arrows = [(i.lane, i.to, i.label) for i in _kinds(tl, "arrow")]
    assert arrows == [
        ("browser", "gateway", "chat request"),
        ("gateway", "model", "model call #0"),
        ("model", "gateway", "calls lookupOrder"),
        ("gateway", "tools", "lookupOrder"),
        ("gateway", "model", "model call #1"),
        ("model", "gateway", "STOP"),
        ("browser", "gateway", "history read"),
    ]
    marks = [(i.label, i.count) for i in _kinds(tl, "mark")]
    assert marks == [
        ("tool_call", 1),
        ("tool_result", 1),
        ("delta", 3),
        ("message", 1),
        ("done", 1),
    ]
    burst = next(i for i in _kinds(tl, "mark") if i.count == 3)
    assert (burst.lane, burst.t, burst.t_end) == ("browser", 0.3, 0.5)
    (result,) = _kinds(tl, "result")
    assert (result.lane, result.t, result.label) == ("browser", 0.75, "clean")
    assert not _kinds(tl, "failure") and not _kinds(tl, "cut") and not _kinds(tl, "band")


def _link(t: float, kind: str, request: int | None = 0, **fields: Any) -> LinkEvent:
    return LinkEvent.model_validate(
        {"t": t, "link": "model", "connection": 0, "request": request, "kind": kind, **fields}
    )


def test_a_stall_on_the_model_link_is_a_band_from_when_it_fired() -> None:
    events = (
        _link(0.25, "request", method="POST", path=MODEL_PATH),
        _link(0.26, "response_headers", status=200),
        _link(0.30, "event", detail="message", event_index=1),
        _link(0.31, "fault", detail="after_event: 1", fault=FaultRef(index=0, action="stall")),
        _link(2.40, "end", how="fin", by="client", detail="the client went away"),
    )
    obs = worked_example(link_events={"model": events})
    tl = timeline(obs, [])
    assert [lane.id for lane in tl.lanes] == ["browser", "gateway", "model-link", "model", "tools"]
    (band,) = _kinds(tl, "band")
    assert (band.lane, band.t, band.t_end, band.label) == ("model-link", 0.31, 2.4, "stall")


def test_a_stall_nothing_ends_stays_open_and_a_reset_is_a_cut() -> None:
    stalled = (
        _link(0.05, "request", method="POST", path=MODEL_PATH),
        _link(0.06, "fault", detail="on_response_headers", fault=FaultRef(index=0, action="stall")),
    )
    (band,) = _kinds(timeline(worked_example(link_events={"model": stalled}), []), "band")
    assert band.t == 0.06 and band.t_end is None
    reset = (
        _link(0.25, "request", method="POST", path=MODEL_PATH),
        _link(0.40, "fault", detail="after_event: 2", fault=FaultRef(index=0, action="rst")),
        _link(0.40, "end", how="rst", by="proxy", fault=FaultRef(index=0, action="rst")),
    )
    tl = timeline(worked_example(link_events={"model": reset}), [])
    (cut,) = _kinds(tl, "cut")
    assert (cut.lane, cut.t, cut.label) == ("model-link", 0.4, "rst")
    refused = (
        _link(0.25, "request", method="POST", path=MODEL_PATH),
        _link(
            0.25,
            "end",
            how="clean",
            by="proxy",
            status=503,
            fault=FaultRef(index=0, action="status"),
        ),
    )
    (cut,) = _kinds(timeline(worked_example(link_events={"model": refused}), []), "cut")
    assert cut.label == "503"


def test_the_browser_link_gets_its_own_lane_only_when_a_fault_fired_on_it() -> None:
    request = LinkEvent(
        t=0.0, link="browser", connection=0, request=0, kind="request", method="POST"
    )
    quiet = timeline(worked_example(link_events={"browser": (request,), "model": ()}), [])
    assert [lane.id for lane in quiet.lanes] == ["browser", "gateway", "model", "tools"]
    split = LinkEvent(
        t=0.1,
        link="browser",
        connection=0,
        request=0,
        kind="fault",
        detail="on_response_headers",
        fault=FaultRef(index=0, action="split"),
    )
    tl = timeline(worked_example(link_events={"browser": (request, split)}), [])
    assert [lane.id for lane in tl.lanes][:3] == ["browser", "browser-link", "gateway"]
    (mark,) = [i for i in _kinds(tl, "mark") if i.lane == "browser-link"]
    assert (mark.t, mark.label) == (0.1, "split")


def test_a_handshake_given_up_past_the_proxy_is_an_arrow_to_the_model() -> None:
    """The proxy's own connections are not drawn: they are not the gateway's."""
    refusals = (
        TlsRefusal(t=0.3, peer="127.0.0.1:51000", reason="the client closed the connection"),
        TlsRefusal(t=0.4, peer="127.0.0.1:52000", reason="the client closed the connection"),
    )
    obs = worked_example(
        model_path="forward-proxy",
        model_tls_refusals=refusals,
        proxy_upstream=("127.0.0.1:52000",),
    )
    (arrow,) = [a for a in _kinds(timeline(obs, []), "arrow") if a.label.startswith("TLS")]
    assert (arrow.t, arrow.lane, arrow.to) == (0.3, "gateway", "model")
    assert arrow.detail == "from 127.0.0.1:51000: the client closed the connection"


def test_the_browser_leaving_is_a_cut_and_no_stream_end_is_claimed() -> None:
    obs = worked_example(
        response=ChatResponse(
            status=200, content_type="text/event-stream", end="client-closed", elapsed=0.35
        ),
        disconnected_at=0.35,
    )
    tl = timeline(obs, [])
    (cut,) = _kinds(tl, "cut")
    assert (cut.lane, cut.t, cut.label) == ("browser", 0.35, "browser left")
    assert not _kinds(tl, "result")


def test_a_shared_frame_id_fails_at_the_second_frame() -> None:
    obs = worked_example(
        frames=frames(
            tool_call("lookupOrder"),
            tool_result(1),
            *(delta(c) for c in CHUNKS),
            message(ANSWER, id=EV_ANSWER),
            DONE,
            ids=[1, 2, 3, 4, 4, 5, 6],
        )
    )
    verdicts = check_gateway(obs)
    counter = assert_fails(
        _of(verdicts, "GW-FRAME-ID-COUNTER"), "GW-FRAME-ID-COUNTER", "repeats the id"
    )
    assert counter.at == obs.frames[4].t == 0.5
    failures = {i.requirement: i for i in _kinds(timeline(obs, verdicts), "failure")}
    assert "GW-FRAME-ID-FRESH" not in failures  # one behaviour, one rule: the counter's
    assert failures["GW-FRAME-ID-COUNTER"].lane == "gateway"
    assert failures["GW-FRAME-ID-COUNTER"].label.startswith("frame #4 (event:delta id:4) repeats")
    # the seed's own sharing (a message and the tool_call of its event) is the SHOULD's
    shared = text_with_tool_call()
    verdicts = check_gateway(shared)
    fresh = assert_fails(
        _of(verdicts, "GW-FRAME-ID-FRESH"),
        "GW-FRAME-ID-FRESH",
        "share id 3",
        outcome=Outcome.NON_STRICT,
    )
    assert fresh.at == shared.frames[2].t
    failures = {i.requirement: i for i in _kinds(timeline(shared, verdicts), "failure")}
    assert failures["GW-FRAME-ID-FRESH"].level == "SHOULD"


def test_a_frame_after_done_and_a_misplaced_tool_result_fail_where_they_came() -> None:
    good = worked_example().frames
    late = renumber((*good, good[2]))  # a delta after done, at 0.8 s
    verdicts = check_gateway(worked_example(frames=late))
    assert (
        assert_fails(_of(verdicts, "GW-STREAM-TERMINAL"), "GW-STREAM-TERMINAL", "follows").at
        == late[-1].t
    )
    swapped = renumber((good[1], good[0], *good[2:]))  # tool_result first, at 0.1 s
    sequence = _of(check_gateway(worked_example(frames=swapped)), "GW-FRAME-SEQUENCE")
    verdict = assert_fails(sequence, "GW-FRAME-SEQUENCE")
    assert verdict.at == swapped[0].t


def test_a_leaked_tool_payload_fails_at_the_leaking_frame() -> None:
    good = worked_example().frames
    leaky = list(good)
    leaky[3] = leaky[3].model_copy(update={"data": json.dumps({"author": "a", "text": MARKER})})
    obs = worked_example(frames=tuple(leaky))
    verdicts = check_gateway(obs)
    assert assert_fails(_of(verdicts, "GW-NO-TOOL-LEAK"), "GW-NO-TOOL-LEAK").at == leaky[3].t
    failure = next(
        i for i in _kinds(timeline(obs, verdicts), "failure") if i.requirement == "GW-NO-TOOL-LEAK"
    )
    assert failure.t == leaky[3].t


def test_a_failure_without_a_moment_lands_at_the_end_of_the_run() -> None:
    obs = _answered(worked_example(history_read_at=1.25))
    verdicts = [v for v in check_gateway(obs) if v.outcome is Outcome.PASS][:1]
    failed = verdicts[0].model_copy(
        update={"outcome": Outcome.FAIL, "message": f"{verdicts[0].requirement}: broke\nmore"}
    )
    (failure,) = _kinds(timeline(obs, [failed]), "failure")
    assert failure.t == 1.25 and failure.label == "broke"


def test_a_bundled_scenario_with_a_model_link_reset_records_its_timeline(tmp_path: Path) -> None:
    """``streamproof run`` of the bundled model-link reset: the recorded timeline shows the
    second model call cut by the link's rst, the error frame that follows, and the clean end."""
    require_module("google.adk")
    scenario = ROOT / "scenarios" / "gateway" / "model_link_reset.yaml"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamproof.cli",
            "run",
            str(scenario),
            "--report-dir",
            str(tmp_path),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    (record,) = report["scenarios"]
    tl = Timeline.model_validate(record["timeline"])
    assert [lane.id for lane in tl.lanes] == ["browser", "gateway", "model-link", "model", "tools"]
    calls = [i for i in _kinds(tl, "arrow") if i.to == "model"]
    assert [c.label for c in calls] == ["model call #0", "model call #1"]
    (cut,) = _kinds(tl, "cut")
    assert cut.lane == "model-link" and cut.label == "rst" and cut.t > calls[1].t
    errors = [i for i in _kinds(tl, "mark") if i.label == "error"]
    assert errors and errors[0].t >= cut.t
    (result,) = _kinds(tl, "result")
    assert result.label == "clean" and result.t >= errors[0].t
    assert not _kinds(tl, "failure")
    assert tl.time_scale == 0.1 and tl.horizon_s == 30.0
