"""Stories more than one check module's tests tell."""

from __future__ import annotations

from harness.tests.suites.a2a_client.observations import (
    CTX,
    TASK,
    Story,
    art,
    result,
    status,
    task_frame,
)


def outlives_deadline(
    *, cancel_at: float | None, status_: str = "timeout", t_result: float = 20.1
) -> Story:
    """A task still working at the deadline (20 s), cancelled at ``cancel_at`` (or never), the
    call's result at ``t_result``."""
    story = Story(deadline=20, idle=8)
    story.created(0.1)
    frames = [task_frame(0.1)]
    for t in (1.1, 5.1, 9.1, 13.1, 17.1):
        story.state(t, "working", "still at it")
        frames.append(status(t, "working", "still at it"))
    story.chunk(4.1, "findings", "Partial. ")
    frames.insert(2, art(4.1, "findings", "Partial. "))
    story.card(0.0)
    story.message(0.1, frames, ended="client_closed", link_end=(20.05, "fin", "client"))
    if cancel_at is not None:
        story.cancel(cancel_at, "working")
        story.state(cancel_at + 0.01, "canceled")
    story.run(result(status_, {"findings": "Partial. "}, incomplete=True), t_result=t_result)
    return story


def follow_up_story(
    task_id: str | None, context_id: str | None, *, new_task: bool = False
) -> Story:
    """A first call that ends input-required, then a follow-up that sends ``task_id`` and
    ``context_id`` and completes (or, with ``new_task``, starts a task of its own)."""
    story = Story(deadline=30, idle=10)
    story.created(0.1)
    story.state(1.0, "input-required", "Which region?")
    story.card(0.0)
    story.message(0.1, (task_frame(0.1), status(1.0, "input-required", "Which region?")))
    story.run(result("input-required", {}), t_result=1.1, t_start=-0.3)
    story.card(2.0)
    if new_task:
        story.created(2.1, task_id="t-9", context_id="c-9")
        story.message(2.1, (task_frame(2.1), status(3.0, "completed")), task_id="t-9")
        story.state(3.0, "completed", task_id="t-9")
    else:
        story.follow_up_event(2.1)
        story.message(
            2.1,
            (status(2.1, "working"), status(3.0, "completed")),
            outcome="continued",
            given_task=task_id,
            context_id=context_id,
        )
        story.state(2.1, "working", turn=1)
        story.state(3.0, "completed", turn=1)
    story.run(
        result("completed", {}, task_id="t-9" if new_task else TASK),
        t_result=3.1,
        t_start=1.8,
        turn=1,
        task_id_given=TASK,
        context_id_given=CTX,
    )
    return story
