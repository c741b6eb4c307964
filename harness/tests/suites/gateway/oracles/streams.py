"""The hand-written AG-UI and AI SDK streams (harness/tests/data/oracles/) and what each oracle
says about them: the record of what each library flags and, as important, does not flag.

Each stream file opens with an SSE comment saying what it is (and, for an invalid one, where it
breaks). ``AG_UI`` and ``AI_SDK`` give, per stream, each oracle's findings as ``(kind, rule,
index)``; an empty tuple means the library accepts the stream. The tests assert these exactly,
and the README's table (harness/streamproof/suites/gateway/oracles/README.md) is
:func:`markdown_table`'s
output, checked by test_readme.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

from streamproof.protocol.sse import decode
from streamproof.suites.gateway.oracles.ag_ui_client import run_ag_ui_client
from streamproof.suites.gateway.oracles.ag_ui_validate import validate_ag_ui
from streamproof.suites.gateway.oracles.ai_sdk import read_ai_sdk_stream
from streamproof.suites.gateway.oracles.finding import OracleReport

DATA: Final = Path(__file__).resolve().parents[3] / "data" / "oracles"

Expected = tuple[tuple[str, str, int | None], ...]
"""An oracle's findings on one stream: ``(kind, rule, index)`` each, in stream order."""

VALIDATE: Final = "ag-ui-validate"
CLIENT: Final = "@ag-ui/client"
AI: Final = "ai"


def _at(kind: str, rule: str, *indices: int | None) -> Expected:
    return tuple((kind, rule, index) for index in indices)


NONE: Final[Expected] = ()

AG_UI: Final[Mapping[str, Mapping[str, Expected]]] = {
    "valid-text": {VALIDATE: NONE, CLIENT: NONE},
    "valid-tool-call": {VALIDATE: NONE, CLIENT: NONE},
    "valid-run-error": {VALIDATE: NONE, CLIENT: NONE},
    "first-not-run-started": {
        VALIDATE: _at("error", "AGUI001", 0),
        CLIENT: _at("error", "AGUIError", 0),
    },
    "content-before-start": {
        VALIDATE: _at("error", "AGUI101", 1),
        CLIENT: _at("error", "AGUIError", 1),
    },
    "second-start-open-id": {
        VALIDATE: _at("error", "AGUI106", 3),
        CLIENT: _at("error", "AGUIError", 3),
    },
    "finished-with-message-open": {
        VALIDATE: _at("error", "AGUI103", 3),
        CLIENT: _at("error", "AGUIError", 3),
    },
    "events-after-run-error": {
        VALIDATE: _at("error", "AGUI004", 2, 3, 4, 5, 6),
        CLIENT: _at("error", "AGUIError", 2),
    },
    "events-after-run-finished": {
        VALIDATE: _at("error", "AGUI004", 7, 8, 9),
        CLIENT: _at("error", "AGUIError", 7),
    },
    "no-terminal-event": {VALIDATE: _at("error", "AGUI003", None), CLIENT: NONE},
    "message-open-at-run-error": {VALIDATE: NONE, CLIENT: NONE},
    "run-id-changes": {VALIDATE: _at("warning", "AGUI008", 6), CLIENT: NONE},
    "tool-args-before-start": {
        VALIDATE: _at("error", "AGUI201", 1),
        CLIENT: _at("error", "AGUIError", 1),
    },
    "tool-call-restarted-while-open": {
        VALIDATE: _at("error", "AGUI205", 3),
        CLIENT: _at("error", "AGUIError", 3),
    },
    "tool-call-id-reused": {
        # After the duplicate start the validator has lost the call, so its args and end
        # count as unstarted too.
        VALIDATE: (("error", "AGUI205", 3), ("error", "AGUI201", 4), ("error", "AGUI202", 5)),
        CLIENT: NONE,
    },
    "tool-result-unknown-call": {VALIDATE: _at("error", "AGUI207", 1), CLIENT: NONE},
    "tool-call-from-partial": {VALIDATE: NONE, CLIENT: NONE},
    "answer-sent-twice": {VALIDATE: NONE, CLIENT: NONE},
    "unknown-event-type": {
        VALIDATE: _at("error", "AGUI503", 2),
        CLIENT: _at("warning", "enforce", 2),
    },
    "unknown-key": {VALIDATE: NONE, CLIENT: _at("warning", "enforce", 2)},
    "missing-field": {VALIDATE: _at("error", "AGUI504", 2), CLIENT: _at("error", "ZodError", 2)},
    "empty-delta": {VALIDATE: _at("warning", "AGUI105", 2), CLIENT: NONE},
    "not-json": {VALIDATE: _at("error", "AGUI502", 1), CLIENT: _at("error", "SyntaxError", 1)},
    "step-finished-never-started": {
        VALIDATE: _at("error", "AGUI006", 5),
        CLIENT: _at("error", "AGUIError", 5),
    },
    "step-started-twice": {
        # The validator counts two steps of that name, so one is left open at RUN_FINISHED.
        VALIDATE: _at("error", "AGUI007", 8),
        CLIENT: _at("error", "AGUIError", 2),
    },
}

