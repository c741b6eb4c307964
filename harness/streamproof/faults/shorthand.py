"""The ``--fault`` shorthand: one fault of a plan on one command-line argument.

``streamproof proxy --fault "rpc message/stream after 40s: stall"`` means the plan item
``{when: {rpc: message/stream, after: 40s}, do: stall}``. The shorthand is the plan's own
vocabulary (:mod:`streamproof.faults.plan`) written as words, one to one, so whatever
docs/reference/faults.md says
about a plan key holds for its word, and every fault it reads is validated by
:func:`~streamproof.faults.plan.parse_plan` like a scenario's::

    fault   := [when ":"] action
    when    := (match | trigger)*           in any order, each key at most once
    match   := "method" METHOD | "path" GLOB | "rpc" NAME | "occurrence" N[,N...]
    trigger := "on_request" | "on_response_headers" | "after_event" N | "after_bytes" N
             | "after" DURATION | "idle" DURATION
    action  := "status" CODE ["body" TEXT] ["content_type" TYPE]
             | "delay" DURATION | "drip" DURATION
             | "split" [PIECES [GAP]] | "split" ["pieces" N] ["gap" DURATION]
             | "corrupt" (drop_blank_line | truncate_json | cr_only | bom)
             | "stall" ["for"] [DURATION] | "end_clean" | "fin" | "rst" | "refuse"

Words are separated by spaces; a value holding spaces is quoted (``body "<h1>bad gateway</h1>"``).
The ``when`` part ends at the first unquoted word that ends in ``:`` (``40s:``) or is a lone
``:``; a colon inside a word is part of it (``path *:streamGenerateContent``). Written without
a ``when`` part, the fault has the plan's default trigger (``rst`` alone: on the response
headers). A key written the YAML way (``after: 40s: stall``, ``delay: 2s``) is read as the key.

Examples and their plan items::

    after 40s: stall                  {when: {after: 40s}, do: stall}
    after_event 3: rst                {when: {after_event: 3}, do: rst}
    method POST path /chat/* occurrence 1 after_event 2: fin
    on_request: status 502            {when: {on_request: true}, do: {status: 502}}
    idle 20s: end_clean               {when: {idle: 20s}, do: end_clean}
    after 5s: stall for 10s           {when: {after: 5s}, do: {stall: {for: 10s}}}
    delay 2s                          {do: {delay: 2s}}
    split 3 5ms                       {do: {split: {pieces: 3, gap: 5ms}}}
    corrupt truncate_json             {do: {corrupt: truncate_json}}

Pure: text in, YAML-shaped data and :class:`~streamproof.faults.plan.Fault` out; every problem is a
:class:`ShorthandError` that quotes the ``--fault`` text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from streamproof.core.durations import format_duration
from streamproof.faults.plan import ACTIONS, Fault, PlanError, parse_plan

__all__ = [
    "ShorthandError",
    "format_fault",
    "parse_fault",
    "parse_faults",
    "shorthand_data",
]

_MATCH_KEYS: Final = ("method", "path", "rpc", "occurrence")
_VALUE_TRIGGERS: Final = ("after_event", "after_bytes", "after", "idle")
_FLAG_TRIGGERS: Final = ("on_request", "on_response_headers")
_WHEN_WORDS: Final = (*_MATCH_KEYS, *_VALUE_TRIGGERS, *_FLAG_TRIGGERS)
_TAKES_VALUE: Final = frozenset((*_MATCH_KEYS, *_VALUE_TRIGGERS))
_COUNTS: Final = frozenset({"after_event", "after_bytes"})
_NO_ARGUMENT: Final = frozenset({"end_clean", "fin", "rst", "refuse"})
_EXAMPLE: Final = {
    "method": "method POST",
    "path": "path /chat/*",
    "rpc": "rpc message/stream",
    "occurrence": "occurrence 1",
    "after_event": "after_event 3",
    "after_bytes": "after_bytes 1024",
    "after": "after 40s",
    "idle": "idle 20s",
    "status": "status 502",
    "delay": "delay 2s",
    "drip": "drip 500ms",
    "split": "split 3 5ms",
    "corrupt": "corrupt truncate_json",
    "stall": "stall for 10s",
}
_WHOLE_NUMBER = re.compile(r"^\d+$")


class ShorthandError(ValueError):
    """A ``--fault`` text that is not a fault: ``text`` as given, ``problem`` what is wrong."""

    def __init__(self, text: str, problem: str) -> None:
        super().__init__(f"--fault {text!r}: {problem}")
        self.text = text
        self.problem = problem


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    quoted: bool = False


def _words(text: str) -> list[_Word]:
    """Split on spaces; ``"..."`` or ``'...'`` makes one word of what it holds."""
    words: list[_Word] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        if text[i] in "\"'":
            quote = text[i]
            end = text.find(quote, i + 1)
            if end < 0:
                raise ValueError(f"a {quote} quote is not closed")
            words.append(_Word(text[i + 1 : end], quoted=True))
            i = end + 1
            continue
        start = i
        while i < n and not text[i].isspace():
            i += 1
        words.append(_Word(text[start:i]))
    return words


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _split(words: list[_Word]) -> tuple[list[_Word], list[_Word]] | None:
    """The ``when`` words and the action words, or ``None`` when no ``:`` separates them."""
    for i, word in enumerate(words):
        if word.quoted or not word.text.endswith(":"):
            continue
        stem = word.text[:-1]
        if stem in ACTIONS:  # ``delay: 2s``: the action written the YAML way
            return words[:i], [_Word(stem), *words[i + 1 :]]
        if stem in _TAKES_VALUE and i + 1 < len(words) and _key(words[i + 1]) not in ACTIONS:
            continue  # ``after: 40s``: a key written the YAML way, not the separator
        when = words[:i]
        if stem:
            when.append(_Word(stem))
        return when, words[i + 1 :]
    return None


def _key(word: _Word) -> str:
    return word.text if word.quoted else word.text.removesuffix(":")


def _whole_number(key: str, value: str, what: str) -> int:
    if not _WHOLE_NUMBER.match(value):
        raise ValueError(
            f"{key} takes a whole number of {what}, e.g. {_EXAMPLE[key]}, not {value!r}"
        )
    return int(value)


def _when(words: list[_Word]) -> dict[str, Any]:
    when: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word = words[i]
        key = _key(word)
        if key not in _WHEN_WORDS or word.quoted:
            if key in ACTIONS:
                raise ValueError(
                    f"{key!r} is an action: it goes after the ':' that ends the trigger"
                )
            raise ValueError(
                f"unknown word {key!r} before the ':'{_suggest(key, _WHEN_WORDS)}; there go "
                f"the match keys ({', '.join(_MATCH_KEYS)}) and at most one trigger "
                f"({', '.join((*_FLAG_TRIGGERS, *_VALUE_TRIGGERS))})"
            )
        if key in when:
            raise ValueError(f"{key} is given twice")
        if key in _FLAG_TRIGGERS:
            when[key] = True
            i += 1
            continue
        if i + 1 >= len(words):
            raise ValueError(f"{key} needs a value, e.g. {_EXAMPLE[key]}")
        value = words[i + 1].text
        if key in _COUNTS:
            when[key] = _whole_number(key, value, "events" if key == "after_event" else "bytes")
        elif key == "occurrence":
            parts = value.split(",")
            counts = [_whole_number(key, p.strip(), "requests") for p in parts]
            when[key] = counts[0] if len(counts) == 1 else counts
        else:
            when[key] = value
        i += 2
    return when


def _action(words: list[_Word]) -> Any:
    if not words:
        raise ValueError(f"no action after the ':'; actions are {', '.join(ACTIONS)}")
    name = _key(words[0])
    args = [w.text for w in words[1:]]
    if name not in ACTIONS or words[0].quoted:
        if name in _WHEN_WORDS:
            raise ValueError(
                f"{name!r} is a trigger or match key: it goes before the ':' "
                f"(e.g. '{_EXAMPLE.get(name, name)}: stall')"
            )
        raise ValueError(
            f"unknown action {name!r}{_suggest(name, ACTIONS)}; actions are {', '.join(ACTIONS)}"
        )
    if name in _NO_ARGUMENT:
        if args:
            raise ValueError(f"{name} takes no argument, got {' '.join(args)!r}")
        return name
    if name in ("delay", "drip", "corrupt"):
        if len(args) != 1:
            raise ValueError(f"{name} takes one value, e.g. {_EXAMPLE[name]}")
        return {name: args[0]}
    if name == "stall":
        rest = args[1:] if args[:1] == ["for"] else args
        if not rest and not args:
            return "stall"
        if len(rest) != 1:
            raise ValueError("stall takes nothing (forever) or a duration, e.g. stall for 10s")
        return {"stall": {"for": rest[0]}}
    if name == "split":
        return {"split": _split_args(args)}
    return {"status": _status_args(args)}


def _named(args: Sequence[str], keys: Sequence[str], action: str) -> dict[str, str]:
    """``key value`` pairs in any order, each key at most once."""
    out: dict[str, str] = {}
    if len(args) % 2:
        raise ValueError(f"{action}: {args[-1]!r} needs a value")
    for key, value in zip(args[::2], args[1::2], strict=True):
        key = key.removesuffix(":")
        if key not in keys:
            raise ValueError(
                f"{action} has no {key!r}{_suggest(key, keys)}; it takes {', '.join(keys)}"
            )
        if key in out:
            raise ValueError(f"{action}: {key} is given twice")
        out[key] = value
    return out


def _split_args(args: Sequence[str]) -> dict[str, Any]:
    if args and args[0].removesuffix(":") in ("pieces", "gap"):
        named = _named(args, ("pieces", "gap"), "split")
    else:
        if len(args) > 2:
            raise ValueError("split takes at most a number of pieces and a gap, e.g. split 3 5ms")
        named = dict(zip(("pieces", "gap"), args, strict=False))
    out: dict[str, Any] = {}
    if "pieces" in named:
        out["pieces"] = _whole_number_arg("split", named["pieces"], "a whole number of pieces")
    if "gap" in named:
        out["gap"] = named["gap"]
    return out


def _whole_number_arg(action: str, value: str, what: str) -> int:
    if not _WHOLE_NUMBER.match(value):
        raise ValueError(f"{action} takes {what}, e.g. {_EXAMPLE[action]}, not {value!r}")
    return int(value)


def _status_args(args: Sequence[str]) -> Any:
    if not args:
        raise ValueError("status needs a code, e.g. status 502")
    code = _whole_number_arg("status", args[0], "an HTTP status code")
    named = _named(args[1:], ("body", "content_type"), "status")
    return {"code": code, **named} if named else code


def shorthand_data(text: str) -> dict[str, Any]:
    """The plan item ``text`` stands for, as YAML-shaped data (not yet validated)."""
    try:
        words = _words(text)
        if not words:
            raise ValueError(
                f"empty; write e.g. 'after 40s: stall' (actions: {', '.join(ACTIONS)})"
            )
        parts = _split(words)
        if parts is None:
            first = _key(words[0])
            if first in _WHEN_WORDS and not words[0].quoted:
                action_at = next(
                    (i for i, w in enumerate(words) if _key(w) in ACTIONS and not w.quoted), None
                )
                fix = (
                    f"; write '{' '.join(_key(w) for w in words[:action_at])}: "
                    f"{' '.join(w.text for w in words[action_at:])}'"
                    if action_at
                    else ""
                )
                raise ValueError(f"a ':' must end the trigger, before the action{fix}")
            when_words: list[_Word] = []
            action_words = words
        else:
            when_words, action_words = parts
        when = _when(when_words)
        do = _action(action_words)
    except ValueError as exc:
        raise ShorthandError(text, str(exc)) from None
    return {"when": when, "do": do} if when else {"do": do}


def parse_fault(text: str) -> Fault:
    """The validated fault ``text`` stands for; raises :class:`ShorthandError`."""
    data = shorthand_data(text)
    try:
        (fault,) = parse_plan([data])
    except PlanError as exc:
        field = exc.field.removeprefix("[0]").removeprefix(".")
        raise ShorthandError(text, f"{field}: {exc.problem}" if field else exc.problem) from None
    return fault


def parse_faults(texts: Sequence[str]) -> tuple[list[dict[str, Any]], tuple[Fault, ...]]:
    """Several ``--fault`` texts, in plan order: their YAML-shaped data and the plan."""
    return [shorthand_data(t) for t in texts], tuple(parse_fault(t) for t in texts)


# --- back to words -----------------------------------------------------------------------------


def _quoted(value: str) -> str:
    if value and not any(c.isspace() or c in "\"'" for c in value) and not value.endswith(":"):
        return value
    return f"'{value}'" if '"' in value else f'"{value}"'


def format_fault(fault: Fault) -> str:
    """``fault`` in the shorthand (what :func:`parse_fault` reads back as the same fault)."""
    words: list[str] = []
    when = fault.when
    if when.method is not None:
        words += ["method", when.method]
    if when.path is not None:
        words += ["path", _quoted(when.path)]
    if when.rpc is not None:
        words += ["rpc", _quoted(when.rpc)]
    if when.occurrence is not None:
        occurrence = when.occurrence
        counts = (occurrence,) if isinstance(occurrence, int) else occurrence
        words += ["occurrence", ",".join(str(n) for n in counts)]
    for trigger in when.triggers_given():
        value = getattr(when, trigger)
        if value is True:
            words.append(trigger)
        elif trigger in _COUNTS:
            words += [trigger, str(value)]
        else:
            words += [trigger, format_duration(value)]
    return f"{' '.join(words)}: {_format_do(fault)}" if words else _format_do(fault)


def _format_do(fault: Fault) -> str:
    do = fault.do
    name = do.name
    if do.status is not None:
        out = f"status {do.status.code}"
        if do.status.body is not None:
            out += f" body {_quoted(do.status.body)}"
        if do.status.content_type != "text/html":
            out += f" content_type {_quoted(do.status.content_type)}"
        return out
    if do.delay is not None:
        return f"delay {format_duration(do.delay)}"
    if do.drip is not None:
        return f"drip {format_duration(do.drip)}"
    if do.split is not None:
        return f"split {do.split.pieces} {format_duration(do.split.gap)}"
    if do.corrupt is not None:
        return f"corrupt {do.corrupt}"
    if do.stall is not None and do.stall.for_ is not None:
        return f"stall for {format_duration(do.stall.for_)}"
    return name
