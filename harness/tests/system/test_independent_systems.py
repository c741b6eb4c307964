"""The suites against systems written from the rules and contracts in docs/ alone
(``harness/tests/independent/``), not from the reference: a correct-but-minimal gateway, a
0.3-only client and a REST client with push must pass every MUST, with the scenarios they
cannot serve skipped for a named reason; a gateway that only says ``done``, one whose history
fails and a client that only says ``error`` must fail."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.tests.conftest import require_module
from harness.tests.run_pool import Plan, RunPool, Shared, streamproof_run

# Slow: whole suites against the independent systems. Every run is planned ahead and run a few
# at a time (run_pool), all on one worker (one xdist group); a whole-suite run that several
# tests read is made once (Shared).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("independent-systems")]

ROOT = Path(__file__).resolve().parents[3]
INDEPENDENT = Path(__file__).resolve().parents[1] / "independent"
GATEWAY_SCENARIOS = ROOT / "scenarios" / "gateway"
CLIENT_SCENARIOS = ROOT / "scenarios" / "a2a_client"
SUITE_TIMEOUT_S = 900.0

Report = dict[str, Any]


def run_suite(
    scenarios: Path | Sequence[Path], target: str, report_dir: Path
) -> tuple[int, str, Report]:
    """``streamproof run`` as a user runs it; the exit status, the output and results.json."""
    paths = [scenarios] if isinstance(scenarios, Path) else list(scenarios)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamproof.cli",
            "run",
            *map(str, paths),
            "--target",
            str(INDEPENDENT / target),
            "--report-dir",
            str(report_dir),
            "-q",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT_S,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    output = run.stdout[-6000:] + run.stderr[-3000:]
    results = report_dir / "results.json"
    assert results.exists(), f"exit {run.returncode}, no results.json:\n{output}"
    return run.returncode, output, json.loads(results.read_text())


def failures(report: Report) -> list[str]:
    """Every verdict that fails the run, as ``scenario [requirement] message``."""
    return [
        f"{s['id']} [{v.get('requirement')}] {str(v.get('message'))[:300]}"
        for s in report["scenarios"]
        for v in s.get("verdicts", [])
        if v.get("outcome") == "fail"
    ]


def failed_requirements(report: Report) -> set[str]:
    return {
        str(v.get("requirement"))
        for s in report["scenarios"]
        for v in s.get("verdicts", [])
        if v.get("outcome") == "fail"
    }


def skip_reason(scenario: Report) -> str:
    for key in ("reason", "skip_reason", "error"):
        if scenario.get(key):
            return str(scenario[key])
    return ""


def scenario_documents(folder: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for file in sorted(folder.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(file.read_text()) if isinstance(d, dict)]
    return docs


def gateway_needs(doc: dict[str, Any]) -> set[str]:
    """What a gateway scenario needs beyond the minimal contract, read from its YAML."""
    needs = set(doc.get("needs") or ())
    request = doc.get("request")
    if isinstance(request, dict) and request.get("streaming") is False:
        needs.add("none_mode")
    if (doc.get("expect") or {}).get("auth"):
        needs.add("auth")
    return needs


def client_needs(doc: dict[str, Any]) -> set[str]:
    """What a client scenario needs beyond a 0.3-only, single-turn client."""
    needs: set[str] = set()
    if str((doc.get("server") or {}).get("wire", "0.3")) == "1.0":
        needs.add("wire 1.0")
    if (doc.get("client") or {}).get("follow_up") is not None:
        needs.add("follow_up")
    return needs


def capability_pattern(need: str) -> re.Pattern[str]:
    """``multi_agent`` also matches ``multi-agent`` and ``multi agent``; ``wire 1.0`` is ``1.0``."""
    if need == "wire 1.0":
        return re.compile(r"1\.0")
    return re.compile(r"[_\- ]".join(map(re.escape, need.split("_"))), re.IGNORECASE)


def assert_skipped_for_needs(report: Report, needs_of: dict[str, set[str]]) -> None:
    by_id = {s["id"]: s for s in report["scenarios"]}
    wrong: list[str] = []
    for scenario_id, needs in sorted(needs_of.items()):
        if not needs:
            continue
        s = by_id.get(scenario_id)
        if s is None:
            wrong.append(f"{scenario_id}: not in the report")
            continue
        reason = skip_reason(s)
        if s.get("outcome") != "skipped":
            wrong.append(f"{scenario_id}: {s.get('outcome')}, expected skipped for {needs}")
        elif not any(capability_pattern(n).search(reason) for n in needs):
            wrong.append(f"{scenario_id}: skip reason {reason!r} names none of {sorted(needs)}")
    assert not wrong, "\n".join(wrong)


# --- the correct systems ----------------------------------------------------------------------
# Each fixture below reads one whole-suite run that its tests share.

Outcome = tuple[int, str, Report]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    yield from RunPool.fixture(PLANS, tmp_path_factory)


NEEDS = {
    "test_minimal_gateway_fails_no_must": ("google.adk",),
    "test_minimal_gateway_skips_what_it_does_not_serve": ("google.adk",),
    "test_broken_history_gateway_fails_persistence": ("google.adk",),
    "test_a_gateway_with_its_own_frame_names_passes_through_its_mapping": ("google.adk",),
    "test_its_twin_forwarding_tool_results_fails_no_tool_leak_only": ("google.adk",),
    "test_the_seeds_silent_end_at_the_run_bound_is_only_a_should": ("google.adk", "mitmproxy"),
    "test_a_gateway_that_resends_the_answer_as_a_trailing_delta_fails_double_render": (
        "google.adk",
    ),
}
"""The real components a test's system needs: without them it skips (fails under
STREAMPROOF_REQUIRE_ALL=1) before reading its run."""


@pytest.fixture
def run(runs: RunPool, request: pytest.FixtureRequest) -> Outcome:
    """This test's run (its own, or the whole-suite run it shares)."""
    for module in NEEDS.get(request.node.originalname, ()):
        require_module(module)
    return runs.run_of(request)  # type: ignore[no-any-return]


