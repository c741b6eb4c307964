"""How ``--bug`` reaches a target: the names it lists, and the check a run makes."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from streamproof.targets.bugs import BugNames, bugs_need_bug_env, check_bug
from streamproof.targets.errors import TargetConfigError


class _Listed(BaseModel):
    bugs: BugNames = ()


def test_names_are_kept_in_order() -> None:
    assert _Listed(bugs=("no-dispose", "leak-tool-payload")).bugs == (
        "no-dispose",
        "leak-tool-payload",
    )


@pytest.mark.parametrize(
    ("names", "message"),
    [(("a", "b", "a"), "a: listed more than once"), (("a", " "), "a mutant name is empty")],
)
def test_bad_lists_are_refused(names: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _Listed(bugs=names)


def test_listed_bugs_need_a_bug_env() -> None:
    with pytest.raises(ValueError, match="set bug_env too"):
        bugs_need_bug_env(("a",), None)
    bugs_need_bug_env(("a",), "BUG")
    bugs_need_bug_env((), None)


def test_a_run_bug_must_reach_the_target() -> None:
    with pytest.raises(TargetConfigError, match="target 'gw' declares no bug_env"):
        check_bug("gw", None, (), "no-dispose")
    with pytest.raises(TargetConfigError, match="has no such mutant; its bugs: a, b"):
        check_bug("gw", "BUG", ("a", "b"), "no-dispose")
    check_bug("gw", "BUG", ("a", "b"), "a")
    check_bug("gw", "BUG", (), "any-bundled-name")  # no list: the bundled reference's names
