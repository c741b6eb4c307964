"""What reached the client (checks/exchanges.py) when a ``corrupt`` fault damaged events on the
link, and the checks that rely on it: a damaged event is not delivered (the client could not
read it), the frames after a malformed one are only readable (the client may have stopped
there), and a chunk a spec decoder dropped silently is one no client can know it missed.
Each case is proven both ways: what the seed's recipe does passes, a real defect still fails
under its own requirement."""

from __future__ import annotations

from harness.tests.suites.a2a_client.observations import (
    CTX,
    TASK,
    Story,
    art,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    not_passed,
    reply,
    result,
    status,
    task_frame,
)
from streamproof.suites.a2a_client.checks import (
    artifacts_complete_verdicts,
    cancel_verdicts,
    check_a2a_client,
    deadline_verdicts,
    direct_message_verdicts,
    early_drop_verdicts,
    interrupted_verdicts,
    reassembly_verdicts,
    recovery_verdicts,
    result_verdicts,
    status_verdicts,
)
from streamproof.suites.a2a_client.checks.exchanges import exchanges
from streamproof.suites.a2a_client.result import ClientFailure

ALTERED = "altered (truncate_json): dispatched with other data"
LOST = "lost (bom): the client's decoder dispatched nothing for it"
C1, C2, C3 = "1. Accounts. ", "2. Laptop. ", "3. Badge."


def _progress(story: Story, done_at: float = 6.0) -> None:
    story.created(0.1)
    story.state(1.0, "working")
    story.chunk(2.0, "checklist", C1)
    story.chunk(3.0, "checklist", C2, append=True)
    story.chunk(4.0, "checklist", C3, append=True, last=True)
    story.state(done_at, "completed")


FRAMES = (
    task_frame(0.1),
    status(1.0, "working"),
    art(2.0, "checklist", C1),
    art(3.0, "checklist", C2, append=True),
    art(4.0, "checklist", C3, append=True, last=True),
    status(6.0, "completed"),
)


# --- corrupt before the task id: the first event unreadable ----------------------------------


def _first_event_corrupted(*, damaged: bool = True, status_: str = "error") -> Story:
    """The issue-14 finding: the link truncates the task snapshot (event 1). The reference
    client cannot parse it, never learns the task id, and fails the call at once (a2a-sdk
    stops reading the stream at a malformed event): no task to cancel, nothing to resend.
    The server's later events still went through the link, intact."""
    story = Story(deadline=40, idle=10)
    _progress(story, done_at=20.0)  # still running when the call ends
    story.card(0.0)
    story.message(
        0.1,
        FRAMES[:2],
        ended="client_closed",
        t_end=1.05,
        link_end=(1.05, "fin", "client"),
        damage={1: ALTERED} if damaged else None,
    )
    story.run(result(status_, {}, task_id=None, context_id=None), t_result=1.1)
    return story


def test_a_damaged_event_is_forwarded_but_not_delivered() -> None:
    stream = next(e for e in exchanges(_first_event_corrupted().build()) if e.op == "stream")
    assert [f.kind for f in stream.forwarded] == ["task", "status-update"]
    assert stream.delivered == ()  # nothing certainly read: it stopped at the malformed one
    assert [f.kind for f in stream.readable] == ["status-update"]  # it may have read on
    assert not stream.knows_task


def test_corrupt_before_the_task_id_passes_the_reference_behaviour() -> None:
    obs = _first_event_corrupted().build()
    assert not_passed(check_a2a_client(obs)) == []
    assert_not_applicable(cancel_verdicts(obs), "A2A-C-CANCEL", "no task outlived")
    assert_not_applicable(recovery_verdicts(obs), "A2A-C-RECOVERY")
    assert_passes(status_verdicts(obs), "A2A-C-STATUS")
    # Undamaged, the same call would have abandoned a task it knew: the rule still holds.
    undamaged = _first_event_corrupted(damaged=False).build()
    assert_fails(cancel_verdicts(undamaged), "A2A-C-CANCEL", "without sending tasks/cancel")


def test_an_early_drop_by_corruption_is_judged_only_when_nothing_readable_came() -> None:
    story = Story(deadline=40, idle=10)
    _progress(story)
    story.card(0.0)
    story.message(
        0.1,
        FRAMES[:1],
        ended="client_closed",
        t_end=0.5,
        link_end=(0.5, "fin", "client"),
        damage={1: ALTERED},
    )
    story.run(result("completed", {}, task_id=None, context_id=None), t_result=0.6)
    assert_fails(early_drop_verdicts(story.build()), "A2A-C-EARLY-DROP", "instead of a failure")
    story.turns[0] = story.turns[0].model_copy(update={"result": result("error", {})})
    assert_passes(early_drop_verdicts(story.build()), "A2A-C-EARLY-DROP")
    # With a readable event after it, the client may have learnt the task there: not judged.
    readable_later = _first_event_corrupted(status_="completed").build()
    assert_not_applicable(early_drop_verdicts(readable_later), "A2A-C-EARLY-DROP")