_STREAM_ERROR: Final = "AI_UIMessageStreamError"
_SCHEMA_ERROR: Final = "AI_TypeValidationError"

AI_SDK: Final[Mapping[str, Mapping[str, Expected]]] = {
    "valid-text": {AI: NONE},
    "valid-tool-call": {AI: NONE},
    "valid-error": {AI: NONE},
    "delta-never-started": {AI: _at("stream", _STREAM_ERROR, 1)},
    "end-never-started": {AI: _at("stream", _STREAM_ERROR, 1)},
    "delta-after-end": {AI: _at("stream", _STREAM_ERROR, 4)},
    "tool-output-unknown-call": {AI: _at("stream", _STREAM_ERROR, 1)},
    "unknown-type": {AI: _at("schema", _SCHEMA_ERROR, 2)},
    "missing-field": {AI: _at("schema", _SCHEMA_ERROR, 2)},
    "bad-finish-reason": {AI: _at("schema", _SCHEMA_ERROR, 4)},
    "not-json": {AI: _at("schema", "AI_JSONParseError", 1)},
    "unknown-key": {AI: NONE},
    "no-done": {AI: NONE},
    "content-after-done": {AI: NONE},
    "finish-with-part-open": {AI: NONE},
    "answer-sent-twice": {AI: NONE},
}


def path(protocol: str, name: str) -> Path:
    return DATA / protocol / f"{name}.sse"


def payloads(protocol: str, name: str) -> list[str]:
    """The stream's events' data, decoded as a browser would (what the observation holds)."""
    return [event.data for event in decode(path(protocol, name).read_bytes())]


_RUN: Final[Mapping[str, Callable[[Sequence[str]], OracleReport]]] = {
    VALIDATE: validate_ag_ui,
    CLIENT: run_ag_ui_client,
    AI: read_ai_sdk_stream,
}


@functools.cache
def oracle_report(library: str, protocol: str, name: str) -> OracleReport:
    """``library``'s report on the stream, run once per test process (the oracle tests and the
    differential's read the same streams; a Node run takes about half a second)."""
    return _RUN[library](payloads(protocol, name))


def description(protocol: str, name: str) -> str:
    """The stream's opening comment."""
    lines = path(protocol, name).read_text(encoding="utf-8").splitlines()
    return " ".join(line[2:] for line in lines if line.startswith(": "))


def found(report: OracleReport) -> Expected:
    return tuple((f.kind, f.rule, f.index) for f in report.findings)


def _cell(expected: Expected) -> str:
    if not expected:
        return "not flagged"
    shown: list[str] = []
    for kind, rule, index in expected:
        where = "end" if index is None else str(index)
        label = f"{rule} ({kind})" if kind == "warning" else rule
        if shown and shown[-1].startswith(f"{label} @"):
            shown[-1] += f", {where}"
        else:
            shown.append(f"{label} @{where}")
    return "; ".join(shown)


def markdown_table(protocol: str, table: Mapping[str, Mapping[str, Expected]]) -> str:
    """The README's table for one protocol: each stream, what it is, what each library says."""
    oracles: Sequence[str] = list(next(iter(table.values())))
    header = ["stream", "what it is", *(f"`{o}`" for o in oracles)]
    rows = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for name, by_oracle in table.items():
        cells = [f"`{name}`", description(protocol, name), *(_cell(by_oracle[o]) for o in oracles)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
