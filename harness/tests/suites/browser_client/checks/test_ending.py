"""BR-DRAFT-CLEARED, BR-FAILED-SHOWN, BR-TOOL-STATUS and BR-EVERY-MESSAGE, each both ways."""

from __future__ import annotations

from harness.tests.suites.browser_client.observations import (
    ANSWER,
    WORKED,
    observe,
    outcome,
    screen,
    seed_screens,
)
from streamproof.suites.browser_client.checks.ending import (
    draft_cleared_verdicts,
    every_message_verdicts,
    failed_shown_verdicts,
    tool_status_verdicts,
)

ERROR = [
    ("delta", {"author": "support", "text": "Order 1042 shipped "}),
    ("error", {"retryable": True}),
]
MULTI = [
    ("message", {"author": "support", "text": "Let me pass you to billing.", "final": False}),
    ("tool_call", {"names": ["transfer_to_agent"]}),
    ("message", {"author": "billing", "text": "Checking the charges.", "final": False}),
    ("message", {"author": "billing", "text": "The second charge is refunded.", "final": True}),
    ("done", {}),
]


def test_the_seeds_reducer_clears_the_draft() -> None:
    assert outcome(draft_cleared_verdicts(observe(ERROR)), "BR-DRAFT-CLEARED") == "pass"
    assert outcome(draft_cleared_verdicts(observe()), "BR-DRAFT-CLEARED") == "pass"


def test_a_half_sentence_left_after_an_error_fails() -> None:
    states = seed_screens(ERROR)
    states[2] = screen(2, drafts=[("support", "Order 1042 shipped")], status="error")
    verdicts = draft_cleared_verdicts(observe(ERROR, states))
    assert outcome(verdicts, "BR-DRAFT-CLEARED") == "fail"
    assert "error frame 2" in verdicts[0].message


def test_a_draft_left_after_a_tool_call_fails() -> None:
    frames = [("delta", {"author": "support", "text": "Let me look "}), *WORKED]
    states = seed_screens(frames)
    states[2] = screen(2, drafts=[("support", "Let me look")], status="Calling lookupOrder")
    assert outcome(draft_cleared_verdicts(observe(frames, states)), "BR-DRAFT-CLEARED") == "fail"


def test_an_error_shown_by_the_status_or_the_indicator_passes() -> None:
    assert outcome(failed_shown_verdicts(observe(ERROR)), "BR-FAILED-SHOWN") == "pass"
    states = seed_screens(ERROR)
    states[2] = screen(2, status="The run failed")
    assert outcome(failed_shown_verdicts(observe(ERROR, states)), "BR-FAILED-SHOWN") == "pass"


def test_an_error_not_shown_fails() -> None:
    states = seed_screens(ERROR)
    states[2] = screen(2, status=None)
    assert outcome(failed_shown_verdicts(observe(ERROR, states)), "BR-FAILED-SHOWN") == "fail"


def test_an_error_answer_to_the_chat_request_must_show() -> None:
    frames = [("done", {})]
    shown = observe(frames, [screen(0, status="error")], reached=0, stream_end="status")
    hidden = observe(frames, [screen(0)], reached=0, stream_end="status")
    assert outcome(failed_shown_verdicts(shown), "BR-FAILED-SHOWN") == "pass"
    assert outcome(failed_shown_verdicts(hidden), "BR-FAILED-SHOWN") == "fail"


def test_a_run_that_did_not_fail_is_not_applicable() -> None:
    assert outcome(failed_shown_verdicts(observe()), "BR-FAILED-SHOWN") == "not-applicable"


def test_the_tool_named_in_the_status_passes_and_a_silent_status_does_not() -> None:
    assert outcome(tool_status_verdicts(observe()), "BR-TOOL-STATUS") == "pass"
    states = seed_screens(WORKED)
    states[1] = screen(1, status="Working")
    verdicts = tool_status_verdicts(observe(states=states))
    assert outcome(verdicts, "BR-TOOL-STATUS") == "non-strict"  # a SHOULD


def test_no_status_element_is_not_applicable() -> None:
    verdicts = tool_status_verdicts(observe(has_status=False))
    assert outcome(verdicts, "BR-TOOL-STATUS") == "not-applicable"


def test_every_message_final_or_not_kept_in_order_passes() -> None:
    assert outcome(every_message_verdicts(observe(MULTI)), "BR-EVERY-MESSAGE") == "pass"


def test_only_the_final_message_shown_fails() -> None:
    states = seed_screens(MULTI)
    states[-1] = screen(5, [("billing", "The second charge is refunded.")], status="done")
    verdicts = every_message_verdicts(observe(MULTI, states))
    assert outcome(verdicts, "BR-EVERY-MESSAGE") == "fail"
    assert "not on screen" in verdicts[0].message


def test_messages_out_of_order_or_under_another_author_fail() -> None:
    states = seed_screens(MULTI)
    said = [(d["author"], d["text"]) for k, d in MULTI if k == "message"]
    states[-1] = screen(5, [said[1], said[0], said[2]], status="done")
    assert outcome(every_message_verdicts(observe(MULTI, states)), "BR-EVERY-MESSAGE") == "fail"
    states[-1] = screen(5, [("support", t) for _, t in said], status="done")
    assert outcome(every_message_verdicts(observe(MULTI, states)), "BR-EVERY-MESSAGE") == "fail"


def test_a_run_without_done_is_not_applicable_for_every_message() -> None:
    obs = observe(WORKED[:-1])
    assert outcome(every_message_verdicts(obs), "BR-EVERY-MESSAGE") == "not-applicable"
    assert ANSWER in str(obs.frames[-1].data)
