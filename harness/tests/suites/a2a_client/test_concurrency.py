"""K calls of one A2A client scenario at once (harness/streamproof/suites/a2a_client/concurrency.py
and
checks/concurrency.py): how each call's script is marked, what cannot run that way, how the
shared server's records are split per call, the three checks both ways, the fake's keyed mode
on the wire, and on the real reference client (slow): the reference holds at K=4, and the
shared-task-file mutant passes every sequential check but is caught under --concurrency."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from harness.tests.fakes.a2a.helpers import load_script
from harness.tests.run_pool import Plan, Run, RunPool, streamproof_run
from harness.tests.suites.a2a_client.observations import (
    Story,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    result,
)
from streamproof.core.verdicts import Outcome
from streamproof.fakes.a2a import FakeA2AServer
from streamproof.fakes.a2a.ledger import (
    A2ALedger,
    MessageRecord,
    RequestRecord,
    TaskCall,
    TaskRecord,
)
from streamproof.fakes.a2a.script import ArtifactStep, StatusStep
from streamproof.suites import REGISTRY
from streamproof.suites.a2a_client.checks.concurrency import (
    Call,
    calls_end_verdicts,
    concurrency_verdicts,
    crosstalk_verdicts,
    one_task_verdicts,
)
from streamproof.suites.a2a_client.concurrency import (
    call_marker,
    load_figures,
    owners,
    split_ledger,
    tag,
    tag_script,
    untaggable,
)
from streamproof.suites.a2a_client.reference.mutants import CONCURRENT, INTENDED, SHOWCASE
from streamproof.suites.a2a_client.result import ClientFailure
from streamproof.suites.a2a_client.scenario import A2AClientScenario

MARKERS = [call_marker(i, "ab12cd34") for i in range(3)]


def scenario(**fields: Any) -> A2AClientScenario:
    base: dict[str, Any] = {
        "id": "a2a_client/t",
        "title": "t",
        "requirements": ["A2A-C-RESULT"],
        "client": {"deadline": "30s", "idle": "10s", "prompt": "Summarise"},
        "task": [
            {"at": "0s", "status": "submitted", "message": "on it"},
            {"at": "1s", "artifact": {"id": "summary", "text": "Part one. "}},
            {"at": "2s", "artifact": {"id": "summary", "append": True, "text": "Part two."}},
            {"at": "2s", "artifact": {"id": "table", "name": "t.json", "text": '{"a": 1}'}},
            {"at": "3s", "status": "completed"},
        ],
    }
    return A2AClientScenario.model_validate({**base, **fields})


# --- marking and splitting ---------------------------------------------------------------------


def test_markers_are_distinct_and_none_holds_another() -> None:
    markers = [call_marker(i, "ab12cd34") for i in range(32)]
    assert len(set(markers)) == 32
    assert not [a for a in markers for b in markers if a != b and a in b]
    assert markers[2] == "sp-c3-ab12cd34"


def test_a_calls_script_carries_its_marker_where_text_can() -> None:
    original = scenario().script
    mine = tag_script(original, MARKERS[0])
    assert mine.task is not None and original.task is not None
    assert [s.at for s in mine.task] == [s.at for s in original.task]
    first = mine.task[0]
    assert isinstance(first, StatusStep) and first.message == tag("on it", MARKERS[0])
    chunks = [s.artifact for s in mine.task if isinstance(s, ArtifactStep)]
    assert [c.text for c in chunks] == [
        tag("Part one. ", MARKERS[0]),
        tag("Part two.", MARKERS[0]),
        '{"a": 1}',  # structured: JSON cannot carry a marker
    ]
    assert mine.initial_message == tag("on it", MARKERS[0])
    follow = scenario(
        task=[
            {"at": "0s", "status": "submitted"},
            {
                "at": "1s",
                "status": "input-required",
                "message": "Which year?",
                "follow_up": [
                    {"at": "1s", "artifact": {"id": "r", "text": "Done.", "last": True}},
                    {"at": "2s", "status": "completed"},
                ],
            },
        ],
        client={"deadline": "30s", "idle": "10s", "prompt": "p", "follow_up": "2025"},
    ).script
    tagged = tag_script(follow, MARKERS[1])
    assert tagged.task is not None
    step = tagged.task[1]
    assert isinstance(step, StatusStep) and step.follow_up is not None
    inner = step.follow_up[0]
    assert isinstance(inner, ArtifactStep) and inner.artifact.text == tag("Done.", MARKERS[1])
    reply = scenario(task=None, reply="Hello.").script
    assert tag_script(reply, MARKERS[2]).reply is not None
    assert tag_script(reply, MARKERS[2]).reply.text == tag("Hello.", MARKERS[2])  # type: ignore[union-attr]


def test_what_cannot_be_aimed_at_one_call_is_named() -> None:
    assert untaggable(scenario()) is None
    faulted = scenario(
        links={"a2a": [{"when": {"rpc": "message/stream", "after": "1s"}, "do": "rst"}]}
    )
    assert "fault plan acts on the a2a link" in (untaggable(faulted) or "")
    forward = scenario(needs=["proxy_env"], links={"forward": ["a2a"]})
    assert "forward proxy" in (untaggable(forward) or "")


def _request(
    index: int, t: float, prefix: str, rpc: str | None, task: str | None = None
) -> RequestRecord:
    return RequestRecord(
        index=index,
        t=t,
        t_end=t + 0.5,
        connection=index + 1,
        http_method="GET" if rpc is None else "POST",
        path=prefix + ("/.well-known/agent-card.json" if rpc is None else "/"),
        rpc_method=rpc,
        task_id=task,
        response="sse" if rpc == "message/stream" else "json",
    )


def shared_ledger(
    *,
    get_of: dict[int, str] | None = None,
    extra_tasks: int = 0,
    stray: str | None = None,
    paths: bool = True,
    context: str | None = None,
) -> A2ALedger:
    """Two calls at once: each fetches the card, then streams its message, under its own path
    (``paths=False``: a client that drops the path of its base URL); ``get_of`` (call -> task
    id) adds a tasks/get by that call; ``extra_tasks`` more tasks from call 0's message;
    ``stray`` a created task from a message with that text."""

    def prefix(i: int) -> str:
        return f"/{MARKERS[i]}" if paths else ""

    requests: list[RequestRecord] = []
    tasks: list[TaskRecord] = []
    messages: list[MessageRecord] = []
    gets: list[TaskCall] = []
    for i in range(2):
        requests.append(_request(len(requests), 0.01 * i, prefix(i), None))
        index = len(requests)
        requests.append(_request(index, 0.1 + 0.01 * i, prefix(i), "message/stream", f"t{i}"))
        text = tag("Summarise", MARKERS[i])
        messages.append(
            MessageRecord(
                t=0.1,
                request=index,
                message_id=f"m{i}",
                task_id=None,
                context_id=None,
                text=text,
                outcome="created",
            )
        )
        tasks.append(
            TaskRecord(
                task_id=f"t{i}",
                context_id=context or f"c{i}",
                t=0.1,
                request=index,
                message_id=f"m{i}",
                text=text,
            )
        )
    for n in range(extra_tasks):
        index = len(requests)
        requests.append(_request(index, 0.5, prefix(0), "message/stream", f"x{n}"))
        text = tag("Summarise", MARKERS[0])
        messages.append(
            MessageRecord(
                t=0.5,
                request=index,
                message_id=f"x{n}",
                task_id=None,
                context_id=None,
                text=text,
                outcome="created",
            )
        )
        tasks.append(
            TaskRecord(
                task_id=f"x{n}",
                context_id=f"cx{n}",
                t=0.5,
                request=index,
                message_id=f"x{n}",
                text=text,
            )
        )
    if stray is not None:
        index = len(requests)
        requests.append(_request(index, 0.6, "", "message/stream", "s"))
        messages.append(
            MessageRecord(
                t=0.6,
                request=index,
                message_id="s",
                task_id=None,
                context_id=None,
                text=stray,
                outcome="created",
            )
        )
        tasks.append(
            TaskRecord(
                task_id="s", context_id="cs", t=0.6, request=index, message_id="s", text=stray
            )
        )
    for call, task in (get_of or {}).items():
        index = len(requests)
        requests.append(_request(index, 2.0, prefix(call), "tasks/get", task))
        gets.append(TaskCall(t=2.0, request=index, task_id=task, state="completed"))
    return A2ALedger(
        requests=tuple(requests), tasks=tuple(tasks), messages=tuple(messages), gets=tuple(gets)
    )


def test_the_shared_records_are_split_by_path_then_message_then_task() -> None:
    ledger = shared_ledger(get_of={0: "t1"})
    task_owner, request_owner = owners(ledger, MARKERS[:2])
    assert task_owner == {"t0": 0, "t1": 1}
    # every request came under its call's path, the card's fetch too; the get is call 0's
    # though it names call 1's task
    assert request_owner == {0: 0, 1: 0, 2: 1, 3: 1, 4: 0}
    first, second = split_ledger(ledger, MARKERS[:2])
    assert [r.index for r in first.requests] == [0, 1, 4]
    assert [t.task_id for t in first.tasks] == ["t0"] and [g.task_id for g in first.gets] == ["t1"]
    assert [r.index for r in second.requests] == [2, 3] and not second.gets
    # a client that drops its base URL's path: its messages by their marker, a task call by
    # the task it names, its card by nothing
    bare = shared_ledger(get_of={0: "t1"}, paths=False)
    assert owners(bare, MARKERS[:2])[1] == {1: 0, 3: 1, 4: 1}


def calls_of(
    ledger: A2ALedger,
    results: list[Any],
    *,
    t_result: float = 3.2,
    failures: list[ClientFailure | None] | None = None,
) -> list[Call]:
    out: list[Call] = []
    for i, (own, outcome) in enumerate(
        zip(split_ledger(ledger, MARKERS[:2]), results, strict=True)
    ):
        story = Story(link=False, deadline=30, idle=10)
        failure = failures[i] if failures else None
        story.run(outcome, t_result=None if failure else t_result, t_start=0.0, failure=failure)
        out.append(Call(MARKERS[i], story.build(ledger=own, turns=tuple(story.turns))))
    return out


def own_result(i: int) -> Any:
    return result(
        artifacts={"summary": tag("Part one. ", MARKERS[i]) + tag("Part two.", MARKERS[i])},
        task_id=f"t{i}",
        context_id=f"c{i}",
    )


def test_calls_that_keep_to_their_own_tasks_pass_all_three() -> None:
    ledger = shared_ledger()
    verdicts = concurrency_verdicts(calls_of(ledger, [own_result(0), own_result(1)]), ledger)
    assert [v.requirement for v in verdicts] == [
        "A2A-C-CONC-ONE-TASK",
        "A2A-C-CONC-NO-CROSSTALK",
        "A2A-C-CONC-CALLS-END",
    ]
    assert all(v.outcome is Outcome.PASS for v in verdicts), [v.message for v in verdicts]
    assert_passes(verdicts, "A2A-C-CONC-NO-CROSSTALK")


def test_a_result_naming_another_calls_task_is_crosstalk() -> None:
    ledger = shared_ledger(get_of={0: "t1"})
    calls = calls_of(ledger, [own_result(1), own_result(1)])
    verdict = assert_fails(
        crosstalk_verdicts(calls, ledger),
        "A2A-C-CONC-NO-CROSSTALK",
        "call 1/2 reported the task of call 2/2 (t1)",
        "call 1/2 reported the text of call 2/2",
        "call 1/2 read (tasks/get) the task of call 2/2",
    )
    assert verdict.at is not None
    # the other two rules have nothing against it
    assert_passes(one_task_verdicts(calls, ledger), "A2A-C-CONC-ONE-TASK")
    assert_passes(calls_end_verdicts(calls), "A2A-C-CONC-CALLS-END")


def test_calls_that_share_one_context_by_design_are_not_crosstalk() -> None:
    ledger = shared_ledger(context="one-conversation")
    results = [
        own_result(i).model_copy(update={"context_id": "one-conversation"}) for i in range(2)
    ]
    assert_passes(crosstalk_verdicts(calls_of(ledger, results), ledger), "A2A-C-CONC-NO-CROSSTALK")
    # a context that is only another call's is
    mine = shared_ledger()
    wrong = [own_result(0).model_copy(update={"context_id": "c1"}), own_result(1)]
    assert_fails(
        crosstalk_verdicts(calls_of(mine, wrong), mine),
        "A2A-C-CONC-NO-CROSSTALK",
        "call 1/2 reported the context of call 2/2 (c1)",
    )


def test_a_second_task_or_a_message_without_its_prompt_breaks_one_task() -> None:
    ledger = shared_ledger(extra_tasks=1)
    calls = calls_of(ledger, [own_result(0), own_result(1)])
    assert_fails(
        one_task_verdicts(calls, ledger), "A2A-C-CONC-ONE-TASK", "call 1/2 created 2 tasks"
    )
    mixed = shared_ledger(stray=f"{MARKERS[0]} and {MARKERS[1]}")
    assert_fails(
        one_task_verdicts(calls_of(mixed, [own_result(0), own_result(1)]), mixed),
        "A2A-C-CONC-ONE-TASK",
        "holding the prompt of call 1/2, call 2/2",
    )


def test_a_call_killed_or_late_breaks_calls_end() -> None:
    ledger = shared_ledger()
    hang = ClientFailure(kind="hang", message="killed")
    calls = calls_of(ledger, [own_result(0), None], failures=[None, hang])
    assert_fails(
        calls_end_verdicts(calls), "A2A-C-CONC-CALLS-END", "call 2/2: it printed no result (hang)"
    )
    late = calls_of(ledger, [own_result(0), own_result(1)], t_result=36.0)
    assert_fails(calls_end_verdicts(late), "A2A-C-CONC-CALLS-END", "past its deadline")
    # within deadline + tolerance (30 s + 5 s from the first request at 0.1 s): on time
    assert_passes(
        calls_end_verdicts(calls_of(ledger, [own_result(0), own_result(1)], t_result=35.0)),
        "A2A-C-CONC-CALLS-END",
    )


def test_one_call_alone_or_nothing_to_compare_is_not_applicable() -> None:
    ledger = shared_ledger()
    calls = calls_of(ledger, [own_result(0), own_result(1)])
    for verdict in concurrency_verdicts(calls[:1], ledger):
        assert verdict.outcome is Outcome.NOT_APPLICABLE
    errors = [result("error", {}, task_id=None, context_id=None)] * 2
    assert_not_applicable(
        crosstalk_verdicts(calls_of(ledger, errors), ledger),
        "A2A-C-CONC-NO-CROSSTALK",
        "could not show",
    )
    empty = A2ALedger()
    assert_not_applicable(
        one_task_verdicts(calls_of(empty, errors), empty), "A2A-C-CONC-ONE-TASK", "no call created"
    )


def test_load_figures_time_the_first_event_and_the_result() -> None:
    ledger = shared_ledger()
    figures = load_figures(calls_of(ledger, [own_result(0), own_result(1)]))
    assert figures["sessions"] == 2
    # from each call's first request (its card, at 0.00 s and 0.01 s) to its result at 3.2 s
    assert figures["result_s"] == {"p50": 3.19, "p95": 3.2, "n": 2}
    assert figures["first_event_s"]["n"] == 0  # these records wrote no frame


def test_the_rules_are_registered_as_concurrent() -> None:
    for rid in ("A2A-C-CONC-ONE-TASK", "A2A-C-CONC-NO-CROSSTALK", "A2A-C-CONC-CALLS-END"):
        assert REGISTRY[rid].concurrent and REGISTRY[rid].kind == "a2a-client"
    assert {INTENDED[bug] for bug in CONCURRENT} <= set(REGISTRY)


# --- the fake's keyed mode on the wire ---------------------------------------------------------


async def _stream(url: str, text: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/stream",
        "params": {
            "message": {
                "kind": "message",
                "messageId": f"m-{text[-8:]}",
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
            }
        },
    }
    async with aiohttp.ClientSession() as http:
        async with http.post(url + "/", json=body, headers={"Accept": "text/event-stream"}) as r:
            return await r.text()


async def test_the_keyed_fake_answers_each_message_from_its_markers_script() -> None:
    script = load_script(
        """
