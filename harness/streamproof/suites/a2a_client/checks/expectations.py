"""A client scenario's own ``expect`` block, each entry judged under its own name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamproof.core.requirements import expectation
from streamproof.core.verdicts import Verdict
from streamproof.suites.a2a_client.checks.artifacts import _ArtifactView, _expect_for
from streamproof.suites.a2a_client.checks.turns import _label, _shorten, _status, _Turn, _turns
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.scenario import ResultExpect, canonical_method, ledger_matches

# --- the scenario's own expectations ----------------------------------------------------------


def _expectation(
    name: str,
    problems: Sequence[str],
    ok: str,
    expected: Any,
    observed: Any,
    at: float | None = None,
) -> Verdict:
    return expectation(
        name, not problems, "; ".join(problems) or ok, expected=expected, observed=observed, at=at
    )


def _result_problems(turn: _Turn, expect: ResultExpect) -> list[str]:
    result = turn.result
    if result is None:
        return [f"{_label(turn.run)} printed no readable result"]
    problems: list[str] = []
    if expect.status is not None and expect.status != result.status:
        problems.append(f"{_label(turn.run)} says {result.status!r}, expected {expect.status!r}")
    for aid, wanted in expect.artifacts.items():
        got = result.artifact(aid)
        full = _ArtifactView(turn, aid).full if turn.task is not None else set()
        if wanted == "incomplete" and not result.incomplete:
            problems.append(
                f"{_label(turn.run)}: artifact {aid!r} expected flagged incomplete, and the "
                "result does not say incomplete"
            )
        elif wanted == "complete" and (result.incomplete or got is None or got.text not in full):
            how = (
                "says incomplete"
                if result.incomplete
                else "lacks it"
                if got is None
                else f"has {_shorten(got.text)!r}"
            )
            problems.append(
                f"{_label(turn.run)}: artifact {aid!r} expected complete; the result {how}"
            )
    return problems


def a2a_expectation_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """The scenario's ``expect`` block, each entry under its own name (``expect.ledger``,
    ``expect.tasks_created``, ``expect.result``, ``expect.follow_up``), never under a
    requirement whose rule it does not state. Entries the scenario leaves out give no verdict."""
    out: list[Verdict] = []
    expect = obs.expect
    if expect.ledger is not None:
        methods = [canonical_method(m) for m in obs.ledger.rpc_methods]
        seen = " ".join(methods) or "(no call)"
        wanted = " ".join(expect.ledger)
        bad = [] if ledger_matches(expect.ledger, methods) else [f"the server received {seen}"]
        out.append(_expectation("expect.ledger", bad, f"the server received {seen}", wanted, seen))
    if expect.tasks_created is not None:
        created = len(obs.ledger.tasks)
        bad = [] if created == expect.tasks_created else [f"the server created {created} task(s)"]
        # One too many shows when it is created; too few, at the end of the run.
        extra = sorted(t.t for t in obs.ledger.tasks)[expect.tasks_created :]
        out.append(
            _expectation(
                "expect.tasks_created",
                bad,
                f"{created} task(s)",
                expect.tasks_created,
                created,
                at=extra[0] if extra else None,
            )
        )
    for turn in _turns(obs):
        wanted_result = _expect_for(obs, turn)
        if wanted_result is None:
            continue
        name = "expect.result" if turn.run.turn == 0 else "expect.follow_up"
        out.append(
            _expectation(
                name,
                _result_problems(turn, wanted_result),
                f"{_label(turn.run)}: {_status(turn.run)}",
                wanted_result.model_dump(exclude_defaults=True),
                _status(turn.run),
                at=turn.run.t_result,
            )
        )
    return out
