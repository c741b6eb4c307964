"""A canned A2A stream (``fixtures/a2a/<wire>/...``) read back into a task timeline.

A fixture holds the SSE body of one ``message/stream`` (0.3) or ``SendStreamingMessage``
(1.0) call as the wire carried it (on JSON-RPC, each event a response whose ``result`` is the
stream event; on the 1.0 REST binding, ``POST /message:stream``, each event the bare
``StreamResponse``), with timing comments (:mod:`streamproof.protocol.fixture`).
The fake A2A server is a task state machine: the task id is the one it creates for the
client's call, a resubscribe continues from where the task is, ``tasks/get`` answers from its
state. So a fixture becomes the timeline the fake plays (one step per event, at its recorded
time), not a byte sequence: the events are replayed in order, with their states, messages,
artifact chunks and flags, in the framing the scenario's ``server`` settings give.

Pure: the bytes are parsed by the caller's :func:`~streamproof.protocol.fixture.parse_fixture`;
every event must decode with the same A2A codecs the fake and the checks use, for the wire the
file is written in, and belong to one task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from streamproof.protocol.a2a import (
    ArtifactUpdate,
    DataPart,
    Message,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
    WireFormatError,
)
from streamproof.protocol.a2a.decode import decode_response, decode_stream_event
from streamproof.protocol.a2a.jsontext import loads
from streamproof.protocol.a2a.model import RpcError, text_of
from streamproof.protocol.fixture import FixtureEvent, FixtureProblem

__all__ = ["FixtureTimeline", "fixture_timeline", "fixture_wire"]

Wire = Literal["0.3", "1.0"]


class FixtureTimeline:
    """The steps of a fixture (``task:`` items as a scenario writes them) and the wire it is
    written in; ``events[i]`` is the fixture event that became ``steps[i]``."""

    def __init__(
        self, steps: list[dict[str, Any]], wire: Wire, events: Sequence[FixtureEvent]
    ) -> None:
        self.steps = steps
        self.wire = wire
        self.events = tuple(events)


def _payload(event: FixtureEvent, file: str) -> Any:
    lines = event.data_lines
    names = {name for name, _ in event.fields} - {"data", "event", "id", "retry"}
    if names:
        raise event.problem(file, f"unknown SSE field(s) {', '.join(sorted(names))}")
    if len(lines) != 1:
        raise event.problem(
            file,
            f"an A2A stream event is one 'data:' line holding one JSON-RPC response "
            f"(this one has {len(lines)})",
        )
    try:
        return loads(lines[0])
    except ValueError as exc:
        raise event.problem(file, f"the data is not JSON: {exc}") from None


_STREAM_MEMBERS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})


def _bare_event(payload: Any) -> bool:
    """A REST stream's event: a ``StreamResponse`` with its one member, no JSON-RPC envelope."""
    return isinstance(payload, dict) and len(payload) == 1 and set(payload) <= _STREAM_MEMBERS


def fixture_wire(events: Sequence[FixtureEvent], file: str) -> Wire:
    """The wire a fixture is written in: 0.3 results carry ``kind``, 1.0 results are wrapped
    in a ``StreamResponse`` member (a REST stream's events are that wrapper alone)."""
    for event in events:
        if event.data_lines:
            payload = _payload(event, file)
            if _bare_event(payload):
                return "1.0"
            result = payload.get("result") if isinstance(payload, dict) else None
            if isinstance(result, dict):
                return "0.3" if "kind" in result else "1.0"
            raise event.problem(
                file, "neither a JSON-RPC response with a 'result' object nor a REST stream event"
            )
    raise FixtureProblem(file, "holds no data event (only comments)")


def _text(parts: Sequence[Any]) -> str | None:
    if parts and all(isinstance(p, TextPart) for p in parts):
        return text_of(parts)
    return None


def _artifact_step(update: ArtifactUpdate, event: FixtureEvent, file: str) -> dict[str, Any]:
    artifact = update.artifact
    chunk: dict[str, Any] = {"id": artifact.artifact_id}
    if artifact.name is not None:
        chunk["name"] = artifact.name
    text = _text(artifact.parts)
    if text is not None:
        chunk["text"] = text
    elif len(artifact.parts) == 1 and isinstance(artifact.parts[0], DataPart):
        data = artifact.parts[0].data
        if not isinstance(data, dict):
            raise event.problem(file, "a data part the fake can replay holds an object")
        chunk["data"] = data
    else:
        raise event.problem(
            file, "an artifact update the fake can replay holds text parts or one data part"
        )
    if update.append:
        chunk["append"] = True
    if update.last_chunk:
        chunk["last"] = True
    return {"artifact": chunk}


def _status_step(state: TaskState, message: Message | None) -> dict[str, Any]:
    step: dict[str, Any] = {"status": state.value}
    if message is not None:
        text = text_of(message.parts)
        if text:
            step["message"] = text
    return step


def fixture_timeline(
    events: Sequence[FixtureEvent],
    file: str,
    *,
    chunk_delay: float | None = None,
) -> FixtureTimeline:
    """The timeline of a canned task stream. ``chunk_delay``: the steps are that far apart
    instead of at their recorded times."""
    wire = fixture_wire(events, file)
    steps: list[dict[str, Any]] = []
    kept: list[FixtureEvent] = []
    task_id: str | None = None
    at = 0.0
    for event in events:
        at = event.at if event.at is not None else at
        when = len(steps) * chunk_delay if chunk_delay is not None else at
        if not event.data_lines:
            if event.fields:
                raise event.problem(file, "an event without data is neither a heartbeat nor news")
            comment = "\n".join(event.comments).strip()
            steps.append({"at": when, "heartbeat": True, "comment": comment or None})
            kept.append(event)
            continue
        payload = _payload(event, file)
        try:
            result = payload if _bare_event(payload) else decode_response(payload, "response")
            if isinstance(result, RpcError):
                raise event.problem(
                    file,
                    f"an error response ({result.code}: {result.message}); a task timeline "
                    "holds the task's events",
                )
            decoded = decode_stream_event(result, wire, "response.result")
        except WireFormatError as exc:
            raise event.problem(file, f"not an A2A {wire} stream response: {exc}") from None
        if isinstance(decoded, Message):
            raise event.problem(
                file, "a direct Message reply; a task fixture streams a task (use reply: instead)"
            )
        current = decoded.id if isinstance(decoded, Task) else decoded.task_id
        if task_id is not None and current != task_id:
            raise event.problem(
                file, f"belongs to task {current!r}, the stream's task is {task_id!r}"
            )
        task_id = current
        if isinstance(decoded, Task):
            if kept and any(e.data_lines for e in kept):
                raise event.problem(file, "a Task snapshot after the stream's first event")
            if decoded.artifacts:
                raise event.problem(
                    file, "the opening Task snapshot holds artifacts; stream them as updates"
                )
            step = _status_step(decoded.status.state, decoded.status.message)
        elif isinstance(decoded, StatusUpdate):
            step = _status_step(decoded.status.state, decoded.status.message)
        else:
            step = _artifact_step(decoded, event, file)
        steps.append({"at": when, **step})
        kept.append(event)
    return FixtureTimeline(steps, wire, kept)