def test_a_client_that_knew_the_task_and_gave_up_on_a_damaged_event_fails() -> None:
    """The snapshot was read (task id known); an artifact chunk came malformed and the client
    failed the call instead of recovering: "Loud failures reach the streaming error handler:
    [...] a malformed event", and the recovery is tasks/get, or at least tasks/cancel."""
    story = Story(deadline=40, idle=10)
    _progress(story, done_at=20.0)
    story.card(0.0)
    story.message(
        0.1,
        FRAMES[:4],
        ended="client_closed",
        t_end=3.05,
        link_end=(3.05, "fin", "client"),
        damage={4: ALTERED},
    )
    story.run(result("error", {"checklist": C1}), t_result=3.1)
    obs = story.build()
    assert_fails(cancel_verdicts(obs), "A2A-C-CANCEL", "without sending tasks/cancel")


# --- corrupt mid-artifact --------------------------------------------------------------------


def _artifact_chunk_corrupted(text: str, *, recover: bool, damage: str | None = ALTERED) -> Story:
    """Chunk 2 of 3 (event 4) is damaged. The recipe recovers from the malformed event: the
    tasks/get snapshot (with the artifact so far) replaces the buffer, then it resubscribes."""
    story = Story(deadline=40, idle=10)
    _progress(story)
    story.card(0.0)
    if recover:
        story.message(
            0.1,
            FRAMES[:4],
            ended="client_closed",
            t_end=3.05,
            link_end=(3.05, "fin", "client"),
            damage={4: damage} if damage else None,
        )
        story.get(3.1, "working")
        story.resubscribe(3.2, (task_frame(3.2, "working"), *FRAMES[4:]))
    else:  # read on past it
        story.message(0.1, FRAMES, damage={4: damage} if damage else None)
    story.run(result("completed", {"checklist": text}), t_result=6.1)
    return story


