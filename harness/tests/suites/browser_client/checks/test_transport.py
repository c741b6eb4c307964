"""BR-RECONNECT-HISTORY, BR-ONE-RUN and BR-TRUNCATED-NOT-FINAL, each both ways."""

from __future__ import annotations

from harness.tests.suites.browser_client.observations import (
    PROMPT,
    WORKED,
    observe,
    outcome,
    screen,
    seed_screens,
)
from streamproof.suites.browser_client.checks.transport import (
    one_run_verdicts,
    reconnect_history_verdicts,
    truncated_not_final_verdicts,
)
from streamproof.suites.browser_client.observation import PageRequest

CHAT = PageRequest(t=0.05, method="POST", path="/chat/s", role="chat", status=200)
HISTORY_READ = PageRequest(t=0.6, method="GET", path="/history/s", role="history", status=200)
STORED = (("user", PROMPT), ("support", "Calling lookupOrder"))


def _cut(final_messages: list[tuple[str, str]], drafts: list[tuple[str, str]], *requests):
    """The worked example cut after frame 4; the history holds the user's message only."""
    states = seed_screens(WORKED[:4])
    states.append(screen(4, final_messages, drafts, status="interrupted", t=0.7))
    return observe(
        states=states,
        reached=4,
        requests=[CHAT, *requests],
        history=(("user", PROMPT),),
        stream_end="broken",
        t_stream_end=0.5,
    )


def test_the_seeds_reconnect_passes() -> None:
    obs = _cut([], [], HISTORY_READ)
    assert outcome(reconnect_history_verdicts(obs), "BR-RECONNECT-HISTORY") == "pass"


def test_no_history_read_fails() -> None:
    verdicts = reconnect_history_verdicts(_cut([], []))
    assert outcome(verdicts, "BR-RECONNECT-HISTORY") == "fail"
    assert "never read the history" in verdicts[0].message


def test_a_history_read_too_late_fails() -> None:
    late = PageRequest(t=3.0, method="GET", path="/history/s", role="history", status=200)
    verdicts = reconnect_history_verdicts(_cut([], [], late))
    assert outcome(verdicts, "BR-RECONNECT-HISTORY") == "fail"


def test_a_draft_kept_after_the_reconnect_fails() -> None:
    obs = _cut([], [("support", "Order 1042 shipped")], HISTORY_READ)
    verdicts = reconnect_history_verdicts(obs)
    assert outcome(verdicts, "BR-RECONNECT-HISTORY") == "fail"
    assert "draft" in verdicts[0].message


def test_an_answer_rebuilt_from_deltas_fails() -> None:
    obs = _cut([("support", "Order 1042 shipped on 30 September and")], [], HISTORY_READ)
    verdicts = reconnect_history_verdicts(obs)
    assert outcome(verdicts, "BR-RECONNECT-HISTORY") == "fail"
    assert "does not hold" in verdicts[0].message


def test_a_stream_that_did_not_break_is_not_applicable() -> None:
    verdicts = reconnect_history_verdicts(observe())
    assert outcome(verdicts, "BR-RECONNECT-HISTORY") == "not-applicable"
    module = observe(mode="module", stream_end="broken")
    assert outcome(reconnect_history_verdicts(module), "BR-RECONNECT-HISTORY") == "not-applicable"


def test_one_chat_request_passes_and_two_fail() -> None:
    assert outcome(one_run_verdicts(observe()), "BR-ONE-RUN") == "pass"
    again = PageRequest(t=1.6, method="POST", path="/chat/s", role="chat", status=409)
    verdicts = one_run_verdicts(observe(requests=[CHAT, again]))
    assert outcome(verdicts, "BR-ONE-RUN") == "fail"
    assert "2 times" in verdicts[0].message


def test_no_chat_request_fails_one_run_with_the_reason() -> None:
    verdicts = one_run_verdicts(observe(requests=[]))
    assert outcome(verdicts, "BR-ONE-RUN") == "fail"
    assert "sent no chat request" in verdicts[0].message


def _clean_end(status: str | None, messages: list[tuple[str, str]]):
    frames = WORKED[2:4]
    states = seed_screens(frames)
    states.append(screen(2, messages, [], status=status, t=0.7))
    return observe(
        frames, states, history=(("user", PROMPT),), stream_end="clean", t_stream_end=0.5
    )


def test_a_truncated_stream_shown_interrupted_passes() -> None:
    obs = _clean_end("interrupted", [])
    assert outcome(truncated_not_final_verdicts(obs), "BR-TRUNCATED-NOT-FINAL") == "pass"


def test_a_truncated_stream_shown_as_the_answer_fails() -> None:
    obs = _clean_end("done", [("support", "Order 1042 shipped on 30 September and")])
    verdicts = truncated_not_final_verdicts(obs)
    assert outcome(verdicts, "BR-TRUNCATED-NOT-FINAL") == "fail"
    assert "status reads 'done'" in verdicts[0].message
    assert "shown as a message" in verdicts[0].message


def test_a_terminal_end_is_not_applicable_for_truncation() -> None:
    verdicts = truncated_not_final_verdicts(observe())
    assert outcome(verdicts, "BR-TRUNCATED-NOT-FINAL") == "not-applicable"
