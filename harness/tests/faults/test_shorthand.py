"""The ``--fault`` shorthand of ``streamproof proxy``: words that map one to one onto the plan's
keys, validated by the plan's own parser, every problem quoting the text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, given
from hypothesis import strategies as st

from streamproof.faults.plan import PlanError, parse_plan
from streamproof.faults.shorthand import (
    ShorthandError,
    format_fault,
    parse_fault,
    parse_faults,
    shorthand_data,
)

ROOT = Path(__file__).resolve().parents[3]

EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("after 40s: stall", {"when": {"after": "40s"}, "do": "stall"}),
    (
        "rpc message/stream after 40s: stall",
        {"when": {"rpc": "message/stream", "after": "40s"}, "do": "stall"},
    ),
    ("after_event 3: rst", {"when": {"after_event": 3}, "do": "rst"}),
    (
        "method POST path /chat/* occurrence 1 after_event 2: fin",
        {
            "when": {"method": "POST", "path": "/chat/*", "occurrence": 1, "after_event": 2},
            "do": "fin",
        },
    ),
    ("on_request: status 502", {"when": {"on_request": True}, "do": {"status": 502}}),
    ("idle 20s: end_clean", {"when": {"idle": "20s"}, "do": "end_clean"}),
    ("after 5s: stall for 10s", {"when": {"after": "5s"}, "do": {"stall": {"for": "10s"}}}),
    ("stall 10s", {"do": {"stall": {"for": "10s"}}}),
    ("stall", {"do": "stall"}),
    ("delay 2s", {"do": {"delay": "2s"}}),
    (
        "on_response_headers: delay 2s",
        {"when": {"on_response_headers": True}, "do": {"delay": "2s"}},
    ),
    ("drip 500ms", {"do": {"drip": "500ms"}}),
    ("split 3 5ms", {"do": {"split": {"pieces": 3, "gap": "5ms"}}}),
    ("split gap 20ms pieces 4", {"do": {"split": {"gap": "20ms", "pieces": 4}}}),
    ("split", {"do": {"split": {}}}),
    ("corrupt truncate_json", {"do": {"corrupt": "truncate_json"}}),
    ("after_bytes 1024: fin", {"when": {"after_bytes": 1024}, "do": "fin"}),
    ("on_request: refuse", {"when": {"on_request": True}, "do": "refuse"}),
    ("occurrence 1,3: rst", {"when": {"occurrence": [1, 3]}, "do": "rst"}),
    # a colon inside a word is part of it; only a word's last colon ends the trigger
    (
        "path *:streamGenerateContent occurrence 2 after_event 2: rst",
        {
            "when": {"path": "*:streamGenerateContent", "occurrence": 2, "after_event": 2},
            "do": "rst",
        },
    ),
    # the separator may stand alone, and the when part may be empty
    ("after_event 3 : rst", {"when": {"after_event": 3}, "do": "rst"}),
    (": rst", {"do": "rst"}),
    # keys written the YAML way
    ("after: 40s: stall", {"when": {"after": "40s"}, "do": "stall"}),
    ("delay: 2s", {"do": {"delay": "2s"}}),
    ("on_request: delay: 2s", {"when": {"on_request": True}, "do": {"delay": "2s"}}),
    # a quoted value keeps its spaces
    (
        'on_request: status 503 body "<h1>down for maintenance</h1>" content_type text/html',
        {
            "when": {"on_request": True},
            "do": {
                "status": {
                    "code": 503,
                    "body": "<h1>down for maintenance</h1>",
                    "content_type": "text/html",
                }
            },
        },
    ),
]


@pytest.mark.parametrize(("text", "data"), EXAMPLES, ids=[t for t, _ in EXAMPLES])
def test_the_words_are_the_plan_item(text: str, data: dict[str, Any]) -> None:
    assert shorthand_data(text) == data
    assert parse_fault(text) == parse_plan([data])[0]


@pytest.mark.parametrize(("text", "data"), EXAMPLES, ids=[t for t, _ in EXAMPLES])
def test_a_fault_written_back_as_words_reads_as_the_same_fault(
    text: str, data: dict[str, Any]
) -> None:
    fault = parse_fault(text)
    assert parse_fault(format_fault(fault)) == fault


def test_several_faults_keep_their_order() -> None:
    data, faults = parse_faults(["after_event 2: rst", "on_request: status 502"])
    assert data == [
        {"when": {"after_event": 2}, "do": "rst"},
        {"when": {"on_request": True}, "do": {"status": 502}},
    ]
    assert [f.action for f in faults] == ["rst", "status"]


def _bundled_plan_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for file in sorted((ROOT / "scenarios").rglob("*.yaml")):
        for doc in yaml.safe_load_all(file.read_text(encoding="utf-8")):
            links = doc.get("links", {}) if isinstance(doc, dict) else {}
            for name, plan in links.items():
                if name not in ("engine", "forward"):  # which engine, which links: not plans
                    items += plan
    return items


def test_every_fault_of_the_bundled_scenarios_can_be_written_as_words() -> None:
    items = _bundled_plan_items()
    assert len(items) >= 10  # the suites use the plan; the test must not pass on nothing
    for fault in parse_plan(items):
        words = format_fault(fault)
        assert parse_fault(words) == fault, words


_durations = st.sampled_from(["0s", "250ms", "2s", "40s", "1.5m"])
_when = st.fixed_dictionaries(
    {},
    optional={
        "method": st.sampled_from(["GET", "POST"]),
        "path": st.sampled_from(["/", "/chat/*", "*:streamGenerateContent", "/a b"]),
        "rpc": st.sampled_from(["message/stream", "tasks/resubscribe"]),
        "occurrence": st.one_of(
            st.integers(1, 4), st.lists(st.integers(1, 4), min_size=2, max_size=3, unique=True)
        ),
    },
)
_trigger = st.one_of(
    st.just({}),
    st.sampled_from([{"on_request": True}, {"on_response_headers": True}]),
    st.builds(lambda n: {"after_event": n}, st.integers(0, 50)),
    st.builds(lambda n: {"after_bytes": n}, st.integers(0, 5000)),
    st.builds(lambda d: {"after": d}, _durations),
    st.builds(lambda d: {"idle": d}, _durations),
)
_do = st.one_of(
    st.sampled_from(["stall", "end_clean", "fin", "rst", "refuse", "split"]),
    st.builds(lambda c: {"status": c}, st.sampled_from([200, 204, 429, 502, 503])),
    st.builds(
        lambda c, b: {"status": {"code": c, "body": b, "content_type": "application/json"}},
        st.sampled_from([500, 502]),
        st.sampled_from(['{"error": "busy"}', "it's down"]),
    ),
    st.builds(lambda d: {"delay": d}, _durations),
    st.builds(lambda d: {"drip": d}, _durations),
    st.builds(lambda d: {"stall": {"for": d}}, _durations),
    st.builds(lambda n, g: {"split": {"pieces": n, "gap": g}}, st.integers(2, 5), _durations),
    st.builds(
        lambda k: {"corrupt": k},
        st.sampled_from(["drop_blank_line", "truncate_json", "cr_only", "bom"]),
    ),
)


@given(_when, _trigger, _do)
def test_any_valid_plan_item_survives_words_and_back(
    match: dict[str, Any], trigger: dict[str, Any], do: Any
) -> None:
    when = {**match, **trigger}
    item = {"when": when, "do": do} if when else {"do": do}
    try:
        (fault,) = parse_plan([item])
    except PlanError:
        assume(False)
        return
    assert parse_fault(format_fault(fault)) == fault


PROBLEMS: list[tuple[str, str]] = [
    ("aftr 40s: stall", "unknown word 'aftr' before the ':' (did you mean 'after'?)"),
    ("after_events 3: rst", "(did you mean 'after_event'?)"),
    ("after 40s: stal", "unknown action 'stal' (did you mean 'stall'?)"),
    ("after 40s stall", "a ':' must end the trigger, before the action; write 'after 40s: stall'"),
    ("stall: after 4s", "stall takes nothing (forever) or a duration, e.g. stall for 10s"),
    ("after 4s: after_event 3", "'after_event' is a trigger or match key: it goes before the ':'"),
    ("rst: after 4s", "rst takes no argument, got 'after 4s'"),
    ("after_event three: rst", "after_event takes a whole number of events, e.g. after_event 3"),
    ("occurrence first: rst", "occurrence takes a whole number of requests"),
    ("after: stall", "after needs a value, e.g. after 40s"),
    ("after 4s after 5s: rst", "after is given twice"),
    ("after 40x: stall", "when.after: '40x' is not a duration"),
    ("after 4s idle 2s: stall", "when: when has 2 triggers (after, idle)"),
    ("after 4s: status 502", "do: status cannot fire on when.after"),
    ("on_request: drip 1s", "do: drip cannot fire on when.on_request"),
    ("method P0ST: rst", "when.method: method must be an HTTP method"),
    ("corrupt bogus", "do.corrupt: Input should be 'drop_blank_line'"),
    ("split 1", "do.split.pieces: Input should be greater than or equal to 2"),
    ("split 3 5ms 7", "split takes at most a number of pieces and a gap"),
    ("split pieces 3 gaps 5ms", "split has no 'gaps' (did you mean 'gap'?)"),
    ("status", "status needs a code, e.g. status 502"),
    ("status 5o2", "status takes an HTTP status code, e.g. status 502, not '5o2'"),
    ("status 502 body", "status: 'body' needs a value"),
    ('status 502 body "down', 'a " quote is not closed'),
    ("delay", "delay takes one value, e.g. delay 2s"),
    ("", "empty; write e.g. 'after 40s: stall'"),
    ("after 4s:", "no action after the ':'"),
]


@pytest.mark.parametrize(("text", "problem"), PROBLEMS, ids=[t or "(empty)" for t, _ in PROBLEMS])
def test_every_problem_quotes_the_text_and_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ShorthandError) as caught:
        parse_fault(text)
    message = str(caught.value)
    assert message.startswith(f"--fault {text!r}: "), message
    assert problem in message
    assert caught.value.text == text


def test_the_docs_table_of_words_says_what_they_mean() -> None:
    page = (ROOT / "docs" / "reference" / "faults.md").read_text(encoding="utf-8")
    table = page.split("| words | plan item |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.strip("|").split("|") for line in table.splitlines()]
    assert len(rows) >= 5
    for words, item in rows:
        text = words.strip().strip("`")
        assert shorthand_data(text) == yaml.safe_load(item.strip().strip("`")), text
