"""Browser-client scenarios (``kind: browser-client``): the frames the fake gateway sends, what
its history endpoint answers, the faults on the ``browser`` link and what happens to the tab.

One document reads like the seed's worked example::

    id: browser_client/worked-example
    title: The seed's worked example, one tool call streamed
    kind: browser-client
    requirements: [BR-RENDER-ONCE, BR-DRAFT-CLEARED, BR-EVERY-MESSAGE]
    prompt: Where is order 1042?
    frames:
      - tool_call: {names: [lookupOrder]}
      - tool_result: {count: 1}
      - delta: {author: support, text: "Order 1042 shipped "}
      - delta: {author: support, text: "is due Monday."}
      - message: {author: support, text: "Order 1042 shipped is due Monday.", final: true}
      - done: {}

Each item of ``frames`` is one frame, keyed by its type, with its JSON payload; ``gap`` (a
duration) waits before it, ``retry`` adds an SSE ``retry:`` field to it. The fake numbers the
frames itself (``id: 1, 2, ...``, the gateway's counter). ``history`` is what the history
endpoint answers, by default what the gateway would have stored for the whole run (the user's
message, the tool call and its result, each message; never a delta). ``links.browser`` is a
fault plan (:class:`~streamproof.faults.plan.Fault`) on the hop between the page and the fake
gateway (``after_event: N`` counts the frames). ``tab`` hides the tab after a frame and shows it
again (``visibilitychange``, as a user switching tabs).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from streamproof.core.durations import Duration
from streamproof.core.requirements import RequirementIds
from streamproof.faults.engine_names import EngineName
from streamproof.faults.engines.catalog import engine_problems
from streamproof.faults.plan import Fault

__all__ = [
    "FRAME_TYPES",
    "BrowserClientScenario",
    "BrowserLimits",
    "BrowserLinks",
    "FrameStep",
    "HistoryItem",
    "TabAction",
]

FRAME_TYPES = ("delta", "message", "tool_call", "tool_result", "error", "done")
"""The seed's six frame types (docs/reference/browser-client-contract.md)."""
TRANSPORT = "transport"
"""What a scenario needs when it touches the transport (faults, the tab, the history endpoint,
reconnects): a page has it, a reducer module does not."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FrameStep(_Model):
    """One frame: exactly one of the six types, with its payload."""

    delta: dict[str, Any] | None = None
    message: dict[str, Any] | None = None
    tool_call: dict[str, Any] | None = None
    tool_result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    done: dict[str, Any] | None = None
    gap: Duration | None = None
    """Wait this long (scaled) before sending the frame."""
    retry: int | None = Field(default=None, ge=0)
    """An SSE ``retry:`` field (milliseconds) sent with the frame."""

    @model_validator(mode="after")
    def _one_type(self) -> FrameStep:
        present = [t for t in FRAME_TYPES if getattr(self, t) is not None]
        if len(present) != 1:
            raise ValueError(
                f"a frame is exactly one of {', '.join(FRAME_TYPES)} (with its payload), "
                f"found {', '.join(present) or 'none'}"
            )
        payload = self.payload
        if self.type in ("delta", "message"):
            for key in ("author", "text"):
                if not isinstance(payload.get(key), str):
                    raise ValueError(f"a {self.type} frame's payload needs a string {key!r}")
        if self.type == "message" and not isinstance(payload.get("final", True), bool):
            raise ValueError("a message frame's 'final' is true or false")
        if self.type == "tool_call":
            names = payload.get("names")
            if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
                raise ValueError("a tool_call frame's payload needs 'names', a list of strings")
        return self

    @property
    def type(self) -> str:
        return next(t for t in FRAME_TYPES if getattr(self, t) is not None)

    @property
    def payload(self) -> dict[str, Any]:
        value: dict[str, Any] = getattr(self, self.type)
        return value


class HistoryItem(_Model):
    """One stored event the history endpoint answers: text, a tool call or a tool result."""

    author: str = Field(min_length=1)
    text: str | None = None
    tool_call: tuple[str, ...] | None = None
    tool_result: str | None = None

    @model_validator(mode="after")
    def _one(self) -> HistoryItem:
        given = [k for k in ("text", "tool_call", "tool_result") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a history item holds exactly one of text, tool_call, tool_result")
        return self


class TabAction(_Model):
    """``{after_frame: 3, do: hide, for: 1s}``: once frame 3 has been rendered, the tab is
    hidden, and shown again that much later."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    after_frame: int = Field(ge=1)
    do: Literal["hide"]
    for_: Duration = Field(alias="for")


