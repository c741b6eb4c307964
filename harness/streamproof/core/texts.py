"""Text helpers every suite's checks share: whitespace folding, short quoting, compressed
sequences. Core: no suite, no I/O."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["TIMES", "compress", "short", "squash"]


def repeated(text: str, unit: str) -> int:
    """How many times ``text`` is ``unit`` said over and over, whitespace aside (0: it is not;
    1: it is ``unit`` once). A message holding an answer twice is a double render, which the
    rendering rule judges; the rules that compare a message with its answer read it as the
    answer."""
    whole, part = squash(text), squash(unit)
    if not part or len(whole) % len(part):
        return 0
    times = len(whole) // len(part)
    return times if whole == part * times else 0


def squash(text: str) -> str:
    """``text`` with all whitespace removed.

    The seed: the settled text "may differ from the concatenated deltas in whitespace or chunk
    boundaries", so text comparisons between deltas, messages and the model use this form.
    """
    return "".join(text.split())


def short(text: str, limit: int = 60) -> str:
    """A quoted, shortened rendering of ``text`` for messages."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)


TIMES = "\u00d7"
"""The multiplication sign of ``delta×3``."""  # noqa: RUF001


def compress(tokens: Sequence[str], sep: str = " ", limit: int = 24) -> str:
    """``tokens`` joined by ``sep`` with repeats counted: ``delta×3``, and a repeated group of
    up to four tokens as ``(tool_call tool_result)×20``; at most ``limit`` items are shown."""  # noqa: RUF002
    items: list[str] = []
    i = 0
    while i < len(tokens):
        best_period, best_count = 1, 1
        for period in range(1, 5):
            unit = list(tokens[i : i + period])
            if len(unit) < period:
                break
            count = 1
            while list(tokens[i + count * period : i + (count + 1) * period]) == unit:
                count += 1
            if count > 1 and count * period > best_count * best_period:
                best_period, best_count = period, count
        unit = list(tokens[i : i + best_period])
        text = unit[0] if best_period == 1 else f"({sep.join(unit)})"
        items.append(text if best_count == 1 else f"{text}{TIMES}{best_count}")
        i += best_period * best_count
    if len(items) > limit:
        half = limit // 2
        items = [*items[:half], f"… {len(items) - 2 * half} more …", *items[-half:]]
    return sep.join(items)
