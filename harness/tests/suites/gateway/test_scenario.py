"""The gateway scenario's new keys: a model turn's ``retries`` and ``expect.model_calls`` as a
count, a minimum or a range, validated at load with the file, line and field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.cli import main
from streamproof.suites.gateway.scenario import (
    RUNAWAY_MARGIN,
    CallCount,
    GatewayExpect,
    GatewayLimits,
)


@pytest.mark.parametrize(
    ("written", "shown", "admitted", "refused"),
    [
        (2, "2", [2], [1, 3]),
        ("1+", "1+", [1, 5, 50], [0]),
        ("1..5", "1..5", [1, 3, 5], [0, 6]),
        ({"min": 0, "max": 2}, "0..2", [0, 2], [3]),
    ],
)
def test_model_calls_forms(
    written: object, shown: str, admitted: list[int], refused: list[int]
) -> None:
    count = GatewayExpect.model_validate({"model_calls": written}).model_calls
    assert isinstance(count, CallCount) and str(count) == shown
    assert all(count.admits(n) for n in admitted)
    assert not any(count.admits(n) for n in refused)


def test_bad_model_calls_and_retries_are_load_errors_naming_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "id: gateway/x\ntitle: t\nrequirements: [GW-ERROR-FRAME]\n"
        "model: [{chunks: [a], retries: repeat}]\n"
        "request: hi\n"
        "expect: {model_calls: 5..2}\n"
        "---\n"
        "id: gateway/y\ntitle: t\nrequirements: [GW-ERROR-FRAME]\n"
        "model: [{http_error: {code: 503}}]\n"
        "request: hi\n"
        "expect: {model_calls: some}\n"
    )
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:4: model[0]: retries applies to an error turn" in err
    assert f"{bad}:6: expect.model_calls: model_calls: 5..2 is empty" in err
    assert (
        f"{bad}:13: expect.model_calls: model_calls: 'some' is not a count (2), a minimum "
        '("1+") or a range ("1..5")'
    ) in err
    assert "Traceback" not in err


def test_the_fake_model_stops_a_runaway_loop_past_the_scenarios_bound() -> None:
    """A gateway without a budget ends its loop 10 calls past ``limits.model_calls``, under
    ``streamproof run`` and ``streamproof serve`` alike."""
    assert GatewayLimits().runaway_cap == 60
    assert GatewayLimits(model_calls=5).runaway_cap == 5 + RUNAWAY_MARGIN == 15
