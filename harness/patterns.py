"""Patterns over sequences of names: ``tool_call tool_result delta+ message (error|done)``.

A pattern is a space-separated list of terms; a term is a name or ``a|b`` alternatives, with
an optional quantifier ``+``, ``*`` or ``?``; ``(`` ``)`` may wrap alternatives. Matching is
over whole names, never substrings, and covers the whole sequence.
"""

from __future__ import annotations

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