@pytest.fixture
def minimal_gateway_run(run: Outcome) -> Outcome:
    return run


@pytest.fixture
def late_gateway_run(run: Outcome) -> Outcome:
    return run


@pytest.fixture
def client_03_run(run: Outcome) -> Outcome:
    return run


MINIMAL = Shared(
    "minimal-gateway", lambda d: run_suite(GATEWAY_SCENARIOS, "minimal-gateway.yaml", d)
)
LATE = Shared("late-gateway", lambda d: run_suite(GATEWAY_SCENARIOS, "late-gateway.yaml", d))
CLIENT_03 = Shared("client-0.3", lambda d: run_suite(CLIENT_SCENARIOS, "client-0.3.yaml", d))


def test_minimal_gateway_fails_no_must(minimal_gateway_run: tuple[int, str, Report]) -> None:
    code, output, report = minimal_gateway_run
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    assert report["summary"]["passed"] >= 10


def test_minimal_gateway_skips_what_it_does_not_serve(
    minimal_gateway_run: tuple[int, str, Report],
) -> None:
    _, _, report = minimal_gateway_run
    needs = {str(d["id"]): gateway_needs(d) for d in scenario_documents(GATEWAY_SCENARIOS)}
    assert any("multi_agent" in n for n in needs.values())
    assert any("none_mode" in n for n in needs.values())
    assert any("auth" in n for n in needs.values())
    assert_skipped_for_needs(report, needs)


def verdicts_of(report: Report, scenario_id: str) -> dict[str, list[dict[str, Any]]]:
    (scenario,) = [s for s in report["scenarios"] if s["id"] == scenario_id]
    out: dict[str, list[dict[str, Any]]] = {}
    for v in scenario.get("verdicts", []):
        out.setdefault(str(v.get("requirement")), []).append(v)
    return out


def test_late_gateway_fails_no_must(late_gateway_run: tuple[int, str, Report]) -> None:
    # Retries on 5xx, no error event after a model error, each chunk one chunk late: ADK
    # Java's ways, none a defect by the seed.
    code, output, report = late_gateway_run
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    assert report["summary"]["passed"] >= 15


