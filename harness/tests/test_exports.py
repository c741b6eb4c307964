from __future__ import annotations

import harness


def test_all_is_sorted_and_complete() -> None:
    # isort style, as ruff keeps it: CONSTANTS, then Classes, then functions.
    def kind(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert harness.__all__ == sorted(harness.__all__, key=kind)
    assert set(harness.__all__) == set(harness._EXPORTS)


def test_every_export_resolves() -> None:
    for name in harness.__all__:
        assert getattr(harness, name) is not None
