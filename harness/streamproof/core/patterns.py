"""Patterns over sequences of names: ``tool_call tool_result delta+ message (error|done)``.

A pattern is a space-separated list of terms; a term is a name or ``a|b`` alternatives, with
an optional quantifier ``+``, ``*`` or ``?``; ``(`` ``)`` may wrap alternatives. Matching is
over whole names, never substrings, and covers the whole sequence.

Which names are legal is the user's business (a suite's frame types, history kinds):
:func:`check_names` rejects a name outside them with the nearest legal one, so that a typo is a
load error and never a pattern that cannot match; :func:`json_schema_pattern` is the same rule
as a regular expression for a JSON Schema.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from functools import lru_cache

_NAMES = r"[a-z_]+(?:\|[a-z_]+)*"
_TERM = re.compile(rf"^(?:\(({_NAMES})\)|({_NAMES}))([+*?]?)$")


@lru_cache(maxsize=256)
def compile_frame_pattern(pattern: str) -> re.Pattern[str]:
    """A regex over ``" ".join(names) + " "``; raises ValueError naming the bad term."""
    parts: list[str] = []
    terms = pattern.split()
    if not terms:
        raise ValueError("the pattern is empty")
    for term in terms:
        match = _TERM.match(term)
        if match is None:
            raise ValueError(
                f"bad term {term!r} in pattern {pattern!r}: write names, 'a|b' alternatives "
                "and an optional + * ? quantifier"
            )
        grouped, bare, quantifier = match.groups()
        names = grouped or bare
        alternatives = "|".join(re.escape(n) for n in names.split("|"))
        parts.append(f"(?:(?:{alternatives}) ){quantifier}")
    return re.compile("".join(parts))


def matches(pattern: str, names: Sequence[str]) -> bool:
    return compile_frame_pattern(pattern).fullmatch("".join(f"{n} " for n in names)) is not None


def pattern_names(pattern: str) -> list[str]:
    """The names ``pattern`` mentions, in order, each once (ValueError for a malformed one)."""
    compile_frame_pattern(pattern)
    names: list[str] = []
    for term in pattern.split():
        for name in term.strip("()+*?").split("|"):
            if name not in names:
                names.append(name)
    return names


def check_names(pattern: str, allowed: Sequence[str], what: str) -> None:
    """Raise ValueError naming every name of ``pattern`` that is not in ``allowed``, with the
    nearest allowed one; ``what`` names the vocabulary (``frame type``)."""
    unknown = [name for name in pattern_names(pattern) if name not in allowed]
    if not unknown:
        return
    said = []
    for name in unknown:
        close = difflib.get_close_matches(name, allowed, n=1)
        said.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    plural = "s" if len(unknown) > 1 else ""
    raise ValueError(
        f"unknown {what}{plural} {', '.join(said)} in {pattern!r}; {what}s are {', '.join(allowed)}"
    )


def json_schema_pattern(allowed: Sequence[str]) -> str:
    """A regular expression (JSON Schema ``pattern``) for the patterns over ``allowed``."""
    name = "(?:" + "|".join(re.escape(n) for n in allowed) + ")"
    names = rf"{name}(?:\|{name})*"
    term = rf"(?:\({names}\)|{names})[+*?]?"
    return rf"^\s*{term}(?:\s+{term})*\s*$"
