"""A link's records as live terminal lines, and the line that sums them up at the end.

One line per record, times in seconds since the proxy started::

       0.412s  conn 0        connect  from 127.0.0.1:50312
       0.415s  conn 0 req 1  request  POST / rpc=message/stream
       0.431s  conn 0 req 1  response 200
       0.433s  conn 0 req 1  event    #1 message
       4.001s  conn 0 req 1  fault    [0] after: 4s -> stall
       6.120s  conn 0 req 1  end      fin by client: the client closed the connection; ...

Streams can carry tens of thousands of events, so events (and SSE comments such as pings) are
collapsed: each response's first :data:`SHOWN_FIRST` stream items get a line each, and so does
every item that arrives :data:`SLOW_GAP` seconds or more after the one before it on the same
response (a slow stream is shown whole, as it happens). The items in between are counted into
one line, ``events   #4-#19999 (19996 events in 0.412s)``, printed when something else
happens on that response (a fault, its end, a slow item) or every :data:`PROGRESS_EVERY`
seconds while the run goes on. A 20,000-event stream so takes five lines or so.

Pure: records in, lines out (:class:`LiveLog`); the caller reads the link and prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent
from streamproof.faults.shorthand import format_fault

__all__ = [
    "LATE_FIRST_BYTE",
    "PROGRESS_EVERY",
    "SHOWN_FIRST",
    "SLOW_GAP",
    "LiveLog",
    "summary_line",
]

SHOWN_FIRST: Final = 3
"""Stream items (events and comments) of each response shown one per line."""
SLOW_GAP: Final = 0.5
"""Seconds after the previous item on its response from which an item gets its own line."""
PROGRESS_EVERY: Final = 2.0
"""Seconds between two lines of one run of collapsed items."""
LATE_FIRST_BYTE: Final = 0.1
"""Seconds after the response headers from which the first byte gets a line of its own (a
``delay`` on the response headers); sooner, the ``response`` line stands for both."""


@dataclass
class _Run:
    """Stream items counted instead of shown."""

    first: LinkEvent
    last: LinkEvent
    events: int = 0
    comments: int = 0

    def add(self, record: LinkEvent) -> None:
        self.last = record
        if record.kind == "event":
            self.events += 1
        else:
            self.comments += 1


@dataclass
class _Response:
    items: int = 0
    last_item_t: float | None = None
    headers_t: float | None = None
    run: _Run | None = None


def _where(record: LinkEvent) -> str:
    if record.request is None:
        return f"conn {record.connection}"
    return f"conn {record.connection} req {record.request}"


def _line(record: LinkEvent, what: str, detail: str) -> str:
    return f"{record.t:8.3f}s  {_where(record):<13} {what:<8} {detail}".rstrip()


def _request_label(record: LinkEvent) -> str:
    text = f"{record.method} {record.path}"
    return f"{text} rpc={record.rpc}" if record.rpc else text


def _seconds(value: float) -> str:
    return f"{value:.3f}s"


class LiveLog:
    """Turns batches of a link's records into terminal lines (see the module's docstring)."""

    def __init__(self) -> None:
        self._responses: dict[int, _Response] = {}

    def feed(self, records: Sequence[LinkEvent]) -> list[str]:
        """Lines for ``records`` (the link's new ones, in order)."""
        lines: list[str] = []
        for record in records:
            lines += self._one(record)
        return lines

    def tick(self, now: float) -> list[str]:
        """Lines for runs that have gone on :data:`PROGRESS_EVERY` seconds without one, at
        ``now`` (seconds on the records' clock)."""
        lines: list[str] = []
        for state in self._responses.values():
            run = state.run
            if run is not None and now - run.first.t >= PROGRESS_EVERY:
                lines += self._flush(state)
        return lines

    def flush(self) -> list[str]:
        """Every run still counted (at the end)."""
        lines: list[str] = []
        for state in self._responses.values():
            lines += self._flush(state)
        return lines

    # --- one record ----------------------------------------------------------------------------

    def _one(self, record: LinkEvent) -> list[str]:
        if record.request is None:  # connect
            return [_line(record, record.kind, f"from {record.detail}" if record.detail else "")]
        state = self._responses.setdefault(record.request, _Response())
        if record.kind in ("event", "comment"):
            gap = None if state.last_item_t is None else record.t - state.last_item_t
            state.last_item_t = record.t
            state.items += 1
            shown = state.items <= SHOWN_FIRST or record.damage is not None
            if shown or (gap is not None and gap >= SLOW_GAP):
                return [*self._flush(state), self._item(record)]
            if state.run is None:
                state.run = _Run(first=record, last=record)
            state.run.add(record)
            return []
        lines = self._flush(state)
        if record.kind == "request":
            lines.append(_line(record, "request", _request_label(record)))
        elif record.kind == "response_headers":
            state.headers_t = record.t
            lines.append(_line(record, "response", str(record.status)))
        elif record.kind == "first_byte":
            if state.headers_t is None:
                lines.append(_line(record, "response", f"{record.status} from the proxy"))
            elif record.t - state.headers_t >= LATE_FIRST_BYTE:
                late = _seconds(record.t - state.headers_t)
                lines.append(_line(record, "1st byte", f"{late} after the response headers"))
        elif record.kind == "fault":
            index = f"[{record.fault.index}] " if record.fault is not None else ""
            lines.append(_line(record, "fault", index + record.detail))
        elif record.kind == "end":
            how = (
                "upstream_error"
                if record.how == "upstream_error"
                else f"{record.how} by {record.by}"
            )
            detail = "" if record.detail == "0 events forwarded" else record.detail
            lines.append(_line(record, "end", f"{how}: {detail}" if detail else how))
            del self._responses[record.request]
        return lines

    def _item(self, record: LinkEvent) -> str:
        if record.kind == "event":
            damaged = f" (damaged: {record.damage})" if record.damage else ""
            return _line(record, "event", f"#{record.event_index} {record.detail}{damaged}")
        return _line(record, "comment", f": {record.detail}")

    def _flush(self, state: _Response) -> list[str]:
        run, state.run = state.run, None
        if run is None:
            return []
        if run.events + run.comments == 1:
            return [self._item(run.first)]
        took = _seconds(run.last.t - run.first.t)
        if not run.events:
            return [_line(run.last, "comments", f"{run.comments} comments in {took}")]
        first = run.first.event_index if run.first.kind == "event" else None
        last = run.last.event_index if run.last.kind == "event" else None
        span = f"#{first}-#{last} " if first is not None and last is not None else ""
        counts = f"{run.events} events"
        if run.comments:
            counts += f", {run.comments} comments"
        return [_line(run.last, "events", f"{span}({counts} in {took})")]


def _counted(counts: Counter[str]) -> str:
    return ", ".join(f"{label} x{n}" if n > 1 else label for label, n in counts.items())


def summary_line(
    records: Sequence[LinkEvent], faults: Sequence[Fault], *, seconds: float, why: str
) -> str:
    """One line: how long the proxy ran and why it stopped, its connections and requests, the
    faults that fired and how the responses ended."""
    connections = sum(1 for r in records if r.kind == "connect")
    requests = [r for r in records if r.kind == "request"]
    labels: Counter[str] = Counter(r.rpc or f"{r.method} {r.path}" for r in requests)
    fired: Counter[str] = Counter()
    for r in records:
        if r.kind == "fault" and r.fault is not None:
            index = r.fault.index
            text = format_fault(faults[index]) if index < len(faults) else r.detail
            fired[f"[{index}] {text}"] += 1
    ended = {r.request for r in records if r.kind == "end"}
    endings: Counter[str] = Counter(
        "upstream_error" if r.how == "upstream_error" else f"{r.how} by {r.by}"
        for r in records
        if r.kind == "end"
    )
    unfinished = sum(1 for r in requests if r.request not in ended)
    if unfinished:
        endings["unfinished"] += unfinished
    parts = [
        f"{connections} connection{'s' if connections != 1 else ''}",
        f"{len(requests)} request{'s' if len(requests) != 1 else ''}"
        + (f" ({_counted(labels)})" if labels else ""),
        f"{sum(fired.values())} fault{'s' if sum(fired.values()) != 1 else ''} fired"
        + (f" ({_counted(fired)})" if fired else ""),
    ]
    if endings:
        parts.append("responses ended: " + ", ".join(f"{n} {how}" for how, n in endings.items()))
    return f"streamproof proxy: stopped after {seconds:.1f}s ({why}): {'; '.join(parts)}"
