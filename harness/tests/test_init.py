from __future__ import annotations

import streamproof


def test_all_is_sorted_and_complete() -> None:
    # isort style, as ruff keeps it: CONSTANTS, then Classes, then functions.
    def kind(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert streamproof.__all__ == sorted(streamproof.__all__, key=kind)
    assert set(streamproof.__all__) == set(streamproof._EXPORTS)


def test_every_export_resolves() -> None:
    for name in streamproof.__all__:
        assert getattr(streamproof, name) is not None
