"""What each delivery fault does to a delivery (pure)."""

from __future__ import annotations

from streamproof.fakes.a2a.push.plan import Hold, Send, plan_delivery
from streamproof.fakes.a2a.push.script import DeliveryFault


def _faults(*items: dict[str, object]) -> tuple[DeliveryFault, ...]:
    return tuple(DeliveryFault.model_validate(i) for i in items)


def test_without_faults_each_delivery_goes_once() -> None:
    plan = plan_delivery((), 3)
    assert plan.sends == (Send(3),) and plan.hold is None and plan.fired == ()


def test_forged_and_replayed_deliveries_go_first_then_the_delivery_and_its_duplicate() -> None:
    faults = _faults(
        {"delivery": 1, "do": "replay", "before": 3},
        {"delivery": 3, "do": "no_token"},
        {"delivery": 3, "do": "duplicate"},
    )
    plan = plan_delivery(faults, 3)
    assert plan.sends == (
        Send(1, "replay", 0),
        Send(3, "no_token", 1, forged=True),
        Send(3),
        Send(3, "duplicate", 2),
    )
    assert sorted(plan.fired) == [0, 1, 2]
    assert plan_delivery(faults, 2).sends == (Send(2),)


def test_holds_keep_the_delivery_back() -> None:
    for do, until in (("lose", "lost"), ("reorder", "next"), ("stale", "terminal")):
        plan = plan_delivery(_faults({"delivery": 2, "do": do}), 2)
        assert plan.sends == () and plan.hold == Hold(2, until, 0)  # type: ignore[arg-type]
    delayed = plan_delivery(_faults({"delivery": 2, "do": "delay", "by": "4s"}), 2)
    assert delayed.hold == Hold(2, "delay", 0, 4.0)


def test_a_held_delivery_is_not_duplicated_now() -> None:
    faults = _faults({"delivery": 2, "do": "lose"}, {"delivery": 2, "do": "duplicate"})
    plan = plan_delivery(faults, 2)
    assert plan.sends == () and plan.fired == (0,)
