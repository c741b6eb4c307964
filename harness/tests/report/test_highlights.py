"""The report's highlights of an observation and the tails of what the target printed."""

from __future__ import annotations

from streamproof.report.highlights import LOG_LINES, highlights, logs


def test_the_highlights_list_push_deliveries() -> None:
    ledger = {
        "requests": [],
        "deliveries": [
            {"delivery": 1, "ended": "acknowledged"},
            {"delivery": None, "ended": "refused", "fault": "no_token"},
            {"delivery": 2, "ended": "lost", "fault": "lost"},
        ],
    }
    shown = dict(highlights({"ledger": ledger}))
    assert shown["push deliveries (ledger)"] == (
        "#1 acknowledged forged refused [no_token] #2 lost [lost]"
    )


def test_the_logs_are_the_tails_of_what_the_target_and_each_turn_printed() -> None:
    printed = "\n".join(f"line {i}" for i in range(100))
    shown = dict(logs({"target_log": printed, "turns": [{"turn": 1, "stderr_tail": "boom"}]}))
    tail = shown["target output (tail)"].splitlines()
    assert len(tail) == LOG_LINES and tail[-1] == "line 99"
    assert shown["turn 1 stderr (tail)"] == "boom"
