"""The docs document every target-file key (docs/reference/target-files.md) and every result
field (docs/reference/a2a-client-contract.md): a key added to a model without a line there fails
here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from streamproof.suites.a2a_client.result import ClientResult
from streamproof.suites.a2a_client.target import ClientTarget
from streamproof.suites.gateway.target.config import GatewayTarget

ROOT = Path(__file__).resolve().parents[3]


def _keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        key = prefix + name
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys |= _keys(annotation, key + ".")
        else:
            keys.add(key)
    return keys


def _table_after(heading: str, page: str = "target-files.md") -> set[str]:
    """The backticked keys in the first column of the table that follows ``heading`` on the
    reference page ``page``."""
    text = (ROOT / "docs" / "reference" / page).read_text(encoding="utf-8")
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return {key for row in rows[2:] for key in re.findall(r"`([^`]+)`", row.split("|")[1])}


@pytest.mark.parametrize(
    ("heading", "model"),
    [("## `kind: gateway`", GatewayTarget), ("## `kind: a2a-client`", ClientTarget)],
)
def test_every_target_key_has_a_line(heading: str, model: type[BaseModel]) -> None:
    assert _table_after(heading) == _keys(model)


def test_every_result_field_has_a_line() -> None:
    documented = _table_after("## The client's result line", "a2a-client-contract.md")
    assert documented == {f.alias or name for name, f in ClientResult.model_fields.items()}
