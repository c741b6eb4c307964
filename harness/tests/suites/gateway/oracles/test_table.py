"""The differential as Markdown (table.py): one table per profile with each library's reading
beside ours, then every disagreement, a known one with its reason given once, an unexplained one
marked as such."""

from __future__ import annotations

from harness.tests.suites.gateway.oracles.builders import (
    STARTED,
    VALID,
    ev,
    finding,
    passing,
    report,
    stream,
    verdict,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.oracles.differential import compare
from streamproof.suites.gateway.oracles.mapping import AI, CLIENT, VALIDATE
from streamproof.suites.gateway.oracles.table import differential_table

TRUNCATED = stream(STARTED, ev("TEXT_MESSAGE_START", messageId="m"))


def test_agreement_known_differences_and_an_unexplained_one() -> None:
    agree = compare(VALID, [report(VALIDATE), report(CLIENT)], [*passing(), verdict("GW-X")])
    truncated = [report(VALIDATE, finding("AGUI003", None)), report(CLIENT)]
    ours = passing(**{"GW-STREAM-TERMINAL": Outcome.FAIL})
    known = [compare(TRUNCATED, truncated, ours) for _ in range(2)]
    wrong = compare(VALID, [report(VALIDATE, finding("AGUI001")), report(CLIENT)], passing())
    ui = compare(stream('{"type":"start"}', profile="ai-sdk-ui"), [report(AI)], [])
    text = differential_table([agree, *known, wrong, ui])
    assert (
        "| stream | events | ours (structural) | `ag-ui-validate` | `@ag-ui/client` | agree |"
        in text
    )
    assert (
        "| `s` | 2 | accepts (beyond the comparison, fails GW-X) | accepts | accepts | agree |"
        in text
    )
    assert "AGUI003@end → GW-STREAM-TERMINAL | accepts | 1 known difference(s) |" in text
    assert "| AGUI001@0 → AGUI-RUN-STARTED-FIRST | accepts | **1 unexplained** |" in text
    assert "| stream | events | ours (structural) | `ai` | agree |" in text
    assert text.count("*client has no end-of-stream check*:") == 1  # the reason, once
    assert text.count(": *client has no end-of-stream check*") == 2  # each disagreement
    assert "our AGUI-RUN-STARTED-FIRST is pass: **no listed reason**" in text


def test_no_disagreement_says_so() -> None:
    text = differential_table([compare(VALID, [report(VALIDATE)], passing())])
    assert text.endswith("Disagreements:\n\n- none")