def test_late_gateway_skips_what_it_does_not_serve(
    late_gateway_run: tuple[int, str, Report],
) -> None:
    _, _, report = late_gateway_run
    # It declares run_timeout, so the scenarios that need only that run.
    needs = {
        str(d["id"]): gateway_needs(d) - {"run_timeout"}
        for d in scenario_documents(GATEWAY_SCENARIOS)
    }
    assert any(needs.values())
    assert_skipped_for_needs(report, needs)


def test_late_gateway_is_judged_on_the_model_error_scenarios(
    late_gateway_run: tuple[int, str, Report],
) -> None:
    _, _, report = late_gateway_run
    http_error = verdicts_of(report, "gateway/model-http-error")
    note, judged = http_error["GW-ERROR-FRAME"]
    assert note["outcome"] == "info" and "the model client retried 4" in note["message"]
    assert judged["outcome"] == "pass"
    (calls,) = http_error["expect.model_calls"]
    assert calls["outcome"] == "pass" and "4 of them retries" in calls["message"]
    mid_stream = verdicts_of(report, "gateway/model-error-mid-stream")
    assert [v["outcome"] for v in mid_stream["GW-ERROR-FRAME"]] == ["pass"]
    assert [v["outcome"] for v in mid_stream["expect.history"]] == ["pass"]
    assert "[user]" in mid_stream["expect.history"][0]["message"]
    # No event carried an error code: nothing to judge, and never a pass.
    assert [v["outcome"] for v in mid_stream["GW-ERROR-EVENT"]] == ["not-applicable"]
    # One chunk late, the browser still leaves while the model stalls: disposal is judged on
    # a model stream that was open, not on a run that had already finished.
    stalls = verdicts_of(report, "gateway/browser-gone-while-model-stalls")
    (dispose,) = stalls["GW-DISPOSE"]
    assert dispose["outcome"] == "pass" and "(1 model stream(s) were open then)" in str(
        dispose["message"]
    )


def test_retries_that_outlast_the_run_bound_end_with_its_error_frame(run: Outcome) -> None:
    # java-genai's real gaps (about 25 s) outlast the run bound (12 s at time scale 0.1): the
    # harness listens past the bound, and the bound's error frame is the end it judges.
    code, output, report = run
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    verdicts = verdicts_of(report, "gateway/model-http-error")
    assert [v["outcome"] for v in verdicts["GW-RUN-BOUND"]] == ["pass"]
    assert [v["outcome"] for v in verdicts["GW-RUN-BOUND-ERROR"]] == ["pass"]
    assert verdicts["GW-ERROR-FRAME"][-1]["outcome"] == "pass"


def test_client_03_fails_no_must(client_03_run: tuple[int, str, Report]) -> None:
    code, output, report = client_03_run
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    assert report["summary"]["passed"] >= 10


def test_client_03_skips_the_1_0_wire_and_follow_ups(
    client_03_run: tuple[int, str, Report],
) -> None:
    _, _, report = client_03_run
    needs = {str(d["id"]): client_needs(d) for d in scenario_documents(CLIENT_SCENARIOS)}
    assert any("wire 1.0" in n for n in needs.values())
    assert any("follow_up" in n for n in needs.values())
    assert_skipped_for_needs(report, needs)


# --- the broken systems -----------------------------------------------------------------------


def test_done_only_gateway_fails(run: Outcome) -> None:
    code, output, report = run
    assert code == 1, output
    assert failures(report), output
    assert {"GW-ANSWER-AS-MESSAGE", "GW-PERSIST-AGGREGATES"} & failed_requirements(report)


def test_broken_history_gateway_fails_persistence(run: Outcome) -> None:
    code, output, report = run
    assert code == 1, output
    persist = {r for r in failed_requirements(report) if r.startswith("GW-PERSIST-")}
    assert persist, "\n".join(failures(report)) + "\n" + output


MAPPED_SCENARIOS = [
    GATEWAY_SCENARIOS / name
    for name in ("worked_example.yaml", "text_with_tool_call.yaml", "model_error_mid_stream.yaml")
]
"""Frames of every kind: tool_call and tool_result, deltas, a final and a non-final message, an
error and done."""


