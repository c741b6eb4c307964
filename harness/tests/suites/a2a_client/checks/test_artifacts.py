"""The artifact checks (checks/artifacts.py) on hand-built observations: A2A-C-ARTIFACTS-COMPLETE,
A2A-C-REASSEMBLY, the recipe's own loss as the SHOULD A2A-C-GAP, and A2A-C-STRUCTURED."""

from __future__ import annotations

import pytest

from harness.tests.suites.a2a_client.observations import (
    S1,
    S2,
    S3,
    SUMMARY,
    Story,
    art,
    assert_fails,
    assert_not_applicable,
    assert_passes,
    judged,
    not_passed,
    plain,
    result,
    stalled_stream,
    status,
    summary_progress,
    task_frame,
    verdict_for,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.a2a_client.checks import (
    artifacts_complete_verdicts,
    check_a2a_client,
    gap_verdicts,
    reassembly_verdicts,
    structured_verdicts,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation


def _silence_with_gap_chunk(result_text: str, *, incomplete: bool = False) -> Story:
    story = Story()
    summary_progress(story, gap_chunk=45.0)  # streamed while the stream was stalled
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    story.resubscribe(
        59.6,
        (
            task_frame(59.6, "working"),
            art(70.1, "summary", S3, append=True, last=True),
            status(78.1, "completed"),
        ),
    )
    story.run(result(artifacts={"summary": result_text}, incomplete=incomplete), t_result=78.2)
    return story


def test_the_snapshot_restores_a_chunk_streamed_in_the_silence() -> None:
    full = S1 + S2 + "Section 2b. " + S3
    assert_passes(
        artifacts_complete_verdicts(_silence_with_gap_chunk(full).build()),
        "A2A-C-ARTIFACTS-COMPLETE",
    )


def test_a_truncated_artifact_reported_complete_fails() -> None:
    obs = _silence_with_gap_chunk(SUMMARY).build()
    assert_fails(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE", "is truncated")
    assert_passes(reassembly_verdicts(obs), "A2A-C-REASSEMBLY")  # a truncation, not a mix-up


def test_a_truncated_artifact_flagged_incomplete_passes() -> None:
    obs = _silence_with_gap_chunk(SUMMARY, incomplete=True).build()
    verdict = assert_passes(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE")
    assert "says incomplete" in verdict.message


def _partial_after_a_stall(status_: str, t_result: float) -> A2AClientObservation:
    """The stream stalls at 40 s and the client never recovers: it holds S1 + S2 of a summary
    the server finished (S3) at 70 s, and reports them without an incomplete flag."""
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story, closed_at=t_result)
    if status_ == "timeout":
        story.cancel(t_result - 0.1, "completed", code=-32002)
    story.run(result(status_, {"summary": S1 + S2}), t_result=t_result)
    return story.build()


@pytest.mark.parametrize(
    ("status_", "t_result"), [("timeout", 90.1), ("error", 80.0), ("failed", 80.0)]
)
def test_a_partial_artifact_without_a_claimed_success_owes_no_incomplete_flag(
    status_: str, t_result: float
) -> None:
    obs = _partial_after_a_stall(status_, t_result)
    assert_not_applicable(
        artifacts_complete_verdicts(obs),
        "A2A-C-ARTIFACTS-COMPLETE",
        f"says {status_!r}, not a success",
    )
    assert_passes(reassembly_verdicts(obs), "A2A-C-REASSEMBLY")  # what it holds is right


def test_a_truncated_artifact_in_a_completed_result_fails_artifacts_complete() -> None:
    obs = _partial_after_a_stall("completed", 80.0)
    assert_fails(
        artifacts_complete_verdicts(obs),
        "A2A-C-ARTIFACTS-COMPLETE",
        "'summary' is truncated",
        "does not say incomplete",
    )


def test_a_chunk_counted_twice_fails_reassembly() -> None:
    story = Story()
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    story.resubscribe(
        59.6,
        (
            task_frame(59.6, "working"),
            art(70.1, "summary", S3, append=True, last=True),
            status(78.1, "completed"),
        ),
    )
    # appended the resubscribe's Task snapshot onto the tasks/get snapshot
    story.run(result(artifacts={"summary": S1 + S2 + S1 + S2 + S3}), t_result=78.2)
    obs = story.build()
    assert_fails(reassembly_verdicts(obs), "A2A-C-REASSEMBLY", "counted twice")
    assert_passes(artifacts_complete_verdicts(obs), "A2A-C-ARTIFACTS-COMPLETE")


def test_replace_against_append() -> None:
    frames = (
        task_frame(0.1),
        art(2.0, "release", "Draft one."),
        art(3.0, "release", " More draft.", append=True),
        art(4.0, "release", "Final text."),
        art(5.0, "release", " The end.", append=True, last=True),
        status(6.0, "completed"),
    )
    good = plain(frames, result(artifacts={"release": "Final text. The end."}))
    verdicts = check_a2a_client(good)
    assert not_passed(verdicts) == []
    assert {"A2A-C-REASSEMBLY", "A2A-C-ARTIFACTS-COMPLETE"} <= set(judged(verdicts))
    all_appended = plain(
        frames, result(artifacts={"release": "Draft one. More draft.Final text. The end."})
    )
    assert_fails(reassembly_verdicts(all_appended), "A2A-C-REASSEMBLY", "'release'")
    invented = plain(frames, result(artifacts={"release": "Final text. The end.", "x": "?"}))
    assert_fails(reassembly_verdicts(invented), "A2A-C-REASSEMBLY", "never streamed")


def test_the_recipe_loses_the_gap_between_snapshot_and_resubscribe_as_a_should() -> None:
    """The recipe's own behaviour: a chunk streamed after its tasks/get and before its
    resubscribe (on a server whose resubscribe starts without a snapshot) is lost. Every MUST
    passes; only the SHOULD A2A-C-GAP says so, non-strict."""
    story = Story()
    summary_progress(story, gap_chunk=59.55)
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    story.resubscribe(
        59.6, (art(70.1, "summary", S3, append=True, last=True), status(78.1, "completed"))
    )
    story.run(result(artifacts={"summary": SUMMARY}), t_result=78.2)
    obs = story.build()
    fine = (Outcome.PASS, Outcome.NOT_APPLICABLE)
    bad = [v for v in check_a2a_client(obs) if v.outcome not in fine]
    assert [v.requirement for v in bad] == ["A2A-C-GAP"]
    assert bad[0].outcome is Outcome.NON_STRICT and "'Section 2b. '" in bad[0].message
    assert "reconnect gap" in verdict_for(check_a2a_client(obs), "A2A-C-ARTIFACTS-COMPLETE").message
    flagged = story.build().model_copy(
        update={"turns": (story.turns[0].model_copy(update={"result": result(incomplete=True)}),)}
    )
    assert_passes(gap_verdicts(flagged), "A2A-C-GAP")


def test_structured_output_parsed_whole_passes_and_a_partial_parse_fails() -> None:
    pieces = ('{"regions": [{"name": "EU"}, ', '{"name": "US"}], ', '"currency": "EUR"}')
    whole = {"regions": [{"name": "EU"}, {"name": "US"}], "currency": "EUR"}
    frames = (
        task_frame(0.1),
        art(2.0, "regions", pieces[0]),
        art(3.0, "regions", pieces[1], append=True),
        art(4.0, "regions", pieces[2], append=True, last=True),
        status(5.0, "completed"),
    )
    text = "".join(pieces)
    good = plain(frames, result(artifacts={"regions": text}, data={"regions": whole}))
    assert_passes(structured_verdicts(good), "A2A-C-STRUCTURED")
    unparsed = plain(frames, result(artifacts={"regions": text}))  # parsing is optional
    assert_passes(structured_verdicts(unparsed), "A2A-C-STRUCTURED")
    wrong = plain(frames, result(artifacts={"regions": text}, data={"regions": {"regions": []}}))
    assert_fails(structured_verdicts(wrong), "A2A-C-STRUCTURED", "not as the whole artifact")
    choked = plain(
        frames,
        result("error", {"regions": pieces[0]}, message="not valid JSON"),
        t_result=2.1,
    )
    assert_fails(structured_verdicts(choked), "A2A-C-STRUCTURED", "a partial chunk was parsed")
