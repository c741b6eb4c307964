"""How :func:`streamproof.explore.explorer.find` ends a search hypothesis did not finish."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from streamproof.explore import explorer as explorer_module
from streamproof.explore.explorer import find


def _hypothesis_raising(make: Callable[[], BaseException]) -> Callable[..., Any]:
    """Stands in for ``given``: the test it makes raises ``make()``."""

    def given(*_: Any, **__: Any) -> Callable[[Any], Callable[[], None]]:
        def wrap(_inner: Any) -> Callable[[], None]:
            def test() -> None:
                raise make()

            return test

        return wrap

    return given


def _interrupted_while_starting() -> BaseException:
    """What hypothesis raises when Ctrl-C lands while it builds its runner: its own assertion
    that the runner exists, with the interrupt as the context."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        try:
            raise AssertionError
        except AssertionError as exc:
            return exc


def _search(monkeypatch: pytest.MonkeyPatch, make: Callable[[], BaseException]) -> None:
    monkeypatch.setattr(explorer_module, "given", _hypothesis_raising(make))
    monkeypatch.setattr(explorer_module, "plans", lambda _space: None)
    find(None, None, lambda test: test, None, ())  # type: ignore[arg-type]


def test_a_ctrl_c_while_hypothesis_starts_is_the_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KeyboardInterrupt):
        _search(monkeypatch, _interrupted_while_starting)


def test_any_other_assertion_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AssertionError):
        _search(monkeypatch, AssertionError)
