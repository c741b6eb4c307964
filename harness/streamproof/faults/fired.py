"""``fault.fired``: did each fault a scenario planned on a link fire? Pure, for every suite.

A scenario with a fault is built to show how the target copes with it: a proxy that goes quiet,
a reset mid-answer. When the fault never fires (the target bypassed the link, or its trigger
never came) the run exercised nothing of that, and a pass would say otherwise: a gateway that
ignores ``HTTPS_PROXY`` sent its model calls past the proxy whose idle cut the scenario
planned, failed TLS, sent two error frames, and passed ``delta* error+ done?``.

So every fault of a link's plan must fire unless it says ``optional: true``. Each gets one
verdict of kind :attr:`~streamproof.core.verdicts.Kind.FAULT` named ``fault.fired``: pass (it
fired), fail (a required fault that never fired, naming the fault and the link and what the link
saw), or not applicable (an optional one that did not). When a required fault did not fire, what the
scenario is built to test did not happen: the requirements it names that passed, and its own
expectations, say "not applicable" instead, with the reason. A requirement that failed stays
failed: that broken rule was seen, fault or no fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent

__all__ = ["FAULT_FIRED", "NamedFault", "fault_fired_verdicts", "judge_fault_plan"]

FAULT_FIRED = "fault.fired"
"""The name every fault verdict is reported under."""


def _verdict(outcome: Outcome, message: str, *, expected: str, observed: str) -> Verdict:
    return Verdict(
        requirement=FAULT_FIRED,
        level=Level.MUST,
        outcome=outcome,
        message=message if outcome is not Outcome.FAIL else f"{FAULT_FIRED}: {message}",
        expected=expected,
        observed=observed,
        kind=Kind.FAULT,
    )


def _what_the_link_saw(events: Sequence[LinkEvent]) -> str:
    requests = [e for e in events if e.kind == "request"]
    if not requests:
        connections = sum(1 for e in events if e.kind == "connect")
        return (
            "no request crossed the link"
            if not connections
            else f"the link saw {connections} connection(s) but no request"
        )
    shown = ", ".join(
        f"#{e.request} {e.method or '?'} {e.rpc or e.path or '?'}" for e in requests[:3]
    )
    more = f" and {len(requests) - 3} more" if len(requests) > 3 else ""
    return f"{len(requests)} request(s) crossed the link ({shown}{more}), none triggered it"


def fault_fired_verdicts(
    plans: Mapping[str, Sequence[Fault]], events: Mapping[str, Sequence[LinkEvent]]
) -> list[Verdict]:
    """One ``fault.fired`` verdict per fault of every link's plan, in plan order."""
    return [verdict for _, verdict in _judged(plans, events)]


def _judged(
    plans: Mapping[str, Sequence[Fault]], events: Mapping[str, Sequence[LinkEvent]]
) -> list[tuple[str, Verdict]]:
    """Each fault's name (``links.model[0] (idle: 1s -> fin)``) with its verdict."""
    out: list[tuple[str, Verdict]] = []
    for link, plan in plans.items():
        seen = events.get(link, ())
        fired: dict[int, LinkEvent] = {}
        for e in seen:
            if e.kind == "fault" and e.fault is not None:
                fired.setdefault(e.fault.index, e)
        for index, fault in enumerate(plan):
            name = f"links.{link}[{index}] ({fault.describe()})"
            first = fired.get(index)
            if first is not None:
                on = f" on request #{first.request}" if first.request is not None else ""
                out.append(
                    (
                        name,
                        _verdict(
                            Outcome.PASS,
                            f"{name} fired at {first.t:.3f}s{on}",
                            expected="fired",
                            observed=f"fired at {first.t:.3f}s{on}",
                        ),
                    )
                )
                continue
            saw = _what_the_link_saw(seen)
            if fault.optional:
                out.append(
                    (
                        name,
                        _verdict(
                            Outcome.NOT_APPLICABLE,
                            f"{name} is optional and did not fire: {saw}",
                            expected="fired (optional)",
                            observed=saw,
                        ),
                    )
                )
                continue
            out.append(
                (
                    name,
                    _verdict(
                        Outcome.FAIL,
                        f"{name} never fired on the {link} link: {saw}. The run did not "
                        "exercise what the scenario is built for (a target that bypasses the "
                        "link, or a trigger that never came); a fault that need not fire says "
                        "optional: true",
                        expected="fired",
                        observed=saw,
                    ),
                )
            )
    return out


NamedFault = tuple[str, float | None, bool, str]
"""A fault planned outside a link (a push delivery fault): its name, when it fired (None:
never), whether it is optional, and what was seen instead."""


def _named(faults: Iterable[NamedFault]) -> list[tuple[str, Verdict]]:
    out: list[tuple[str, Verdict]] = []
    for name, at, optional, saw in faults:
        if at is not None:
            verdict = _verdict(
                Outcome.PASS, f"{name} fired at {at:.3f}s", expected="fired", observed=f"{at:.3f}s"
            )
        elif optional:
            verdict = _verdict(
                Outcome.NOT_APPLICABLE,
                f"{name} is optional and did not fire: {saw}",
                expected="fired (optional)",
                observed=saw,
            )
        else:
            verdict = _verdict(
                Outcome.FAIL,
                f"{name} never fired: {saw}. The run did not exercise what the scenario is "
                "built for; a fault that need not fire says optional: true",
                expected="fired",
                observed=saw,
            )
        out.append((name, verdict))
    return out


def judge_fault_plan(
    verdicts: Iterable[Verdict],
    plans: Mapping[str, Sequence[Fault]],
    events: Mapping[str, Sequence[LinkEvent]],
    requirements: Iterable[str],
    extra: Iterable[NamedFault] = (),
) -> list[Verdict]:
    """``verdicts`` with the plan's ``fault.fired`` verdicts first, and, when a required fault
    did not fire, the scenario's own ``requirements`` that passed and its expectations turned
    into not applicable, saying which fault did not fire. ``extra``: faults planned outside a
    link, judged the same way."""
    judged = _judged(plans, events) + _named(extra)
    faults = [verdict for _, verdict in judged]
    missed = [name for name, verdict in judged if verdict.outcome is Outcome.FAIL]
    if not missed:
        return [*faults, *verdicts]
    named = set(requirements)
    more = f" (and {len(missed) - 1} more)" if len(missed) > 1 else ""
    reason = (
        f"not judged: the fault {missed[0]}{more} never fired, so this run did not exercise "
        "what the scenario is built to test (see fault.fired)"
    )
    out: list[Verdict] = list(faults)
    for verdict in verdicts:
        dependent = verdict.kind is Kind.EXPECTATION or (
            verdict.kind is Kind.REQUIREMENT
            and verdict.requirement in named
            and verdict.outcome is Outcome.PASS
        )
        if dependent and verdict.outcome in (Outcome.PASS, Outcome.FAIL, Outcome.NON_STRICT):
            verdict = verdict.model_copy(
                update={
                    "outcome": Outcome.NOT_APPLICABLE,
                    "message": reason,
                    "expected": None,
                    "observed": None,
                    "at": None,
                }
            )
        out.append(verdict)
    return out
