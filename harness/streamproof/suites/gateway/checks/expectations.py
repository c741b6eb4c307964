"""A gateway scenario's own expectations, each judged under its own name.

``expect.frames``, ``expect.history``, ``expect.tool_calls`` and ``expect.model_calls`` are what
one scenario's author wrote down about one run; ``model`` is its script (which agent makes each
call, and that a run that completes used the turns it was given). A mismatch fails the scenario
as that expectation, never under a requirement whose rule it does not break. Expectations the
scenario does not set produce no verdict.
"""

from __future__ import annotations

from collections import Counter

from streamproof.core.patterns import matches
from streamproof.core.requirements import expectation
from streamproof.core.texts import compress
from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.suites.gateway.checks.link_faults import link_faulted_calls
from streamproof.suites.gateway.checks.persistence import history_kinds
from streamproof.suites.gateway.checks.stream import ended_with_done, sequence
from streamproof.suites.gateway.observation import GatewayObservation

__all__ = ["gateway_expectation_verdicts"]


def _verdict(
    name: str, problem: str | None, ok: str, expected: object, observed: object
) -> Verdict:
    return expectation(name, problem is None, problem or ok, expected=expected, observed=observed)


def _unjudged(name: str, outcome: Outcome, reason: str) -> Verdict:
    return Verdict(
        requirement=name, level=Level.MUST, outcome=outcome, message=reason, kind=Kind.EXPECTATION
    )


def _frames(obs: GatewayObservation) -> list[Verdict]:
    pattern = obs.expect.frames
    if pattern is None:
        return []
    names = [f.event for f in obs.frames]
    seen = sequence(obs.frames)
    problem = None if matches(pattern, names) else f"the frames {seen} do not match {pattern!r}"
    return [_verdict("expect.frames", problem, f"frames {seen}", pattern, seen)]


def _history(obs: GatewayObservation) -> list[Verdict]:
    wanted = obs.expect.history
    if wanted is None:
        return []
    name = "expect.history"
    if obs.history_error:
        return [
            _verdict(name, f"the history could not be read: {obs.history_error}", "", wanted, None)
        ]
    if obs.history is None:
        return [_unjudged(name, Outcome.SKIP, "the target declares no history endpoint")]
    kinds = history_kinds(obs.history)
    shown = f"[{compress(kinds, sep=', ')}]"
    if isinstance(wanted, str):
        ok = matches(wanted, kinds)
        expected = wanted
    else:
        ok = kinds == list(wanted)
        expected = f"[{compress(list(wanted), sep=', ')}]"
    problem = None if ok else f"the session holds {shown}, expected {expected}"
    return [_verdict(name, problem, f"the session holds {shown}", expected, shown)]


def _tool_calls(obs: GatewayObservation) -> list[Verdict]:
    wanted = obs.expect.tool_calls
    if wanted is None:
        return []
    ran = Counter(t.tool for t in obs.tool_calls)
    problems = [
        f"{name} ran {ran[name]} time(s), expected {wanted.get(name, 0)}"
        for name in sorted(set(wanted) | set(ran))
        if ran[name] != wanted.get(name, 0)
    ]
    observed = dict(sorted(ran.items()))
    return [
        _verdict(
            "expect.tool_calls",
            "; ".join(problems) or None,
            f"tool executions {observed or 'none'}",
            dict(sorted(wanted.items())),
            observed,
        )
    ]


def _retry_note(obs: GatewayObservation) -> str:
    retries = sum(1 for c in obs.model_calls if c.retry_of is not None)
    return f" ({retries} of them retries)" if retries else ""


def _model_calls(obs: GatewayObservation) -> list[Verdict]:
    wanted = obs.expect.model_calls
    if wanted is None:
        return []
    made = len(obs.model_calls)
    said = f"{made} model call(s){_retry_note(obs)}"
    problem = None if wanted.admits(made) else f"{said} were made, expected {wanted}"
    return [_verdict("expect.model_calls", problem, said, str(wanted), made)]


def _scripted_uses(obs: GatewayObservation) -> int:
    """The calls that used up a turn of the script: a retry answered by the same turn again
    (an error turn repeating for retries) used up nothing."""
    by_index = {c.index: c for c in obs.model_calls}
    return sum(
        1
        for c in obs.model_calls
        if not (
            c.retry_of is not None
            and c.retry_of in by_index
            and c.turn is not None
            and by_index[c.retry_of].turn == c.turn
        )
    )


def _script(obs: GatewayObservation) -> list[Verdict]:
    """Which agent made each scripted call, and whether a completed run used its script."""
    problems: list[str] = []
    for call in obs.model_calls:
        if call.turn is None or call.turn >= len(obs.scripted_agents):
            continue
        wanted = obs.scripted_agents[call.turn]
        if wanted is not None and call.agent is not None and call.agent != wanted:
            problems.append(
                f"model call #{call.index} answered the turn scripted for agent {wanted!r}, but "
                f"{call.agent!r} made it: the hand-over to {wanted!r} did not happen"
            )
    scripted, made = obs.scripted_calls, len(obs.model_calls)
    completed = ended_with_done(obs) and not any(f.event == "error" for f in obs.frames)
    uses = _scripted_uses(obs)
    # A model answer the link kept from the gateway may end the run early (an empty body is
    # a step with no events), so the rest of the script is not owed then.
    kept_back = bool(link_faulted_calls(obs))
    if completed and isinstance(scripted, int) and uses < scripted and not kept_back:
        repeated = f" ({made - uses} of them retries)" if made > uses else ""
        problems.append(
            f"the run completed (done, no error) after {made} model call(s){repeated}, but the "
            f"scenario scripts {scripted}: the agent never asked for the rest"
        )
    names_agents = any(a is not None for a in obs.scripted_agents)
    if not (problems or names_agents or (completed and isinstance(scripted, int))):
        return []  # the script names no agent and the run did not complete: nothing to judge
    agents = compress([c.agent or "?" for c in obs.model_calls]) or "(none)"
    return [
        _verdict(
            "model",
            "; ".join(problems) or None,
            f"{made} model call(s), by {agents}",
            f"{scripted} scripted call(s)",
            f"{made} call(s) by {agents}",
        )
    ]


def gateway_expectation_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """A verdict per expectation the scenario sets (none for those it does not)."""
    return [*_frames(obs), *_history(obs), *_tool_calls(obs), *_model_calls(obs), *_script(obs)]