def test_corrupt_mid_artifact_recovered_from_the_snapshot_passes() -> None:
    obs = _artifact_chunk_corrupted(C1 + C2 + C3, recover=True).build()
    assert not_passed(check_a2a_client(obs)) == []
    assert_passes(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE")
    assert_passes(recovery_verdicts(obs), "A2A-C-RECOVERY")


def test_a_malformed_chunk_skipped_and_reported_complete_fails() -> None:
    # It read past the malformed chunk without recovering: the result lacks it, says completed.
    obs = _artifact_chunk_corrupted(C1 + C3, recover=False).build()
    assert_fails(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE", "is truncated")


def test_a_chunk_lost_silently_is_no_client_defect() -> None:
    # A BOM on the chunk's only data line: a spec decoder drops it without an error, the stream
    # goes on, and nothing tells the client a chunk existed (the recipe has nothing to recover).
    lost = _artifact_chunk_corrupted(C1 + C3, recover=False, damage=LOST).build()
    verdict = assert_passes(artifacts_complete_verdicts(lost), "A2A-C-ARTIFACTS-COMPLETE")
    assert "removed without an error" in verdict.message
    assert_passes(reassembly_verdicts(lost), "A2A-C-REASSEMBLY")
    assert not_passed(check_a2a_client(lost)) == []
    # The same text with nothing lost on the link is a truncation reported as complete.
    intact = _artifact_chunk_corrupted(C1 + C3, recover=False, damage=None).build()
    assert_fails(artifacts_complete_verdicts(intact), "A2A-C-ARTIFACTS-COMPLETE", "is truncated")
    # And a chunk counted twice is still a reassembly error, lost chunk or not.
    twice = _artifact_chunk_corrupted(C1 + C1 + C3, recover=False, damage=LOST).build()
    assert_fails(reassembly_verdicts(twice), "A2A-C-REASSEMBLY", "counted twice")


# --- a client stopped by the harness before a limit ran out ----------------------------------


def _killed(at: float) -> Story:
    """The stream goes quiet at 1 s (a stall); the client is killed at ``at`` (idle 10 s,
    tolerance 5 s, deadline 40 s), without a result."""
    story = Story(deadline=40, idle=10)
    _progress(story)
    story.card(0.0)
    story.message(
        0.1,
        FRAMES[:2],
        ended="client_closed",
        t_end=at,
        fault=(1.05, "stall"),
        link_end=(at, "fin", "client"),
    )
    hang = ClientFailure(kind="hang", message="the client printed no result; it was killed")
    story.run(None, t_result=None, t_exit=at, failure=hang)
    return story


def test_a_client_killed_before_its_idle_limit_ran_out_is_judged_by_result_only() -> None:
    early = _killed(4.0).build()
    assert_fails(result_verdicts(early), "A2A-C-RESULT", "killed")
    assert_not_applicable(recovery_verdicts(early), "A2A-C-RECOVERY")
    assert_not_applicable(deadline_verdicts(early), "A2A-C-DEADLINE")
    late = _killed(60.0).build()
    assert_fails(recovery_verdicts(late), "A2A-C-RECOVERY", "never recovered")
    assert_fails(deadline_verdicts(late), "A2A-C-DEADLINE", "still running")


def _card_only(t_result: float | None) -> Story:
    """The agent card's GET stalls (the proxy holds it): the call never reaches a task."""
    story = Story(deadline=15, idle=5, tolerance=1)
    story._link_request(
        0.0,
        method="GET",
        path="/.well-known/agent-card.json",
        rpc=None,
        status=None,
        forwarded=(),
        end=None,
        fault=(0.0, "stall"),
        reached=False,
    )
    if t_result is None:
        hang = ClientFailure(kind="hang", message="the client printed no result; it was killed")
        story.run(None, t_result=None, t_exit=40.0, failure=hang)
    else:
        story.run(result("timeout", {}, task_id=None, context_id=None), t_result=t_result)
    return story


def test_a_call_stuck_on_its_agent_card_is_judged_by_its_deadline() -> None:
    ends = _card_only(15.1).build()
    assert_passes(deadline_verdicts(ends), "A2A-C-DEADLINE")
    assert not_passed(check_a2a_client(ends)) == []
    hangs = _card_only(None).build()
    assert_fails(deadline_verdicts(hangs), "A2A-C-DEADLINE", "still running")
    late = _card_only(30.0).build()
    assert_fails(deadline_verdicts(late), "A2A-C-DEADLINE", "ended 30.00s")


# --- the frame that ends the turn, damaged ---------------------------------------------------


def _damaged_reply(*, damaged: bool) -> Story:
    story = Story(deadline=30, idle=10)
    story.card(0.0)
    story.message(
        0.1,
        (reply(1.0, "Hello there"),),
        task_id=None,
        outcome="reply",
        damage={1: ALTERED} if damaged else None,
    )
    story.run(result("error", {}, task_id=None, context_id=None), t_result=1.1)
    return story


def test_a_direct_reply_the_client_could_not_read_is_not_held_against_it() -> None:
    # The recipe: a malformed event is a loud failure, and with no task id the call fails.
    obs = _damaged_reply(damaged=True).build(reply_text="Hello there")
    assert_not_applicable(direct_message_verdicts(obs), "A2A-C-DIRECT-MESSAGE")
    assert not_passed(check_a2a_client(obs)) == []
    intact = _damaged_reply(damaged=False).build(reply_text="Hello there")
    assert_fails(direct_message_verdicts(intact), "A2A-C-DIRECT-MESSAGE", "'error'")


def _damaged_interruption(*, knew: bool, status_: str) -> Story:
    story = Story(deadline=30, idle=10)
    story.created(0.1)
    story.state(1.0, "input-required", "Which region?")
    story.card(0.0)
    story.message(
        0.1,
        (task_frame(0.1), status(1.0, "input-required", "Which region?")),
        damage={2: ALTERED} if knew else {1: ALTERED, 2: ALTERED},
    )
    ids = (TASK, CTX) if knew else (None, None)
    story.run(result(status_, {}, task_id=ids[0], context_id=ids[1]), t_result=1.1)
    return story


def test_an_interruption_the_client_could_not_read_without_a_task_id_is_not_judged() -> None:
    blind = _damaged_interruption(knew=False, status_="error").build()
    assert_not_applicable(interrupted_verdicts(blind), "A2A-C-INTERRUPTED")
    # Knowing the task, the recipe's recovery (tasks/get) shows input-required: still owed.
    knew = _damaged_interruption(knew=True, status_="error").build()
    assert_fails(interrupted_verdicts(knew), "A2A-C-INTERRUPTED", "'error'")


# --- a quiet stream before the first event, and the deadline ---------------------------------


def _quiet_before_the_first_event(*, idle: float, t_result: float) -> Story:
    """The stream opens and nothing comes (a proxy holds it); the deadline is 20 s."""
    story = Story(deadline=20, idle=idle, tolerance=1)
    story.created(0.1)
    story.card(0.0)
    story.message(
        0.1,
        (task_frame(0.1),),
        forwarded=0,
        ended="client_closed",
        t_end=t_result,
        fault=(0.1, "stall"),
        link_end=(t_result, "fin", "client"),
    )
    story.run(result("timeout", {}, task_id=None, context_id=None), t_result=t_result)
    return story


def test_a_timeout_before_any_event_is_fine_when_no_watchdog_could_fire_first() -> None:
    # Idle limit 30 s, deadline 20 s: the recipe's watchdog cannot call the stream dropped in
    # time, so the deadline's timeout is what the recipe gives.
    late_watchdog = _quiet_before_the_first_event(idle=30, t_result=20.1).build()
    assert_passes(early_drop_verdicts(late_watchdog), "A2A-C-EARLY-DROP")
    # Idle limit 5 s: the watchdog was due at 5 s; waiting for the deadline is the defect.
    waited = _quiet_before_the_first_event(idle=5, t_result=20.1).build()
    assert_fails(early_drop_verdicts(waited), "A2A-C-EARLY-DROP", "'timeout' instead of a failure")
