"""Which engine carries out each link of a scenario, and what happens when one cannot."""

from __future__ import annotations

import pytest

from streamproof.core.capabilities import ScenarioSkipped
from streamproof.faults.engines.pool import EnginePool
from streamproof.faults.plan import parse_plan

STREAM_STALL = parse_plan([{"when": {"rpc": "message/stream", "after": "40s"}, "do": "stall"}])


def test_a_link_the_scenario_names_keeps_its_engine_the_others_take_the_runs() -> None:
    pool = EnginePool("mitmproxy")
    chosen, problems = pool.choose({"browser": (), "model": ()}, [("model", "inline")])
    assert chosen == {"browser": "mitmproxy", "model": "inline"} and problems == []


def test_the_runs_engine_says_why_it_cannot_do_a_plan() -> None:
    chosen, problems = EnginePool("toxiproxy").choose({"a2a": STREAM_STALL}, [])
    assert chosen == {"a2a": "toxiproxy"}
    assert problems == [
        "links.a2a[0]: engine toxiproxy cannot do when.rpc: toxiproxy applies a toxic to every "
        "connection of a proxy and cannot tell one HTTP request from another"
    ]


def test_a_plan_the_scenario_gave_its_own_engine_is_not_judged_again() -> None:
    # (a scenario's own choice was judged when it loaded)
    _, problems = EnginePool("toxiproxy").choose({"a2a": STREAM_STALL}, [("a2a", "inline")])
    assert problems == []


def test_the_default_is_inline() -> None:
    assert EnginePool().default == "inline" == EnginePool(None).default


async def test_an_engine_this_machine_cannot_run_skips_the_scenario_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from streamproof.faults.engines import EngineUnavailable

    def unavailable(name: str) -> object:
        raise EngineUnavailable(f"{name}: not built (run scripts/bootstrap)")

    monkeypatch.setattr("streamproof.faults.engines.pool.open_engine", unavailable)
    pool = EnginePool()
    with pytest.raises(ScenarioSkipped, match=r"needs engine toxiproxy: toxiproxy: not built"):
        await pool.ready(["toxiproxy"])
    await pool.close()


async def test_engines_start_once_and_close_together() -> None:
    pool = EnginePool()
    first = await pool.get("inline")
    assert await pool.get("inline") is first
    await pool.close()