class BrowserLinks(_Model):
    browser: tuple[Fault, ...] = ()
    """The fault plan of the hop between the page and the fake gateway."""
    engine: dict[Literal["browser"], EngineName] = Field(default_factory=dict)
    """The engine that must carry out the plan; default: the run's ``--engine``, else
    ``inline``."""

    @model_validator(mode="after")
    def _engine_can(self) -> BrowserLinks:
        problems = engine_problems({"browser": self.browser}, self.engine.items())
        if problems:
            raise ValueError("; ".join(problems))
        return self


class BrowserLimits(_Model):
    reconnect: Duration = 5.0
    """How long after a stream broke the page has to read the history (scaled; at least a
    second in real time)."""
    settle: Duration = 0.5
    """How long the harness waits, after the last frame, for the page to settle (scaled)."""
    run_timeout: Duration = 120.0
    """The whole scenario's bound (scaled), after which the run is stopped."""


class BrowserClientScenario(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.\-/]*$")
    title: str = Field(min_length=1)
    kind: Literal["browser-client"] = "browser-client"
    requirements: RequirementIds
    """The requirements this scenario is built to test (every check runs anyway)."""
    prompt: str = Field(default="Where is order 1042?", min_length=1)
    """What the harness types into the page."""
    frames: tuple[FrameStep, ...] = Field(min_length=1)
    history: tuple[HistoryItem, ...] | None = None
    """What the history endpoint answers; default: the whole run as stored."""
    links: BrowserLinks = BrowserLinks()
    tab: tuple[TabAction, ...] = ()
    limits: BrowserLimits = BrowserLimits()

    @model_validator(mode="after")
    def _consistent(self) -> BrowserClientScenario:
        for action in self.tab:
            if action.after_frame > len(self.frames):
                raise ValueError(
                    f"tab: after_frame {action.after_frame} is past the last frame "
                    f"({len(self.frames)})"
                )
        return self

    @property
    def horizon(self) -> float:
        """The scenario's own length in its time: the frames' gaps, the tab's hidden spells and
        the wait for a reconnect."""
        gaps = sum(f.gap or 0.0 for f in self.frames)
        hidden = sum(a.for_ for a in self.tab)
        return gaps + hidden + self.limits.reconnect + self.limits.settle

    @property
    def needs(self) -> tuple[str, ...]:
        """``transport`` when the scenario cuts or shapes the stream, hides the tab or judges
        what a page does after the stream (a reducer module cannot be judged on those)."""
        touches = (
            bool(self.links.browser)
            or bool(self.tab)
            or self.frames[-1].type not in ("done", "error")
        )
        return (TRANSPORT,) if touches else ()

    def stored_history(self) -> tuple[HistoryItem, ...]:
        """What the history endpoint answers: ``history``, or the whole run as the gateway
        stores it (the user's message, each tool call and result, each message)."""
        if self.history is not None:
            return self.history
        items = [HistoryItem(author="user", text=self.prompt)]
        author = "agent"
        for frame in self.frames:
            payload = frame.payload
            if frame.type == "message":
                author = str(payload["author"])
                items.append(HistoryItem(author=author, text=str(payload["text"])))
            elif frame.type == "delta":
                author = str(payload["author"])
            elif frame.type == "tool_call":
                items.append(HistoryItem(author=author, tool_call=tuple(payload["names"])))
            elif frame.type == "tool_result":
                items.append(HistoryItem(author=author, tool_result="tool"))
        return tuple(items)
