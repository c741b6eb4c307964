"""K sessions of one scenario at once (harness/streamproof/suites/gateway/concurrency.py): how each
copy's
script is marked, what cannot be run that way, how K copies' verdicts and latencies are merged,
and on the real reference gateway: the reference holds at K=4 and K=8, and each concurrency
mutant passes every sequential check but is caught under --concurrency by its requirement."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.tests.conftest import require_module
from harness.tests.run_pool import Plan, Run, RunPool, streamproof_run
from harness.tests.suites.gateway.observations import (
    DONE,
    delta,
    frames,
    message,
    model_call,
    worked_example,
)
from harness.tests.system.test_end_to_end import CONCURRENT_SHOWN_BY, GATEWAY_SCENARIOS
from streamproof.core.verdicts import Level, Outcome, Verdict
from streamproof.faults.records import LinkEvent
from streamproof.protocol.gemini import CallChunk, TextChunk
from streamproof.suites import REGISTRY
from streamproof.suites.gateway.checks.concurrency import Session
from streamproof.suites.gateway.concurrency import (
    load_figures,
    merge_verdicts,
    own_link_events,
    session_marker,
    tag_turns,
    untaggable,
)
from streamproof.suites.gateway.reference.mutants import CONCURRENT, INTENDED
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.loading import load_scenarios

# End to end (real targets, whole runs): scheduled first under xdist (see conftest).
pytestmark = pytest.mark.slow


def scenario(**fields: Any) -> GatewayScenario:
    base: dict[str, Any] = {
        "id": "gateway/t",
        "title": "t",
        "requirements": ["GW-FRAME-SEQUENCE"],
        "model": [{"chunks": ["Hello ", "world."]}],
        "request": "Hi",
    }
    return GatewayScenario.model_validate({**base, **fields})


def test_markers_are_distinct_and_none_holds_another() -> None:
    markers = [session_marker(i, "ab12cd34") for i in range(32)]
    assert len(set(markers)) == 32
    assert not [a for a in markers for b in markers if a != b and a in b]


def test_every_text_chunk_and_each_calls_first_string_argument_carry_the_marker() -> None:
    turns = scenario(
        model=[
            {"chunks": [{"function_call": {"name": "lookupOrder", "args": {"n": 3, "id": "1"}}}]},
            {
                "chunks": [
                    {"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "b"}}}
                ]
            },
            {"chunks": ["Hello ", "world."], "agent": "b", "times": 2},
        ]
    ).model
    tagged = tag_turns(turns, "sp-s1-x")
    call = tagged[0].chunks[0]
    assert isinstance(call, CallChunk)
    assert call.function_call.args == {"n": 3, "id": "1 sp-s1-x"}
    transfer = tagged[1].chunks[0]
    assert isinstance(transfer, CallChunk)
    assert transfer.function_call.args == {"agent_name": "b"}  # names an agent: left alone
    texts = [c.text for c in tagged[2].chunks if isinstance(c, TextChunk)]
    assert texts == ["Hello  [sp-s1-x] ", "world. [sp-s1-x] "]
    assert (tagged[2].agent, tagged[2].times) == ("b", 2)
    assert turns[2].chunks[0] == TextChunk(text="Hello ")  # the scenario itself is unchanged


def test_a_canned_turn_is_written_from_its_chunks_with_the_marker() -> None:
    loaded = load_scenarios(GATEWAY_SCENARIOS / "worked_example.yaml")[0].scenario
    assert isinstance(loaded, GatewayScenario)
    assert all(turn.replay is not None for turn in loaded.model)
    tagged = tag_turns(loaded.model, "sp-s2-x")
    assert all(turn.replay is None and turn.fixture is None for turn in tagged)
    call = tagged[0].chunks[0]
    assert isinstance(call, CallChunk) and call.function_call.args["orderId"].endswith("sp-s2-x")
    text = "".join(c.text for c in tagged[1].chunks if isinstance(c, TextChunk))
    assert text.count("sp-s2-x") == len(tagged[1].chunks)
    assert tagged[1].finish_reason == loaded.model[1].finish_reason


def test_what_cannot_be_aimed_at_one_session_is_named() -> None:
    assert untaggable(scenario()) is None
    faulted = scenario(links={"model": [{"when": {"after_event": 1}, "do": "rst"}]})
    assert "fault plan acts on a link the K sessions share" in (untaggable(faulted) or "")
    no_string = scenario(
        model=[{"chunks": [{"function_call": {"name": "lookupOrder", "args": {"n": 1}}}]}]
    )
    assert "calls lookupOrder with no string argument" in (untaggable(no_string) or "")


def test_each_copy_keeps_its_own_browser_connections_and_no_model_link() -> None:
    def ev(connection: int, kind: Any, path: str | None = None) -> LinkEvent:
        return LinkEvent(t=0.1, link="browser", connection=connection, kind=kind, path=path)

    events = {
        "browser": (
            ev(1, "connect"),
            ev(1, "request", "/chat/sp-a"),
            ev(2, "connect"),
            ev(2, "request", "/chat/sp-b"),
            ev(1, "end"),
        ),
        "model": (LinkEvent(t=0.2, link="model", connection=1, kind="connect"),),
    }
    mine = own_link_events(events, "sp-a")
    assert list(mine) == ["browser"]
    assert [(e.connection, e.kind) for e in mine["browser"]] == [
        (1, "connect"),
        (1, "request"),
        (1, "end"),
    ]


def _verdict(rid: str, outcome: Outcome, message: str) -> Verdict:
    return Verdict(requirement=rid, level=Level.MUST, outcome=outcome, message=message)


def test_merged_verdicts_keep_the_worst_copy_and_count_the_copies_that_broke_it() -> None:
    merged = merge_verdicts(
        [
            [_verdict("GW-A", Outcome.PASS, "fine"), _verdict("GW-B", Outcome.NOT_APPLICABLE, "-")],
            [_verdict("GW-A", Outcome.FAIL, "GW-A: broke"), _verdict("GW-B", Outcome.PASS, "ok")],
            [_verdict("GW-A", Outcome.FAIL, "GW-A: again"), _verdict("GW-B", Outcome.PASS, "ok")],
        ]
    )
    assert [(v.requirement, v.outcome) for v in merged] == [
        ("GW-A", Outcome.FAIL),
        ("GW-B", Outcome.PASS),
    ]
    assert merged[0].message == "session 2/3: GW-A: broke (broken in 2 of 3 sessions)"
    assert merged[1].message == "session 2/3: ok (pass in 2 of 3 sessions)"
    alike = merge_verdicts([[_verdict("GW-A", Outcome.PASS, f"ok {i}")] for i in range(4)])
    assert [v.message for v in alike] == ["all 4 sessions, session 1/4 shown: ok 0"]


def test_load_figures_pair_each_text_chunk_with_its_delta() -> None:
    def copy(first: float, written: tuple[float, ...], shown: tuple[float, ...]) -> Session:
        call = model_call(0, text="ab", chunks=len(written))
        call = call.model_copy(update={"text_chunk_times": written})
        specs = [delta("x") for _ in shown]
        fs = frames(*specs, message("ab"), DONE)
        fs = tuple(
            f.model_copy(update={"t": shown[f.index] if f.index < len(shown) else 9.0}) for f in fs
        )
        assert fs[0].t == first
        return Session("m", worked_example(frames=fs, model_calls=(call,)))

    figures = load_figures([copy(0.5, (0.45, 0.6), (0.5, 0.7)), copy(0.3, (0.28,), (0.3,))])
    assert figures["sessions"] == 2
    assert figures["first_frame_s"] == {"p50": 0.3, "p95": 0.5, "n": 2}
    assert figures["frame_latency_s"]["n"] == 3
    assert figures["frame_latency_s"]["p95"] == pytest.approx(0.1)


# --- on the real reference gateway -------------------------------------------------------------

SUBSET = (
    "worked_example.yaml",
    "multi_agent.yaml",
    "none_mode.yaml",
    "reload_after_drop.yaml",
    "corporate_proxy_tls.yaml",
)
"""Scenarios of every shape a session can take: a tool call, agents, NONE mode, a drop, and a
corporate proxy every session's model calls go through (its records name no session)."""


