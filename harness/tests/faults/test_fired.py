"""fault.fired (harness/streamproof/faults/fired.py): each planned fault fired, or the run says it
did not,
and then the scenario's own requirements and expectations that passed are not a pass."""

from __future__ import annotations

from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.faults.fired import FAULT_FIRED, fault_fired_verdicts, judge_fault_plan
from streamproof.faults.plan import parse_plan
from streamproof.faults.records import FaultRef, LinkEvent

PLAN = parse_plan(
    [
        {"when": {"path": "*:streamGenerateContent", "idle": "1s"}, "do": "fin"},
        {"when": {"occurrence": 3}, "do": "rst", "optional": True},
    ]
)


def _event(kind: str, **kw: object) -> LinkEvent:
    return LinkEvent(t=kw.pop("t", 0.5), link="model", connection=0, kind=kind, **kw)  # type: ignore[arg-type]


REQUEST = _event("request", request=0, method="POST", path="/v1/m:streamGenerateContent")
FIRED = _event("fault", request=0, t=1.2, fault=FaultRef(index=0, action="fin"))


def _passed(requirement: str, kind: Kind = Kind.REQUIREMENT) -> Verdict:
    return Verdict(
        requirement=requirement, level=Level.MUST, outcome=Outcome.PASS, message="ok", kind=kind
    )


def test_a_fault_that_fired_passes_and_an_optional_one_need_not() -> None:
    required, optional = fault_fired_verdicts({"model": PLAN}, {"model": (REQUEST, FIRED)})
    assert (required.requirement, required.kind, required.outcome) == (
        FAULT_FIRED,
        Kind.FAULT,
        Outcome.PASS,
    )
    assert required.message == "links.model[0] (idle: 1s -> fin) fired at 1.200s on request #0"
    assert optional.outcome is Outcome.NOT_APPLICABLE
    assert "links.model[1]" in optional.message and "is optional and did not fire" in (
        optional.message
    )


def test_a_required_fault_that_never_fired_fails_naming_the_fault_and_the_link() -> None:
    (verdict, _) = fault_fired_verdicts({"model": PLAN}, {"model": ()})
    assert verdict.outcome is Outcome.FAIL
    assert verdict.message.startswith(
        "fault.fired: links.model[0] (idle: 1s -> fin) never fired on the model link: "
        "no request crossed the link"
    )
    (verdict, _) = fault_fired_verdicts({"model": PLAN}, {"model": (REQUEST,)})
    assert "1 request(s) crossed the link (#0 POST /v1/m:streamGenerateContent)" in (
        verdict.message
    )


def test_when_a_fault_did_not_fire_what_it_was_for_is_not_a_pass() -> None:
    judged = [
        _passed("GW-ERROR-FRAME"),  # the scenario names it: it depended on the fault
        _passed("GW-FRAME-TYPES"),  # judged incidentally: it stands
        Verdict(
            requirement="GW-NO-HALF-RECORD",
            level=Level.MUST,
            outcome=Outcome.FAIL,
            message="GW-NO-HALF-RECORD: a half answer stored",
        ),
        _passed("expect.frames", Kind.EXPECTATION),
    ]
    named = ["GW-ERROR-FRAME", "GW-NO-HALF-RECORD"]
    out = judge_fault_plan(judged, {"model": PLAN}, {"model": (REQUEST,)}, named)
    by = {(v.kind, v.requirement): v for v in out}
    assert out[0].requirement == FAULT_FIRED and out[0].outcome is Outcome.FAIL
    error_frame = by[(Kind.REQUIREMENT, "GW-ERROR-FRAME")]
    assert error_frame.outcome is Outcome.NOT_APPLICABLE
    assert error_frame.message.startswith(
        "not judged: the fault links.model[0] (idle: 1s -> fin) never fired"
    )
    assert by[(Kind.REQUIREMENT, "GW-FRAME-TYPES")].outcome is Outcome.PASS
    assert by[(Kind.REQUIREMENT, "GW-NO-HALF-RECORD")].outcome is Outcome.FAIL  # seen broken
    assert by[(Kind.EXPECTATION, "expect.frames")].outcome is Outcome.NOT_APPLICABLE
    # when every required fault fired, nothing changes but the fault verdicts in front
    fine = judge_fault_plan(judged, {"model": PLAN}, {"model": (REQUEST, FIRED)}, named)
    assert fine[2:] == judged and [v.requirement for v in fine[:2]] == [FAULT_FIRED] * 2


def test_a_scenario_without_faults_gets_no_fault_verdict() -> None:
    judged = [_passed("GW-AUTH")]
    assert judge_fault_plan(judged, {"model": (), "browser": ()}, {}, ["GW-AUTH"]) == judged