def test_a_gateway_with_its_own_frame_names_passes_through_its_mapping(run: Outcome) -> None:
    code, output, report = run
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    assert report["summary"]["passed"] == len(report["scenarios"]) == 3


def test_its_twin_forwarding_tool_results_fails_no_tool_leak_only(run: Outcome) -> None:
    code, output, report = run
    assert code == 1, output
    assert failed_requirements(report) == {"GW-NO-TOOL-LEAK"}, "\n".join(failures(report))
    assert "(event:tool_done id:" in "\n".join(failures(report))


def test_error_only_client_fails(run: Outcome) -> None:
    code, output, report = run
    assert code == 1, output
    assert failures(report), output
    assert "A2A-C-STATUS" in failed_requirements(report), "\n".join(failures(report))


# --- issue 23: the seed's own ending at the bound, and a trailing delta --------------------------


def test_the_seeds_silent_end_at_the_run_bound_is_only_a_should(run: Outcome) -> None:
    """The seed's controller on timeout (emitter.onTimeout(sub::dispose)): dispose, close, no
    frame. In the black hole that leaves a draft on screen; GW-RUN-BOUND-ERROR (SHOULD) alone
    says so, and the run passes without --strict."""
    code, output, report = run
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    black = verdicts_of(report, "gateway/corporate-proxy-black-hole")
    assert [v["outcome"] for v in black["GW-RUN-BOUND"]] == ["pass"]
    assert [v["outcome"] for v in black["GW-RUN-BOUND-ERROR"]] == ["non-strict"]
    assert [v["outcome"] for v in black["GW-STREAM-TERMINAL"]] == ["not-applicable"]
    assert [v["outcome"] for v in black["fault.fired"]] == ["pass"]
    unmet = {
        (s["id"], v["requirement"])
        for s in report["scenarios"]
        for v in s.get("verdicts", [])
        if v.get("outcome") == "non-strict"
    }
    assert unmet == {("gateway/corporate-proxy-black-hole", "GW-RUN-BOUND-ERROR")}
    assert report["summary"]["ok"] is True


def test_a_gateway_that_resends_the_answer_as_a_trailing_delta_fails_double_render(
    run: Outcome,
) -> None:
    code, output, report = run
    assert code == 1, output
    assert failed_requirements(report) == {"GW-NO-DOUBLE-RENDER", "expect.frames"}, failures(report)
    (verdict,) = verdicts_of(report, "gateway/one-tool-call-streamed")["GW-NO-DOUBLE-RENDER"]
    assert "repeats the answer already settled" in verdict["message"]
    assert report["summary"]["must_failures"] == 1
    assert report["summary"]["expectation_failures"] == 1


# --- issue 28: an A2A 1.0 client on the REST binding, with push, from the spec and the docs ------
# harness/tests/independent/rest_push_client.py: httpx, its own SSE reader and webhook, no
# a2a-sdk. It declares only the rest binding, so the product gives it the `<id>[rest]` run of
# every bundled scenario that does not write server.wire "0.3" (one that writes no wire lifted to
# the 1.0 wire) and no JSON-RPC run (docs/reference/a2a-client-contract.md#bindings). Two runs:
# the bundled suite under --strict, and the same suite under --concurrency 3, the only way the
# A2A-C-CONC-* requirements are judged (docs/how-to/concurrency.md).

REST_TARGET = INDEPENDENT / "rest-push-client.yaml"


def rest_declares() -> set[str]:
    """The capabilities rest-push-client.yaml declares (read, so the test follows the file)."""
    return set(yaml.safe_load(REST_TARGET.read_text()).get("capabilities") or ())


def rest_lacks(doc: dict[str, Any]) -> set[str]:
    """What a client scenario needs that the REST client does not declare: its ``needs``,
    ``push`` for a ``push:`` section or push-link faults, ``follow_up`` for a follow-up turn,
    ``proxy_env`` for a forward proxy (docs/reference/scenario-format.md#a2a-client-keys)."""
    needs = set(doc.get("needs") or ())
    links = doc.get("links") or {}
    if doc.get("push") is not None or links.get("push"):
        needs.add("push")
    if (doc.get("client") or {}).get("follow_up") is not None:
        needs.add("follow_up")
    if links.get("forward"):
        needs.add("proxy_env")
    return needs - rest_declares()