task:
  - {at: 0s, status: submitted}
  - {at: 0.01s, artifact: {id: a, text: "Answer.", last: true}}
  - {at: 0.02s, status: completed}
"""
    )
    fake = FakeA2AServer()
    url = await fake.start()
    try:
        keyed = {m: tag_script(script, m) for m in MARKERS[:2]}
        fake.load(script, keyed=keyed)
        async with aiohttp.ClientSession() as http:
            card_url = f"{url}/{MARKERS[0]}/.well-known/agent-card.json"
            async with http.get(card_url) as response:
                card = await response.json()
        assert f"/{MARKERS[0]}/" in json.dumps(card)  # the call is sent on under its path
        first = await _stream(f"{url}/{MARKERS[0]}", tag("q", MARKERS[0]))
        second = await _stream(url, tag("q", MARKERS[1]))  # the path is a help, not a need
        neither = await _stream(url, "no marker")
        assert tag("Answer.", MARKERS[0]) in first and MARKERS[1] not in first
        assert tag("Answer.", MARKERS[1]) in second and MARKERS[0] not in second
        assert "-32603" in neither and "no call's marker" in neither
        ledger = fake.ledger
        assert [m.outcome for m in ledger.messages] == ["created", "created", "rejected"]
        assert [r.path for r in ledger.requests][:2] == [
            f"/{MARKERS[0]}/.well-known/agent-card.json",
            f"/{MARKERS[0]}/",
        ]
        assert len(ledger.tasks) == 2
        # unkeyed, as before: any message runs the one script
        fake.load(script)
        assert "Answer." in await _stream(url, "no marker")
    finally:
        await fake.close()


# --- on the real reference client --------------------------------------------------------------


A2A_SCENARIOS = Path(__file__).resolve().parents[4] / "scenarios" / "a2a_client"
SUBSET = (
    "happy_path_1_0_wire.yaml",
    "input_required_follow_up.yaml",
    "direct_message_reply.yaml",
    "structured_output.yaml",
    "deadline_and_cancel.yaml",
    "reset_mid_stream.yaml",  # a fault plan: skipped with the reason
)

# The runs on the real reference client are planned ahead and run a few at a time
# (run_pool): each test asserts on its own runs, the same runs it made alone before.
REAL = pytest.mark.xdist_group("a2a-client-concurrency-real")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunPool]:
    yield from RunPool.fixture(PLANS, tmp_path_factory)


def _holds_run(report_dir: Path) -> Run:
    subset = (str(A2A_SCENARIOS / f) for f in SUBSET)
    return streamproof_run(report_dir, "run", *subset, "--concurrency", "4", "-q")


@pytest.mark.slow
@REAL
def test_the_reference_client_holds_with_calls_at_once(
    runs: RunPool, request: pytest.FixtureRequest
) -> None:
    run = runs.run_of(request)
    code, report, out = run.returncode, run.report, run.stdout + run.stderr
    assert code == 0, out[-6000:]
    assert report["concurrency"] == 4
    ran = [s for s in report["scenarios"] if s["outcome"] == "passed"]
    skipped = [s for s in report["scenarios"] if s["outcome"] == "skipped"]
    # five scenarios, the 1.0 one on JSON-RPC and on REST (the keyed prefix names each call's
    # REST requests as it names its JSON-RPC ones)
    assert len(ran) == 6 and [s["id"] for s in skipped] == ["a2a_client/reset-mid-stream"]
    assert "a2a_client/happy-path-1-0-wire[rest]" in {s["id"] for s in ran}
    assert "fault plan acts on the a2a link" in skipped[0]["error"]
    for record in ran:
        judged = {v["requirement"]: v["outcome"] for v in record["verdicts"]}
        assert judged["A2A-C-CONC-CALLS-END"] == "pass", record["id"]
        assert judged["A2A-C-CONC-NO-CROSSTALK"] == "pass", record["id"]
        expected = "not-applicable" if record["id"].endswith("direct-message-reply") else "pass"
        assert judged["A2A-C-CONC-ONE-TASK"] == expected, record["id"]
        load = record["concurrency"]
        assert load["sessions"] == 4 and load["result_s"]["n"] == 4
    assert "latency under 4" in out


def _showcase(bug: str) -> str:
    """The ``-k`` that selects the bug's showcase run on JSON-RPC (its id; a 1.0 scenario's
    REST run, ``<id>[rest]``, holds the id too and is left out)."""
    return f"{SHOWCASE[bug]} and not binding_rest"


def _one_at_a_time_run(bug: str, report_dir: Path) -> Run:
    return streamproof_run(
        report_dir, "run", str(A2A_SCENARIOS), "-k", _showcase(bug), "--bug", bug, "--strict", "-q"
    )


def _at_once_run(bug: str, report_dir: Path) -> Run:
    return streamproof_run(
        report_dir,
        "run",
        str(A2A_SCENARIOS),
        "-k",
        _showcase(bug),
        "--bug",
        bug,
        "--concurrency",
        str(CONCURRENT[bug]),
        "-q",
    )


@pytest.mark.slow
@REAL
@pytest.mark.parametrize("bug", sorted(CONCURRENT))
def test_a_concurrency_mutant_passes_one_call_at_a_time(
    bug: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """The scenario where K calls at once catch the mutant (its showcase: the next test),
    strict, one call at a time, passes on it. (``streamproof mutants`` runs the whole suite.)"""
    assert REGISTRY[INTENDED[bug]].concurrent
    run = runs.run_of(request)
    assert run.returncode == 0, run.tail(6000, 0)
    report = run.report
    assert [s["id"] for s in report["scenarios"]] == [SHOWCASE[bug]]
    assert report["summary"]["failed"] == 0 and report["summary"]["passed"] == 1


@pytest.mark.slow
@REAL
@pytest.mark.parametrize("bug", sorted(CONCURRENT))
def test_a_concurrency_mutant_is_caught_only_with_calls_at_once(
    bug: str, runs: RunPool, request: pytest.FixtureRequest
) -> None:
    """With K calls at once the mutant's showcase scenario fails under the requirement meant
    for it (the previous test: one call at a time, the same scenario passes)."""
    assert SHOWCASE[bug].startswith("a2a_client/")
    assert REGISTRY[INTENDED[bug]].concurrent
    run = runs.run_of(request)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out[-6000:]
    assert f"[{INTENDED[bug]} MUST]" in out
    assert run.report["requirements"][INTENDED[bug]]["fail"] == 1


PLANS: dict[str, Plan] = {
    # the longest first: the whole suite one call at a time
    "test_a_concurrency_mutant_passes_one_call_at_a_time": _one_at_a_time_run,
    "test_the_reference_client_holds_with_calls_at_once": _holds_run,
    "test_a_concurrency_mutant_is_caught_only_with_calls_at_once": _at_once_run,
}
"""Each test's run on the real reference client, from its parameters (run_pool)."""


def test_each_call_keeps_its_own_webhook_and_deliveries() -> None:
    from streamproof.fakes.a2a.push.records import DeliveryRecord, WebhookRecord

    ledger = shared_ledger()
    hooks = tuple(
        WebhookRecord(t=0.1, task_id=task, request=0, url=f"http://127.0.0.1:{port}/w", token=True)
        for task, port in (("t0", 1000), ("t1", 1001))
    )
    sent = tuple(
        DeliveryRecord(seq=i, delivery=1, task_id=task, url="u", t=0.2, kind="task")
        for i, task in enumerate(("t1", "t0", "t1"))
    )
    first, second = split_ledger(
        ledger.model_copy(update={"webhooks": hooks, "deliveries": sent}), MARKERS[:2]
    )
    assert [w.url for w in first.webhooks] == ["http://127.0.0.1:1000/w"]
    assert [d.seq for d in first.deliveries] == [1]
    assert [d.seq for d in second.deliveries] == [0, 2]
