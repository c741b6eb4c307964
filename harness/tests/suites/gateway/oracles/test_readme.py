"""The oracles' README shows, for every hand-written stream, what each library flags: the tables
are streams.markdown_table's output over the record the oracle tests assert, so they cannot
drift from what the libraries do. The differential's two tables (finding -> requirement, the
known differences) are table.py's output over the tables the differential uses."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from harness.tests.suites.gateway.oracles.streams import (
    AG_UI,
    AI_SDK,
    DATA,
    Expected,
    markdown_table,
)
from streamproof.suites.gateway.oracles.table import known_differences_table, mapping_table

README = (
    Path(__file__).resolve().parents[4]
    / "streamproof"
    / "suites"
    / "gateway"
    / "oracles"
    / "README.md"
)


@pytest.mark.parametrize(("protocol", "table"), [("ag-ui", AG_UI), ("ai-sdk", AI_SDK)])
def test_the_readme_has_the_table(
    protocol: str, table: Mapping[str, Mapping[str, Expected]]
) -> None:
    expected = markdown_table(protocol, table)
    assert expected in README.read_text(encoding="utf-8"), (
        f"update the {protocol} table in {README.name} to:\n{expected}"
    )


@pytest.mark.parametrize(("protocol", "table"), [("ag-ui", AG_UI), ("ai-sdk", AI_SDK)])
def test_every_stream_file_is_recorded(
    protocol: str, table: Mapping[str, Mapping[str, Expected]]
) -> None:
    assert {p.stem for p in (DATA / protocol).glob("*.sse")} == set(table)


@pytest.mark.parametrize("table", [mapping_table, known_differences_table])
def test_the_readme_has_the_differentials_tables(table: Callable[[], str]) -> None:
    assert table() in README.read_text(encoding="utf-8"), (
        f"update the table in {README.name} to:\n{table()}"
    )
