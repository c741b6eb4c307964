"""The shape of a profile: how one wire is read and how each requirement reads on it.

Pure (no I/O): a profile reads an observation the harness recorded into the *seed view* (the
same observation, its frames read as the seed's typed frames) and names, for every requirement,
what the seed's rule means on that wire and the check that judges it, or why it cannot be
judged there. The shared checks (:mod:`streamproof.suites.gateway.checks`) never learn which wire
they judge: they read the seed view, or the frames as received where that is what the rule is
about (a tool payload on the wire is a leak whatever the event around it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamproof.core.requirements import not_applicable
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.suites.gateway.observation import Frame, GatewayObservation
from streamproof.suites.gateway.profiles.wire import FrameMapping, ProfileName

__all__ = [
    "STREAMING",
    "ChatBody",
    "Judge",
    "Profile",
    "ReadAs",
    "Reading",
    "Rule",
    "by_design",
    "ids_only_if_sent",
    "judged",
    "not_on_this_wire",
    "on_view",
    "on_wire",
    "seed_frame",
]

GatewayCheck = Callable[[GatewayObservation], list[Verdict]]


@dataclass(frozen=True)
class ReadAs:
    """What reading a wire as the seed's frames needs to know of the target and the turn."""

    mapping: FrameMapping | None = None
    """A ``typed-frames`` target's own frame names."""
    streaming: bool = True
    """``False`` for a NONE-mode turn: a wire that can only send text as start/content/end
    (AG-UI, the AI SDK) is then read as the seed's lone ``message``, with no delta."""


STREAMING = ReadAs()
"""A streaming turn on a wire with no frame mapping."""


@dataclass(frozen=True)
class Reading:
    """One observation as a profile reads it."""

    obs: GatewayObservation
    """As recorded: the frames as received on the wire."""
    view: GatewayObservation
    """The same observation with its frames read as the seed's typed frames."""


Judge = Callable[[Reading], list[Verdict]]


@dataclass(frozen=True)
class Rule:
    """How one requirement reads on a wire."""

    meaning: str
    """What the seed's rule means on this wire, in a sentence (the docs' profile tables)."""
    judge: Judge | None = None
    """The check; ``None``: not applicable on this wire, for :attr:`reason`."""
    reason: str | None = None

    def verdicts(self, requirement: str, reading: Reading) -> list[Verdict]:
        if self.judge is None:
            return [not_applicable(requirement, f"not judged: {self.reason}")]
        return self.judge(reading)


def on_view(check: GatewayCheck) -> Judge:
    """A shared check judging the seed view."""
    return lambda reading: check(reading.view)


def on_wire(check: GatewayCheck) -> Judge:
    """A check judging the frames as received."""
    return lambda reading: check(reading.obs)


def judged(meaning: str, judge: Judge) -> Rule:
    return Rule(meaning=meaning, judge=judge)


def not_on_this_wire(meaning: str, reason: str) -> Rule:
    return Rule(meaning=meaning, reason=reason)


def ids_only_if_sent(check: Judge, requirement: str) -> Rule:
    """The seed's id rules, judged only on a gateway that sends ``id:`` lines: AG-UI's encoder
    and the AI SDK's send none, and neither protocol resumes by Last-Event-ID."""

    def judge(reading: Reading) -> list[Verdict]:
        if not any(f.id_line for f in reading.obs.frames):
            return [
                not_applicable(
                    requirement,
                    "not judged: the stream sends no SSE id (this wire's encoders send none, "
                    "and it has no Last-Event-ID resumption)",
                )
            ]
        return check(reading)

    return judged("if the gateway sends SSE ids, they are its own increasing counter", judge)


def by_design(check: Judge, why: str) -> Judge:
    """``check``, with a failure saying plainly that the wire does this by design."""

    def judge(reading: Reading) -> list[Verdict]:
        return [
            v.model_copy(update={"message": f"{v.message} ({why})"})
            if v.outcome is Outcome.FAIL
            else v
            for v in check(reading)
        ]

    return judge


@dataclass(frozen=True)
class ChatBody:
    """A chat request's body as a profile builds it."""

    data: bytes
    content_type: str
    json: Any = None
    """The body as JSON, when it is JSON (kept in the observation)."""


@dataclass(frozen=True)
class Profile:
    """One wire: its request, its seed view and its rules."""

    name: ProfileName
    title: str
    """A line for lists and the docs: what the wire is."""
    rules: Mapping[str, Rule]
    """Every requirement judged for a gateway on this wire, in report order: the shared GW-
    rules as they read here, then the wire's own (``AGUI-``, ``AISDK-``)."""
    expectations: Judge
    """The scenario's own expectations (``expect.frames`` is written in the seed's frame names
    and matched against the seed view)."""
    seed_frames: Callable[[Sequence[Frame], ReadAs], tuple[Frame, ...]]
    """The frames as received, read as the seed's typed frames (the identity for the seed's
    own wire); ``request.disconnect_after_frames`` counts these."""
    request: Callable[[str, str, bool], ChatBody] | None = None
    """The chat request a turn sends (text, session id, streaming), when the target gives no
    ``chat_body``; ``None``: the wire has no request of its own (``chat_body`` is required)."""
    typed_by: str | None = None
    """The JSON field that types each event on a data-only wire (AG-UI's and the AI SDK's
    ``type``): the checks that read the frames as received name each frame by it."""

    def wire(self, obs: GatewayObservation) -> GatewayObservation:
        """``obs`` with each data-only frame named by its ``typed_by`` field, so messages say
        ``frame #4 (event:TOOL_CALL_RESULT)`` rather than the SSE default ``message``."""
        if self.typed_by is None:
            return obs
        frames = tuple(_named(f, self.typed_by) for f in obs.frames)
        return obs.model_copy(update={"frames": frames})

    def view(self, obs: GatewayObservation) -> GatewayObservation:
        frames = self.seed_frames(obs.frames, ReadAs(obs.frame_mapping, obs.streaming))
        if frames == obs.frames:
            return obs
        return obs.model_copy(update={"frames": frames})


def _named(frame: Frame, field: str) -> Frame:
    payload = frame.payload() if frame.event == "message" else None
    kind = payload.get(field) if isinstance(payload, dict) else None
    return frame.model_copy(update={"event": kind}) if isinstance(kind, str) and kind else frame


def seed_frame(source: Frame, kind: str, payload: Mapping[str, Any], wire: str) -> Frame:
    """A frame of the seed view read from ``source`` (same index, time and id): the seed's
    ``kind`` with ``payload``, remembering the wire's own name of the event."""
    return Frame(
        index=source.index,
        t=source.t,
        event=kind,
        id=source.id,
        id_line=source.id_line,
        data=json.dumps(dict(payload), separators=(",", ":")),
        wire=wire,
    )