# The runs on the real reference are planned ahead and run a few at a time on one worker
# (run_pool): each test asserts on its own run, the same run it made alone before.
REAL = pytest.mark.xdist_group("gateway-concurrency-real")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    yield from RunPool.fixture(PLANS, tmp_path_factory)


def _holds_run(k: int, report_dir: Path) -> Run:
    subset = (str(GATEWAY_SCENARIOS / f) for f in SUBSET)
    return streamproof_run(report_dir, "run", *subset, "--concurrency", str(k), "-q")


@REAL
@pytest.mark.parametrize("k", [4, 8])
def test_the_reference_holds_with_sessions_at_once(
    k: int, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    require_module("google.adk")
    run = runs.run_of(request)
    code, report, out = run.returncode, run.report, run.stdout + run.stderr
    assert code == 0, out[-6000:]
    assert report["concurrency"] == k
    ran = [s for s in report["scenarios"] if s["outcome"] == "passed"]
    assert len(ran) == report["summary"]["scenarios"] >= 6
    for record in ran:
        judged = {v["requirement"]: v["outcome"] for v in record["verdicts"]}
        assert judged["GW-CONC-NO-CROSSTALK"] == "pass", record["id"]
        assert judged["GW-CONC-STREAMS-END"] == "pass", record["id"]
        if record["id"] == "gateway/corporate-proxy-tls":
            # judged once over every session: the shared proxy carried all their model calls
            (proxy,) = [v for v in record["verdicts"] if v["requirement"] == "GW-PROXY-HONOURED"]
            assert proxy["outcome"] == "pass", proxy
            assert f"{2 * k} model call(s) went through the proxy" in proxy["message"], proxy
        load = record["concurrency"]
        assert load["sessions"] == k and load["first_frame_s"]["n"] == k
        assert 0 < load["first_frame_s"]["p50"] <= load["first_frame_s"]["p95"]
    assert f"latency under {k} sessions at once" in out


def _sequential_run(bug: str, report_dir: Path) -> Run:
    ids = " or ".join(CONCURRENT_SHOWN_BY[bug])
    return streamproof_run(
        report_dir, "run", str(GATEWAY_SCENARIOS), "-k", ids, "--bug", bug, "--strict", "-q"
    )


@REAL
@pytest.mark.parametrize("bug", sorted(CONCURRENT))
def test_a_concurrency_mutant_passes_every_sequential_check(
    bug: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """Nothing sequential sees state shared between sessions: the scenarios where sessions at
    once catch the mutant (test_end_to_end, :data:`CONCURRENT_SHOWN_BY`), strict, one session
    at a time, pass on it. (``streamproof mutants`` runs the whole suite.)"""
    require_module("google.adk")
    assert REGISTRY[INTENDED[bug]].concurrent
    run = runs.run_of(request)
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    report = run.report
    assert sorted(s["id"] for s in report["scenarios"]) == sorted(CONCURRENT_SHOWN_BY[bug])
    assert report["summary"]["failed"] == 0
    assert report["summary"]["passed"] == len(CONCURRENT_SHOWN_BY[bug])


PLANS: dict[str, Plan] = {
    # the whole suites first
    "test_a_concurrency_mutant_passes_every_sequential_check": _sequential_run,
    "test_the_reference_holds_with_sessions_at_once": _holds_run,
}
"""Each test's run on the real reference (run_pool)."""
