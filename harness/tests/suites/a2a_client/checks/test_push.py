"""The push checks (``A2A-C-PUSH-…``) both ways on hand-built observations, and the existing
``A2A-C-DEADLINE`` and ``A2A-C-NO-RESEND`` judging push calls."""

from __future__ import annotations

from harness.tests.suites.a2a_client.observations import (
    assert_fails,
    assert_not_applicable,
    assert_passes,
    result,
)
from harness.tests.suites.a2a_client.push_observations import (
    FORGED,
    OK,
    delivery,
    finished,
    push_call,
)
from streamproof.fakes.a2a.push.records import DeliveryRecord
from streamproof.fakes.a2a.push.script import FORGED_TEXT, DeliveryFault
from streamproof.suites.a2a_client.checks import check_a2a_client
from streamproof.suites.a2a_client.checks.push import (
    delivery_faults_fired,
    push_auth_verdicts,
    push_once_verdicts,
    push_silence_verdicts,
    push_stale_verdicts,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation

# --- A2A-C-PUSH-AUTH ---------------------------------------------------------------------------


def test_auth_passes_when_the_forged_delivery_is_refused_and_left_out() -> None:
    obs = push_call(finished(FORGED), OK, t_result=4.1)
    assert_passes(push_auth_verdicts(obs), "A2A-C-PUSH-AUTH")


def test_auth_fails_when_the_webhook_accepts_a_forged_delivery() -> None:
    accepted = FORGED.model_copy(update={"receiver_status": 200, "status": 200})
    obs = push_call(finished(accepted), OK, t_result=4.1)
    assert_fails(push_auth_verdicts(obs), "A2A-C-PUSH-AUTH", "accepted a delivery with a wrong")


def test_auth_fails_when_the_result_carries_the_forged_state_and_text() -> None:
    forged_result = result("failed", {"s": "one "}, message=FORGED_TEXT)
    obs = push_call(finished(FORGED), forged_result, t_result=2.6)
    assert_fails(
        push_auth_verdicts(obs), "A2A-C-PUSH-AUTH", "repeats the forged", "a state only a forged"
    )


def test_auth_is_not_judged_without_a_forged_delivery() -> None:
    obs = push_call(finished(), OK, t_result=4.1)
    assert_not_applicable(push_auth_verdicts(obs), "A2A-C-PUSH-AUTH", "no unauthenticated")


# --- A2A-C-PUSH-ONCE ---------------------------------------------------------------------------

DUP = delivery(
    8,
    3.1,
    "artifact-update",
    delivery=4,
    artifact_id="s",
    text="two",
    append=True,
    last_chunk=True,
    fault="duplicate",
)


def test_once_passes_when_the_duplicate_changed_nothing() -> None:
    obs = push_call(finished(DUP), OK, t_result=4.1)
    assert_passes(push_once_verdicts(obs), "A2A-C-PUSH-ONCE")


def test_once_fails_when_the_duplicate_chunk_was_appended_again() -> None:
    obs = push_call(finished(DUP), result("completed", {"s": "one twotwo"}), t_result=4.1)
    assert_fails(push_once_verdicts(obs), "A2A-C-PUSH-ONCE", "duplicate of delivery 4")


def test_once_fails_when_a_replayed_replace_chunk_undid_the_text() -> None:
    replay = delivery(
        8,
        3.5,
        "artifact-update",
        delivery=3,
        artifact_id="s",
        text="one ",
        append=False,
        fault="replay",
    )
    obs = push_call(finished(replay), result("completed", {"s": "one "}), t_result=4.1)
    assert_fails(push_once_verdicts(obs), "A2A-C-PUSH-ONCE", "replay of delivery 3")


def test_once_is_not_judged_without_a_repeat() -> None:
    obs = push_call(finished(), OK, t_result=4.1)
    assert_not_applicable(push_once_verdicts(obs), "A2A-C-PUSH-ONCE")


# --- A2A-C-PUSH-STALE --------------------------------------------------------------------------

STALE = delivery(9, 4.02, delivery=2, state="working", text="gathering", fault="stale")


def test_stale_passes_when_the_result_follows_the_terminal_delivery() -> None:
    obs = push_call([*finished(), STALE], OK, t_result=4.1, gets=(4.02,))
    assert_passes(push_stale_verdicts(obs), "A2A-C-PUSH-STALE")


def test_stale_fails_when_the_call_waits_on_after_it() -> None:
    obs = push_call([*finished(), STALE], OK, t_result=14.5, gets=(4.02, 14.4))
    assert_fails(push_stale_verdicts(obs), "A2A-C-PUSH-STALE", "reopened the call")


def test_stale_fails_when_the_result_takes_the_stale_state() -> None:
    obs = push_call([*finished(), STALE], result("failed", {"s": "one two"}), t_result=4.1)
    assert_fails(push_stale_verdicts(obs), "A2A-C-PUSH-STALE", "'failed'")


def test_stale_is_not_judged_when_it_came_after_the_result() -> None:
    late = STALE.model_copy(update={"t": 5.0, "t_end": 5.01})
    obs = push_call([*finished(), late], OK, t_result=4.1)
    assert_not_applicable(push_stale_verdicts(obs), "A2A-C-PUSH-STALE")


# --- A2A-C-PUSH-SILENCE ------------------------------------------------------------------------


def _silent() -> list[DeliveryRecord]:
    """The last chunk and the terminal delivery lost: nothing after 2 s."""
    return finished()[:3]


def test_silence_passes_when_the_client_reads_the_task_within_its_idle_limit() -> None:
    obs = push_call(_silent(), OK, t_result=12.6, gets=(12.5,))
    assert_passes(push_silence_verdicts(obs), "A2A-C-PUSH-SILENCE")


def test_silence_fails_when_the_client_waits_for_its_deadline() -> None:
    obs = push_call(_silent(), result("timeout", {"s": "one "}, incomplete=True), t_result=30.1)
    assert_fails(push_silence_verdicts(obs), "A2A-C-PUSH-SILENCE", "did not ask the server")


def test_silence_fails_when_the_recovery_comes_too_late() -> None:
    obs = push_call(_silent(), OK, t_result=20.1, gets=(20.0,))
    assert_fails(push_silence_verdicts(obs), "A2A-C-PUSH-SILENCE")


def test_silence_is_not_judged_when_deliveries_kept_coming() -> None:
    obs = push_call(finished(), OK, t_result=4.1)
    assert_not_applicable(push_silence_verdicts(obs), "A2A-C-PUSH-SILENCE", "never stopped")


def test_silence_is_not_judged_on_a_streaming_call() -> None:
    obs = push_call(_silent(), OK, t_result=12.6).model_copy(update={"push": False})
    assert_not_applicable(push_silence_verdicts(obs), "A2A-C-PUSH-SILENCE", "not a push call")


# --- the existing requirements judge push calls -------------------------------------------------


def test_deadline_judges_a_push_call_both_ways() -> None:
    on_time = push_call(finished(), OK, t_result=4.1)
    assert_passes(check_a2a_client(on_time), "A2A-C-DEADLINE")
    late = push_call(_silent(), result("timeout", {"s": "one "}, incomplete=True), t_result=36.5)
    assert_fails(check_a2a_client(late), "A2A-C-DEADLINE", "after its first request")


def test_no_resend_judges_a_push_call_both_ways() -> None:
    once = push_call(finished(), OK, t_result=4.1)
    assert_passes(check_a2a_client(once), "A2A-C-NO-RESEND")
    twice = push_call(finished(), OK, t_result=4.1, sends=(0.1, 2.5))
    assert_fails(check_a2a_client(twice), "A2A-C-NO-RESEND", "sent its message 2 times")


# --- fault.fired of the delivery faults ---------------------------------------------------------


def test_delivery_faults_fired_says_when_each_fault_acted() -> None:
    fired = FORGED.model_copy(update={"fault_index": 0})
    obs = push_call(finished(fired), OK, t_result=4.1).model_copy(
        update={
            "push_faults": (
                DeliveryFault(delivery=3, do="wrong_token"),
                DeliveryFault(delivery=9, do="lose"),
                DeliveryFault(delivery=9, do="duplicate", optional=True),
            )
        }
    )
    named = delivery_faults_fired(obs)
    assert [(name, at, optional) for name, at, optional, _ in named] == [
        ("push.faults[0] (delivery 3: wrong_token (failed))", 2.5, False),
        ("push.faults[1] (delivery 9: lose)", None, False),
        ("push.faults[2] (delivery 9: duplicate)", None, True),
    ]
    assert "the task made 5 deliveries" in named[1][3]


# --- one behaviour, one requirement -------------------------------------------------------------


def _broken(obs: A2AClientObservation) -> set[str]:
    return {v.requirement for v in check_a2a_client(obs) if v.outcome.value == "fail"}


def test_a_forged_state_taken_is_push_auth_s_alone() -> None:
    accepted = FORGED.model_copy(update={"receiver_status": 200, "status": 200})
    forged_result = result("failed", {"s": "one "}, message=FORGED_TEXT)
    obs = push_call(finished(accepted), forged_result, t_result=2.6)
    assert "A2A-C-PUSH-AUTH" in _broken(obs)
    assert "A2A-C-STATUS" not in _broken(obs)


def test_a_duplicate_applied_twice_is_push_once_s_alone() -> None:
    obs = push_call(finished(DUP), result("completed", {"s": "one twotwo"}), t_result=4.1)
    assert "A2A-C-PUSH-ONCE" in _broken(obs)
    assert "A2A-C-REASSEMBLY" not in _broken(obs)
