"""The engines' declarations: complete, honest where the field's facts are known, and the
docs' table (docs/reference/faults.md) drawn from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamproof.faults.engines import ENGINES, EngineUnavailable, engine_support, open_engine
from streamproof.faults.engines.catalog import TABLE_END, TABLE_START, engines_table
from streamproof.faults.plan import parse_plan

ROOT = Path(__file__).resolve().parents[4]


def test_the_docs_table_is_the_catalogs() -> None:
    page = (ROOT / "docs" / "reference" / "faults.md").read_text(encoding="utf-8")
    start = page.index(TABLE_START) + len(TABLE_START)
    end = page.index(TABLE_END)
    assert page[start:end].strip() == engines_table(), (
        "docs/reference/faults.md's engine table is stale: regenerate it with "
        "scripts/regen-docs-tables"
    )


def test_the_inline_engine_does_every_item_and_says_where_it_approximates() -> None:
    inline = engine_support("inline")
    fits = {item: s.fit for item, s in inline.items.items()}
    assert set(fits.values()) <= {"exact", "approximate"}
    assert [item for item, fit in fits.items() if fit == "approximate"] == ["do.refuse"]


@pytest.mark.parametrize(
    ("engine", "fault", "why"),
    [
        ("toxiproxy", {"do": {"status": 502}}, "cannot answer an HTTP status"),
        ("toxiproxy", {"when": {"rpc": "message/stream"}, "do": "rst"}, "every connection"),
        ("toxiproxy", {"when": {"after_event": 3}, "do": "end_clean"}, "only cut or hold"),
        ("mitmproxy", {"do": "refuse"}, "always accepts a connection"),
        ("mitmproxy", {"when": {"after_event": 1}, "do": {"drip": "1s"}}, "synchronous"),
    ],
)
def test_what_an_engine_cannot_do_is_rejected_with_its_reason(
    engine: str, fault: dict[str, object], why: str
) -> None:
    problems = engine_support(engine).rejections(parse_plan([fault]), "links.a2a")
    assert problems and all(
        p.startswith(f"links.a2a[0]: engine {engine} cannot do") for p in problems
    )
    assert any(why in p for p in problems), problems


def test_every_engine_is_declared_and_an_unknown_one_is_named() -> None:
    assert [engine_support(name).engine for name in ENGINES] == list(ENGINES)
    with pytest.raises(KeyError, match="unknown engine 'squid'; engines are inline, "):
        engine_support("squid")


def test_open_engine_opens_inline_and_says_when_an_engine_cannot_run_here() -> None:
    assert open_engine("inline").name == "inline"
    for name in ENGINES:
        try:
            engine = open_engine(name)
        except EngineUnavailable as exc:
            assert name in str(exc)  # says which engine and what is missing
        else:
            assert engine.name == name
