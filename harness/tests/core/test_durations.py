from __future__ import annotations

import pytest

from streamproof.core.durations import TimeScale, format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("250ms", 0.25),
        ("40s", 40.0),
        ("1.5m", 90.0),
        ("2h", 7200.0),
        (3, 3.0),
        (0.5, 0.5),
        (" 20 s ", 20.0),
        ("1min", 60.0),
    ],
)
def test_parse(text: object, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["40", "forty seconds", "-1s", "1d", True, None, [1], -2])
def test_parse_rejects(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(bad)


@pytest.mark.parametrize("seconds", [0.0, 0.02, 0.25, 1.0, 40.0, 90.5])
def test_format_round_trips(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds)


def test_time_scale() -> None:
    assert TimeScale(0.1)(40.0) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="positive"):
        TimeScale(0)


def test_a_duration_is_stated_on_both_clocks_unless_they_agree() -> None:
    from streamproof.core.durations import on_both_clocks

    assert on_both_clocks(1.0, 0.1) == "1.00s (10s scenario time)"
    assert on_both_clocks(2.5, 1.0) == "2.50s"
    # a floor raised the real wait above the scaled figure: the scenario's own value is quoted
    assert on_both_clocks(10.0, 0.1, 60.0) == "10.00s (60s scenario time)"
    assert on_both_clocks(6.0, 1.0, 6.0) == "6.00s"


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        *[("20ms", True), ("1.5s", True), (" 2 min ", True), (3, True), (0.25, True)],
        *[("soon", False), ("20", False), (-1, False), (True, False), (None, False)],
    ],
)
def test_the_json_schema_reads_what_parse_duration_reads(value: object, valid: bool) -> None:
    from jsonschema import Draft202012Validator
    from pydantic import TypeAdapter

    from streamproof.core.durations import Duration

    schema = TypeAdapter(Duration).json_schema()
    assert Draft202012Validator(schema).is_valid(value) is valid
    if valid:
        parse_duration(value)
    else:
        with pytest.raises(ValueError):
            parse_duration(value)


def test_the_plugin_names_the_default_time_scale() -> None:
    from pathlib import Path

    from streamproof.core.durations import DEFAULT_TIME_SCALE

    plugin = Path(__file__).resolve().parents[2] / "streamproof" / "plugin" / "options.py"
    assert f"(default {DEFAULT_TIME_SCALE})" in plugin.read_text(encoding="utf-8")