def rest_cannot_carry(doc: dict[str, Any]) -> bool:
    """REST carries the 1.0 wire only: a scenario pinned to JSON-RPC, or one that writes the
    0.3 wire, has no REST run; it appears once, under its plain id, skipped."""
    wire = (doc.get("server") or {}).get("wire")
    return doc.get("binding") == "jsonrpc" or (wire is not None and str(wire) == "0.3")


def run_rest(report_dir: Path, *extra: str) -> Outcome:
    """``streamproof run scenarios/a2a_client --target rest-push-client.yaml --strict EXTRA``."""
    done = streamproof_run(
        report_dir,
        "run",
        str(CLIENT_SCENARIOS),
        "--target",
        str(REST_TARGET),
        "--strict",
        "-q",
        *extra,
        timeout=SUITE_TIMEOUT_S,
    )
    results = report_dir / "results.json"
    assert results.exists(), f"exit {done.returncode}, no results.json:\n{done.tail()}"
    return done.returncode, done.tail(6000, 3000), done.report


def a2a_client_musts() -> set[str]:
    """Every A2A client MUST in the registry (``streamproof list --json``)."""
    listed = subprocess.run(
        [sys.executable, "-m", "streamproof.cli", "list", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return {
        r["id"]
        for r in json.loads(listed.stdout)
        if r["kind"] == "a2a-client" and r["level"] == "MUST"
    }


def judged_passing(report: Report) -> set[str]:
    return {
        str(v.get("requirement"))
        for s in report["scenarios"]
        for v in s.get("verdicts", [])
        if v.get("outcome") == "pass"
    }


def rest_runs_made(report_dir: Path) -> dict[str, Outcome]:
    """The REST client's two runs of the bundled suite, at once: each waits on its scripts
    (the longest plan of the module, started first)."""
    with ThreadPoolExecutor(2, thread_name_prefix="rest-client") as both:
        suite = both.submit(run_rest, report_dir / "suite")
        concurrent = both.submit(run_rest, report_dir / "concurrent", "--concurrency", "3")
        return {"suite": suite.result(), "concurrent": concurrent.result()}


REST = Shared("rest-client", rest_runs_made)


@pytest.fixture
def rest_runs(runs: RunPool, request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """The two runs of the REST client, by name."""
    return runs.run_of(request)  # type: ignore[no-any-return]


def test_rest_client_passes_every_scenario_it_runs(rest_runs: dict[str, Outcome]) -> None:
    code, output, report = rest_runs["suite"]
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    served = [
        d
        for d in scenario_documents(CLIENT_SCENARIOS)
        if not rest_cannot_carry(d) and not rest_lacks(d)
    ]
    assert len(served) >= 30, f"only {len(served)} bundled client scenarios to run on REST"
    assert report["summary"]["passed"] == len(served), output


def test_rest_client_gets_one_rest_run_per_scenario_and_skips_exactly_what_it_cannot_serve(
    rest_runs: dict[str, Outcome],
) -> None:
    _, output, report = rest_runs["suite"]
    by_id = {s["id"]: s for s in report["scenarios"]}
    expected: set[str] = set()
    wrong: list[str] = []
    for doc in scenario_documents(CLIENT_SCENARIOS):
        plain, rest = str(doc["id"]), f"{doc['id']}[rest]"
        if rest_cannot_carry(doc):
            expected.add(plain)
            s, r = by_id.get(plain, {}), skip_reason(by_id.get(plain, {}))
            if s.get("outcome") != "skipped" or not re.search(r"jsonrpc|0\.3", r):
                wrong.append(f"{plain}: expected skipped for its binding/wire, got {r!r}")
            continue
        expected.add(rest)
        s, lacking = by_id.get(rest, {}), rest_lacks(doc)
        if lacking:
            r = skip_reason(s)
            if s.get("outcome") != "skipped" or not any(
                capability_pattern(n).search(r) for n in lacking
            ):
                wrong.append(f"{rest}: expected skipped for {sorted(lacking)}, got {r!r}")
        elif s.get("outcome") != "passed":
            wrong.append(f"{rest}: {s.get('outcome')} {skip_reason(s)!r}")
    unexpected = set(by_id) - expected
    assert not unexpected, f"runs the REST-only target should not get: {sorted(unexpected)}"
    assert not wrong, "\n".join(wrong) + "\n" + output


def test_rest_client_fails_nothing_under_concurrency(rest_runs: dict[str, Outcome]) -> None:
    """Every scenario runs 3 calls at once, or is skipped because its faults act on a link the
    calls share (docs/how-to/concurrency.md); at least the fault-free ones run."""
    code, output, report = rest_runs["concurrent"]
    assert not failures(report), "\n".join(failures(report)) + "\n" + output
    assert code == 0, output
    ran = [s for s in report["scenarios"] if s["outcome"] == "passed"]
    assert len(ran) >= 10, output
    odd = [
        f"{s['id']}: {s['outcome']} {skip_reason(s)!r}"
        for s in report["scenarios"]
        if s["outcome"] != "passed" and not re.search(r"link .*share", skip_reason(s))
    ]
    assert not odd, "\n".join(odd)


def test_every_a2a_client_must_is_judged_on_the_rest_client(
    rest_runs: dict[str, Outcome],
) -> None:
    """It declares push, follow-up and the proxy: no A2A-C MUST is out of its reach."""
    judged: set[str] = set()
    for _, _, report in rest_runs.values():
        judged |= judged_passing(report)
    missing = sorted(a2a_client_musts() - judged)
    assert not missing, f"never judged (passing) on the REST client: {missing}"


def _suite(scenarios: Path | Sequence[Path], target: str) -> Plan:
    return partial(run_suite, scenarios, target)


PLANS: dict[str, Plan | Shared] = {
    # the whole suites first, the longest (the REST client's two) at their head
    "test_rest_client_passes_every_scenario_it_runs": REST,
    "test_rest_client_gets_one_rest_run_per_scenario_and_skips_exactly_what_it_cannot_serve": REST,
    "test_rest_client_fails_nothing_under_concurrency": REST,
    "test_every_a2a_client_must_is_judged_on_the_rest_client": REST,
    "test_retries_that_outlast_the_run_bound_end_with_its_error_frame": _suite(
        GATEWAY_SCENARIOS / "model_http_error.yaml", "late-gateway-java-backoff.yaml"
    ),
    "test_minimal_gateway_fails_no_must": MINIMAL,
    "test_minimal_gateway_skips_what_it_does_not_serve": MINIMAL,
    "test_late_gateway_fails_no_must": LATE,
    "test_late_gateway_skips_what_it_does_not_serve": LATE,
    "test_late_gateway_is_judged_on_the_model_error_scenarios": LATE,
    "test_client_03_fails_no_must": CLIENT_03,
    "test_client_03_skips_the_1_0_wire_and_follow_ups": CLIENT_03,
    "test_done_only_gateway_fails": _suite(GATEWAY_SCENARIOS, "done-only-gateway.yaml"),
    "test_broken_history_gateway_fails_persistence": _suite(
        GATEWAY_SCENARIOS, "broken-history-gateway.yaml"
    ),
    "test_error_only_client_fails": _suite(CLIENT_SCENARIOS, "error-only-client.yaml"),
    "test_a_gateway_with_its_own_frame_names_passes_through_its_mapping": _suite(
        MAPPED_SCENARIOS, "mapped-gateway.yaml"
    ),
    "test_its_twin_forwarding_tool_results_fails_no_tool_leak_only": _suite(
        MAPPED_SCENARIOS[:1], "mapped-gateway-leaking.yaml"
    ),
    "test_the_seeds_silent_end_at_the_run_bound_is_only_a_should": _suite(
        GATEWAY_SCENARIOS / "corporate_proxy_idle.yaml", "seed-timeout-gateway.yaml"
    ),
    "test_a_gateway_that_resends_the_answer_as_a_trailing_delta_fails_double_render": _suite(
        GATEWAY_SCENARIOS / "worked_example.yaml", "trailing-delta-gateway.yaml"
    ),
}
"""Each test's run (run_pool)."""
