"""Canned SSE streams (``fixtures/``): the framing of a fixture file and its recorded timing.

A fixture is a response body exactly as the wire carried it, plus timing comments. Pure: the
bytes come in, the events go out; reading the file is the scenario loader's business (it hands
a :class:`FixtureSource` to the scenario models through pydantic's validation context).

The format (documented for users in ``fixtures/README.md``):

* The file is an SSE body: blocks of lines, each block ended by a blank line. Line ends are
  kept as written (CRLF, LF or CR), and every byte of a block is replayed as it is.
* A line ``: at <duration>`` (exactly: colon, one space, ``at``, one space, a duration such as
  ``0s``, ``12.5s`` or ``350ms``, nothing else) is a *timing comment*. It is never sent. It
  stamps the event it sits in (or the next one, when it stands alone before it) with the time,
  counted from the moment the response headers went out, at which the event's first byte was
  written. An event without a stamp is written right after the previous one. Times must never
  go backwards.
* Any other comment line (``: ping``) is part of the wire and is replayed.
* The body ends after the last blank line; bytes after it (an event without its blank line)
  are an error, since a replayer could not tell a cut stream from a careless file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from streamproof.core.durations import parse_duration

__all__ = [
    "FIXTURE_CONTEXT_KEY",
    "TIMING_COMMENT",
    "FixtureEvent",
    "FixtureProblem",
    "FixtureSource",
    "event_delays",
    "parse_fixture",
    "read_with",
    "timing_comment",
]

FIXTURE_CONTEXT_KEY = "streamproof_fixtures"
"""The key of the :class:`FixtureSource` in a pydantic validation context."""

FixtureSource = Callable[[str], tuple[str, bytes]]
"""Resolves a fixture path as a scenario writes it to (the path to show in errors, the file's
bytes); raises ValueError with a readable reason when it cannot."""

TIMING_COMMENT = re.compile(rb"^: at (\d+(?:\.\d+)?(?:ms|s))$")
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)")


class FixtureProblem(ValueError):
    """A fixture that cannot be replayed: ``<file>: event N (line L): problem``."""

    def __init__(
        self, file: str, problem: str, *, event: int | None = None, line: int | None = None
    ):
        self.file, self.event, self.line, self.problem = file, event, line, problem
        where = file
        if event is not None:
            where += f": event {event}"
            if line is not None:
                where += f" (line {line})"
        elif line is not None:
            where += f": line {line}"
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class FixtureEvent:
    """One block of a fixture: what is written to the wire, and where it came from."""

    number: int
    """1-based, counting every block of the file."""
    line: int
    """1-based line of the block's first line in the file."""
    at: float | None
    """The recorded time (seconds from the response's start), if the block was stamped."""
    raw: bytes
    """The bytes to write: the block's lines (timing comments removed) and its blank line."""
    fields: tuple[tuple[str, str], ...]
    """The block's field lines, ``(name, value)``, as the SSE grammar splits them."""
    comments: tuple[str, ...]
    """The block's comment lines that are sent (without the leading colon)."""

    @property
    def data_lines(self) -> tuple[str, ...]:
        return tuple(value for name, value in self.fields if name == "data")

    def problem(self, file: str, problem: str) -> FixtureProblem:
        return FixtureProblem(file, problem, event=self.number, line=self.line)


def timing_comment(seconds: float, line_end: str = "\n") -> bytes:
    """The timing comment for ``seconds``, as :func:`parse_fixture` reads it."""
    return f": at {round(seconds, 6):g}s{line_end}".encode()


def _split_field(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if colon and value.startswith(" "):
        value = value[1:]
    return name, value


def parse_fixture(data: bytes, file: str) -> list[FixtureEvent]:
    """Every event of the fixture ``data`` (shown as ``file`` in errors), in order."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise FixtureProblem(
            file, "starts with a byte order mark; a recorded body has none", line=1
        )
    lines = _LINE.findall(data)
    consumed = sum(len(x) for x in lines)
    events: list[FixtureEvent] = []
    block: list[bytes] = []
    stamp: float | None = None
    start_line = 0
    last_at = 0.0
    pending_stamp_line = 0
    for index, raw_line in enumerate(lines, start=1):
        content = raw_line.rstrip(b"\r\n")
        match = TIMING_COMMENT.match(content)
        if match is not None:
            if stamp is not None:
                raise FixtureProblem(
                    file, "two timing comments for one event", event=len(events) + 1, line=index
                )
            stamp = parse_duration(match.group(1).decode())
            if stamp < last_at:
                raise FixtureProblem(
                    file,
                    f"timing comment ': at {match.group(1).decode()}' goes back before the "
                    f"previous event's {last_at:g}s",
                    event=len(events) + 1,
                    line=index,
                )
            pending_stamp_line = pending_stamp_line or index
            continue
        if content.startswith((b": at", b":at")):
            raise FixtureProblem(
                file,
                f"{content.decode(errors='replace')!r} looks like a timing comment but is not "
                "': at <duration>' (e.g. ': at 12.5s', ': at 350ms')",
                event=len(events) + 1,
                line=index,
            )
        if content:
            if not block:
                start_line = index
            block.append(raw_line)
            continue
        if not block:
            # A blank line with no block before it: nothing to dispatch, but a byte of the wire.
            if events:
                raise FixtureProblem(
                    file,
                    "two blank lines in a row; every event ends with exactly one",
                    event=len(events),
                    line=index,
                )
            raise FixtureProblem(file, "starts with a blank line", line=index)
        events.append(_event(block, raw_line, len(events) + 1, start_line, stamp, file))
        if stamp is not None:
            last_at = stamp
        block, stamp, pending_stamp_line = [], None, 0
    if consumed < len(data) or block:
        number = len(events) + 1
        line = start_line if block else len(lines) + 1
        raise FixtureProblem(
            file, "the file ends inside an event (no blank line after it)", event=number, line=line
        )
    if stamp is not None:
        raise FixtureProblem(
            file, "a timing comment after the last event stamps nothing", line=pending_stamp_line
        )
    if not events:
        raise FixtureProblem(file, "holds no event")
    return events


def _event(
    block: list[bytes], blank: bytes, number: int, line: int, at: float | None, file: str
) -> FixtureEvent:
    fields: list[tuple[str, str]] = []
    comments: list[str] = []
    for offset, raw_line in enumerate(block):
        try:
            text = raw_line.rstrip(b"\r\n").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FixtureProblem(
                file, f"not UTF-8: {exc.reason}", event=number, line=line + offset
            ) from None
        if text.startswith(":"):
            comments.append(text[1:])
        else:
            fields.append(_split_field(text))
    return FixtureEvent(
        number=number,
        line=line,
        at=at,
        raw=b"".join(block) + blank,
        fields=tuple(fields),
        comments=tuple(comments),
    )


def event_delays(events: list[FixtureEvent] | tuple[FixtureEvent, ...]) -> list[float]:
    """Unscaled seconds to wait before each event, from the recorded stamps (an unstamped
    event follows the previous one at once)."""
    delays: list[float] = []
    previous = 0.0
    for event in events:
        if event.at is None:
            delays.append(0.0)
            continue
        delays.append(round(max(0.0, event.at - previous), 6))
        previous = event.at
    return delays


def read_with(source: FixtureSource | None, path: str) -> tuple[str, bytes]:
    """The fixture at ``path`` through ``source`` (ValueError when there is none)."""
    if source is None:
        raise ValueError(
            f"fixture {path!r}: fixtures are resolved against the scenario file; load the "
            "scenario with the scenario loader (streamproof validate/run)"
        )
    return source(path)
