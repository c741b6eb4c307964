"""BR-RENDER-ONCE and BR-DRAFT-BY-AUTHOR, each both ways."""

from __future__ import annotations

from harness.tests.suites.browser_client.observations import (
    ANSWER,
    WORKED,
    observe,
    outcome,
    screen,
    seed_screens,
)
from streamproof.suites.browser_client.checks.render import (
    draft_by_author_verdicts,
    render_once_verdicts,
)

TWO_AUTHORS = [
    ("delta", {"author": "support", "text": "Asking billing "}),
    ("delta", {"author": "billing", "text": "Refund approved "}),
    ("message", {"author": "support", "text": "Asking billing", "final": False}),
    ("message", {"author": "billing", "text": "Refund approved", "final": True}),
    ("done", {}),
]


def test_the_seeds_reducer_renders_the_answer_once() -> None:
    verdicts = render_once_verdicts(observe())
    assert outcome(verdicts, "BR-RENDER-ONCE") == "pass"


def test_an_answer_shown_twice_for_one_frame_fails_render_once() -> None:
    states = seed_screens(WORKED)
    # After the message: the message and the full draft, gone at the next frame.
    states.insert(6, screen(6, [("support", ANSWER)], [("support", ANSWER)], settled=False))
    verdicts = render_once_verdicts(observe(states=states))
    assert outcome(verdicts, "BR-RENDER-ONCE") == "fail"
    assert "2 times after frame 6" in verdicts[0].message


def test_a_draft_left_beside_its_message_fails_even_when_the_texts_differ() -> None:
    states = seed_screens(WORKED)
    states[6] = screen(6, [("support", ANSWER)], [("support", "Order 1042 shipped on 30")])
    verdicts = render_once_verdicts(observe(states=states))
    assert outcome(verdicts, "BR-RENDER-ONCE") == "fail"
    assert "stayed beside it" in verdicts[0].message


def test_the_same_text_said_twice_may_show_twice() -> None:
    frames = [
        ("message", {"author": "support", "text": "One moment please.", "final": False}),
        ("message", {"author": "billing", "text": "One moment please.", "final": True}),
        ("done", {}),
    ]
    obs = observe(frames, history=())
    assert outcome(render_once_verdicts(obs), "BR-RENDER-ONCE") == "pass"


def test_nothing_said_is_not_applicable() -> None:
    obs = observe([("done", {})], history=())
    assert outcome(render_once_verdicts(obs), "BR-RENDER-ONCE") == "not-applicable"


def test_drafts_keyed_by_author_pass() -> None:
    assert outcome(draft_by_author_verdicts(observe(TWO_AUTHORS)), "BR-DRAFT-BY-AUTHOR") == "pass"


def test_drafts_kept_side_by_side_per_author_pass() -> None:
    states = [
        screen(0),
        screen(1, drafts=[("support", "Asking billing")]),
        screen(2, drafts=[("support", "Asking billing"), ("billing", "Refund approved")]),
    ]
    obs = observe(TWO_AUTHORS, states, reached=2)
    assert outcome(draft_by_author_verdicts(obs), "BR-DRAFT-BY-AUTHOR") == "pass"


def test_one_draft_for_two_authors_fails() -> None:
    states = [
        screen(0),
        screen(1, drafts=[("support", "Asking billing")]),
        screen(2, drafts=[("support", "Asking billing Refund approved")]),
    ]
    verdicts = draft_by_author_verdicts(observe(TWO_AUTHORS, states, reached=2))
    assert outcome(verdicts, "BR-DRAFT-BY-AUTHOR") == "fail"
    assert "billing and support" in verdicts[0].message


def test_a_draft_under_the_wrong_author_fails() -> None:
    states = [screen(0), screen(1, drafts=[("support", "Asking billing")])]
    states.append(screen(2, drafts=[("support", "Refund approved")]))
    verdicts = draft_by_author_verdicts(observe(TWO_AUTHORS, states, reached=2))
    assert outcome(verdicts, "BR-DRAFT-BY-AUTHOR") == "fail"


def test_one_author_is_not_applicable() -> None:
    verdicts = draft_by_author_verdicts(observe())
    assert outcome(verdicts, "BR-DRAFT-BY-AUTHOR") == "not-applicable"
