"""The A2A client scenario's bindings: a pinned one, or one run per binding the target declares
that can carry the scenario's wire, each under its own id; and what a target lacking it skips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from streamproof.suites.a2a_client import suite
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.a2a_client.target import ClientTarget, load_client_target


def scenario(**extra: Any) -> A2AClientScenario:
    return A2AClientScenario.model_validate(
        {
            "id": "a2a_client/x",
            "title": "x",
            "kind": "a2a-client",
            "requirements": ["A2A-C-STATUS"],
            "client": {"deadline": "10s", "idle": "2s"},
            "reply": "hi",
            **extra,
        }
    )


def target(**extra: Any) -> ClientTarget:
    return ClientTarget.model_validate({"command": ["c"], **extra})


def test_a_target_speaks_json_rpc_unless_it_says_more() -> None:
    assert target().bindings == ("jsonrpc",)
    both = target(bindings=["jsonrpc", "rest"], wires=["1.0"])
    assert {"binding jsonrpc", "binding rest", "wire 1.0"} <= both.declared
    assert load_client_target(None).bindings == ("jsonrpc", "rest")  # the reference
    with pytest.raises(ValidationError, match="bindings"):
        target(bindings=["soap"])
    with pytest.raises(ValidationError, match="bindings"):
        target(bindings=[])
    # REST carries the 1.0 wire only: a 0.3-only client declaring it could never run
    with pytest.raises(ValidationError, match=r"bindings rest carry the A2A 1\.0 wire only"):
        target(bindings=["rest"])


def test_one_run_per_binding_that_can_carry_the_wire() -> None:
    on_1_0 = scenario(server={"wire": "1.0"})
    runs = on_1_0.variants(("jsonrpc", "rest", "grpc"))
    assert [(s.id, s.run_binding) for s in runs] == [
        ("a2a_client/x", "jsonrpc"),  # the plain id stays the JSON-RPC run
        ("a2a_client/x[rest]", "rest"),
        ("a2a_client/x[grpc]", "grpc"),
    ]
    assert runs[1].binding == "rest" and runs[0].binding is None
    # REST and gRPC are 1.0 bindings: a scenario written for the 0.3 wire runs on JSON-RPC only
    on_0_3 = scenario(server={"wire": "0.3"})
    assert [s.id for s in on_0_3.variants(("jsonrpc", "rest"))] == ["a2a_client/x"]
    # a target without JSON-RPC gets its own bindings' runs only, or else the plain id skipped
    assert [s.id for s in on_1_0.variants(("rest",))] == ["a2a_client/x[rest]"]
    assert [s.id for s in on_0_3.variants(("rest",))] == ["a2a_client/x"]


def test_a_scenario_that_does_not_write_its_wire_runs_on_rest_at_1_0() -> None:
    """The seed's rules hold on either wire: a REST run of a scenario that leaves
    ``server.wire`` out is on the 1.0 wire, its JSON-RPC run on 0.3 as before."""
    plain = scenario()
    assert plain.lifts and plain.server.wire == "0.3"
    json_rpc, rest = plain.variants(("jsonrpc", "rest"))
    assert (json_rpc.server.wire, rest.server.wire) == ("0.3", "1.0")
    assert rest.id == "a2a_client/x[rest]" and rest.script.server.wire == "1.0"
    assert not scenario(server={"wire": "0.3"}).lifts
    # pinned in the document (explore pins a run this way), the same lift
    pinned = scenario(binding="rest")
    assert pinned.server.wire == "1.0" and pinned.run_binding == "rest"


def test_a_pinned_binding_runs_once_under_its_own_id() -> None:
    pinned = scenario(server={"wire": "both"}, binding="rest")
    assert pinned.variants(("jsonrpc", "rest")) == (pinned,)
    assert pinned.id == "a2a_client/x" and pinned.run_binding == "rest"
    with pytest.raises(ValidationError, match=r"binding rest is an A2A 1\.0 binding"):
        scenario(binding="rest", server={"wire": "0.3"})  # written for the 0.3 wire


def test_a_binding_the_target_lacks_is_a_missing_capability() -> None:
    on_1_0 = scenario(server={"wire": "1.0"})
    json_rpc_only = target(wires=["1.0"]).declared
    rest = on_1_0.variants(("jsonrpc", "rest"))[1]
    assert rest.missing_needs(json_rpc_only) == ["binding rest"]
    assert on_1_0.missing_needs(json_rpc_only) == []
    # a REST run needs the 1.0 wire even when the scenario's server speaks both
    both = scenario(server={"wire": "both"}, binding="rest")
    assert both.missing_needs(frozenset({"binding rest", "wire 0.3"})) == ["wire 1.0"]


def test_the_suite_expands_from_the_runs_target(tmp_path: Path) -> None:
    on_1_0 = scenario(server={"wire": "1.0"})
    assert [s.id for s in suite.variants(on_1_0, None)] == [
        "a2a_client/x",
        "a2a_client/x[rest]",
    ]
    own = tmp_path / "client.yaml"
    own.write_text('kind: a2a-client\ncommand: [c]\nwires: ["1.0"]\n', encoding="utf-8")
    assert [s.id for s in suite.variants(on_1_0, own)] == ["a2a_client/x"]
    other = tmp_path / "gateway.yaml"
    other.write_text("kind: gateway\ncommand: [c]\n", encoding="utf-8")
    assert [s.id for s in suite.variants(on_1_0, other)] == ["a2a_client/x"]
