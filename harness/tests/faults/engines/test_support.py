"""An engine's declared support: every plan item named, rejections that name the engine, the
fault and why, and rules on whole faults."""

from __future__ import annotations

import pytest

from streamproof.faults.engines.support import PLAN_ITEMS, EngineSupport, Support, items_of
from streamproof.faults.plan import parse_plan


def _support(**overrides: Support) -> EngineSupport:
    items = {item: Support("exact") for item in PLAN_ITEMS}
    items.update({k.replace("__", "."): v for k, v in overrides.items()})
    return EngineSupport(engine="test", items=items)


def test_every_plan_item_must_be_declared() -> None:
    items = {item: Support("exact") for item in PLAN_ITEMS if item != "do.rst"}
    with pytest.raises(ValueError, match=r"missing \['do.rst'\]"):
        EngineSupport(engine="half", items=items)


def test_anything_but_exact_says_how_or_why() -> None:
    with pytest.raises(ValueError, match="needs a note"):
        Support("rejected")


def test_a_fault_uses_its_match_keys_its_trigger_and_its_action() -> None:
    (fault,) = parse_plan([{"when": {"rpc": "message/stream", "after": "40s"}, "do": "stall"}])
    assert items_of(fault) == ["when.rpc", "when.after", "do.stall"]
    (default,) = parse_plan([{"do": "rst"}])  # the default trigger counts as used
    assert items_of(default) == ["when.on_response_headers", "do.rst"]


def test_rejections_name_the_place_the_engine_the_item_and_why() -> None:
    support = _support(when__rpc=Support("rejected", "it cannot read bodies"))
    plan = parse_plan([{"do": "rst"}, {"when": {"rpc": "tasks/get"}, "do": "fin"}])
    assert support.rejections(plan, "links.a2a") == [
        "links.a2a[1]: engine test cannot do when.rpc: it cannot read bodies"
    ]


def test_a_rule_on_the_whole_fault_comes_first() -> None:
    def no_late_status(fault: object) -> Support | None:
        return Support("rejected", "not this pair")

    support = EngineSupport(
        engine="test",
        items={item: Support("exact") for item in PLAN_ITEMS},
        combinations=(no_late_status,),
    )
    (fault,) = parse_plan([{"when": {"after_event": 2}, "do": "rst"}])
    assert support.rejections((fault,), "links.model") == [
        "links.model[0]: engine test cannot do fault (after_event: 2 -> rst): not this pair"
    ]


def test_approximations_are_listed_with_their_notes() -> None:
    support = _support(do__split=Support("approximate", "no gap between pieces"))
    plan = parse_plan([{"do": {"split": {"pieces": 3, "gap": "5ms"}}}])
    assert support.approximations(plan) == ["[0] do.split: no gap between pieces"]
