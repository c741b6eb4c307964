"""Scenario files: a frozen pydantic model and a YAML loader whose errors name file, line, field.

A scenario file holds one or more YAML documents (separated by ``---``); each is one scenario.
Everything is validated at load time so that a bad scenario fails at collection, not halfway
through a run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.capabilities import GatewayCapability
from harness.durations import Duration
from harness.faults.plan import Links
from harness.requirements import RequirementIds

MARKER_PLACEHOLDER = "{{marker}}"
"""Replaced in tool payloads by a per-run secret; the secret must never reach a frame."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- the fake model's script -------------------------------------------------------------------


class GoogleError(_Model):
    """A Google API error body: ``{"error": {"code", "message", "status"}}``."""

    code: int = Field(503, ge=400, le=599)
    status: str = "UNAVAILABLE"
    message: str = "The model is overloaded."


class FunctionCall(_Model):
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class TextChunk(_Model):
    text: str
    delay: Duration | None = None
    """Wait before this chunk (overrides the turn's ``chunk_delay``)."""


class CallChunk(_Model):
    function_call: FunctionCall
    delay: Duration | None = None


class ErrorChunk(_Model):
    """A ``data: {"error": ...}`` line in the middle of the stream."""

    error: GoogleError
    delay: Duration | None = None


def _chunk_shorthand(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


Chunk = Annotated[TextChunk | CallChunk | ErrorChunk, BeforeValidator(_chunk_shorthand)]

FinishReason = Literal["STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER"]


class ModelTurn(_Model):
    """What the fake model answers to one call. Turns are consumed one per model call."""

    chunks: tuple[Chunk, ...] = ()
    finish_reason: FinishReason | None = "STOP"
    """Put on the last chunk; ``null`` makes the stream end without one."""
    chunk_delay: Duration = 0.0
    """Wait before every chunk, unless the chunk sets its own ``delay``."""
    http_error: GoogleError | None = None
    """Answer with this error status and body instead of a stream."""
    times: int | Literal["forever"] = 1
    """How many consecutive model calls this turn answers (``forever``: a runaway loop)."""
    agent: str | None = Field(None, min_length=1)
    """The agent that must make this call (e.g. the sub-agent ``billing`` after a transfer).
    When another agent makes it, the scenario's ``model`` expectation fails: the topology it
    needs did not run. ``None``: any agent."""

    @field_validator("times")
    @classmethod
    def _positive(cls, v: int | str) -> int | str:
        if isinstance(v, int) and v < 1:
            raise ValueError("times must be at least 1 (or 'forever')")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ModelTurn:
        if self.http_error is not None and self.chunks:
            raise ValueError("a turn with http_error sends no chunks; remove one of the two")
        if self.http_error is None and not self.chunks:
            raise ValueError("a turn needs chunks or an http_error")
        for i, chunk in enumerate(self.chunks[:-1]):
            if isinstance(chunk, ErrorChunk):
                raise ValueError(f"chunks[{i}]: an error chunk ends the stream; it must be last")
        return self

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.chunks if isinstance(c, TextChunk))

    @property
    def function_calls(self) -> tuple[FunctionCall, ...]:
        return tuple(c.function_call for c in self.chunks if isinstance(c, CallChunk))

    @property
    def mid_stream_error(self) -> GoogleError | None:
        last = self.chunks[-1] if self.chunks else None
        return last.error if isinstance(last, ErrorChunk) else None


# --- the request and what must be observed -----------------------------------------------------


class ChatRequest(_Model):
    text: str = Field(min_length=1)
    streaming: bool = True
    """``false`` asks the gateway for a non-streaming (NONE mode) turn via its ``chat_none``
    endpoint; a target that declares none gets a skip."""
    disconnect_after_frames: int | None = Field(None, ge=0)
    """The browser goes away (closes the connection) once this many frames have arrived."""
    reload: bool = False
    """After the browser went away, read the history at once, as a user reloading the page
    would, instead of after the run settled."""

    @model_validator(mode="after")
    def _reload_needs_a_drop(self) -> ChatRequest:
        if self.reload and self.disconnect_after_frames is None:
            raise ValueError("reload reads the history after a drop: set disconnect_after_frames")
        return self


def _request_shorthand(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


HistoryKind = Literal["user", "function_call", "function_response", "text", "error"]


class GatewayExpect(_Model):
    frames: str | None = None
    """A pattern over frame types, e.g. ``tool_call tool_result delta+ message done``.
    Quantifiers ``+ * ?`` and alternatives ``error|done`` are allowed."""
    history: tuple[HistoryKind, ...] | str | None = None
    """The kinds of the stored events, in order: a list, or a pattern like the frames one
    (``user function_call function_response error?``)."""
    tool_calls: dict[str, int] | None = None
    """How many times each tool must have been executed."""
    model_calls: int | None = Field(None, ge=0)
    """Exactly this many model calls."""
    auth: bool = False
    """Probe the target's authentication and history isolation (needs two users)."""

    @field_validator("frames", "history")
    @classmethod
    def _pattern_compiles(cls, v: Any) -> Any:
        if isinstance(v, str):
            from harness.patterns import compile_frame_pattern

            compile_frame_pattern(v)
        return v


class GatewayLimits(_Model):
    model_calls: int = Field(50, ge=1)
    """The most model calls a turn may make: an interactive budget, far below ADK's 500."""
    run_timeout: Duration = 30.0
    """How long the harness waits for the stream to end (scaled, never below 10 s)."""
    dispose_within: Duration = 2.0
    """After the browser goes away, the gateway must close its model stream and stop calling
    the model and the tools within this time (scaled, never below 0.5 s)."""


class GatewayScenario(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.\-/]*$")
    title: str = Field(min_length=1)
    kind: Literal["gateway"] = "gateway"
    requirements: RequirementIds
    """The requirements this scenario is built to test (every applicable check runs anyway)."""
    needs: tuple[GatewayCapability, ...] = ()
    """Capabilities the target must declare for this scenario to run; without them it is
    skipped with the reason. A non-streaming request implies ``none_mode`` and
    ``expect.auth`` implies ``auth``."""
    model: tuple[ModelTurn, ...] = Field(min_length=1)
    tools: dict[str, Any] = Field(default_factory=dict)
    """The fake tool service's answer per tool; ``{{marker}}`` becomes a per-run secret."""
    request: Annotated[ChatRequest, BeforeValidator(_request_shorthand)]
    expect: GatewayExpect = GatewayExpect()
    limits: GatewayLimits = GatewayLimits()
    links: Links = Links()
    """Faults per proxied hop: ``browser`` (harness to gateway), ``model`` (gateway to the
    fake model)."""

    @field_validator("links")
    @classmethod
    def _gateway_links(cls, v: Links) -> Links:
        if v.a2a:
            raise ValueError("a gateway scenario has no 'a2a' link; use 'browser' or 'model'")
        return v

    @property
    def all_needs(self) -> tuple[GatewayCapability, ...]:
        """``needs`` plus what the request and expectations imply, in a fixed order."""
        implied: set[str] = set(self.needs)
        if not self.request.streaming:
            implied.add("none_mode")
        if self.expect.auth:
            implied.add("auth")
        order: tuple[GatewayCapability, ...] = ("multi_agent", "none_mode", "history", "auth")
        return tuple(c for c in order if c in implied)

    @property
    def scripted_calls(self) -> int | Literal["forever"]:
        """How many model calls the script answers; ``forever`` when a turn never runs out."""
        if any(turn.times == "forever" for turn in self.model):
            return "forever"
        return sum(int(turn.times) for turn in self.model)

    @property
    def scripted_agents(self) -> tuple[str | None, ...]:
        """The agent expected per scripted call, up to the first turn repeated forever."""
        agents: list[str | None] = []
        for turn in self.model:
            if turn.times == "forever":
                agents.append(turn.agent)
                break
            agents += [turn.agent] * int(turn.times)
        return tuple(agents)


if TYPE_CHECKING:
    from harness.scenario_a2a import A2AClientScenario

    Scenario = GatewayScenario | A2AClientScenario


# --- loading -----------------------------------------------------------------------------------


class ScenarioError(Exception):
    """A scenario file that cannot be used; names where the problem is."""

    def __init__(self, file: str, line: int | None, field: str | None, problem: str) -> None:
        super().__init__(file, line, field, problem)
        self.file, self.line, self.field, self.problem = file, line, field, problem

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return (
            f"{where}: {self.field}: {self.problem}" if self.field else f"{where}: {self.problem}"
        )


@dataclass(frozen=True)
class LoadedScenario:
    scenario: Scenario
    file: str
    line: int
    """1-based line of the document's first key."""


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that also records the line of every mapping key and sequence item."""


def _documents(text: str, file: str) -> Iterator[tuple[Any, dict[tuple[Any, ...], int]]]:
    try:
        nodes = list(yaml.compose_all(text, Loader=_LineLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(file, line, None, f"malformed YAML: {problem}") from None
    for node in nodes:
        if node is None:
            continue
        lines: dict[tuple[Any, ...], int] = {}
        _index_lines(node, (), lines)
        loader = _LineLoader("")
        try:
            data = loader.construct_document(node)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise ScenarioError(file, line, None, f"malformed YAML: {exc}") from None
        finally:
            loader.dispose()
        yield data, lines


def _index_lines(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*path, key.value)
            out[child] = key.start_mark.line + 1
            _index_lines(value, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*path, i), out)


def _line_for(loc: Sequence[Any], lines: Mapping[tuple[Any, ...], int]) -> int | None:
    path = tuple(loc)
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())


def _field_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(document)"


def _yaml_loc(loc: Sequence[Any]) -> tuple[Any, ...]:
    """Pydantic locations include union member tags ("TextChunk", "function-after[...]"),
    which are not in the YAML; keep only what names a key or an index."""
    keep: list[Any] = []
    for part in loc:
        if isinstance(part, int) or (
            isinstance(part, str) and re.fullmatch(r"[a-z_][a-z0-9_]*", part)
        ):
            keep.append(part)
    return tuple(keep)


def parse_scenarios(text: str, file: str) -> list[LoadedScenario]:
    """Every scenario in ``text``; raises :class:`ScenarioError` at the first problem."""
    loaded: list[LoadedScenario] = []
    seen: dict[str, int] = {}
    for data, lines in _documents(text, file):
        doc_line = lines.get((), 1)
        if not isinstance(data, dict):
            raise ScenarioError(file, doc_line, None, "a scenario document must be a mapping")
        kind = data.get("kind", "gateway")
        model = _scenario_model(kind)
        if model is None:
            raise ScenarioError(
                file,
                lines.get(("kind",), doc_line),
                "kind",
                f"unknown scenario kind {kind!r}; kinds are gateway, a2a-client",
            )
        try:
            scenario = model.model_validate(data)
        except ValidationError as exc:
            err = _best_error(exc)
            loc = _yaml_loc(err["loc"])
            raise ScenarioError(
                file, _line_for(loc, lines), _field_path(loc), _error_text(err)
            ) from None
        if scenario.id in seen:
            raise ScenarioError(
                file,
                lines.get(("id",), doc_line),
                "id",
                f"duplicate scenario id {scenario.id!r} (first at line {seen[scenario.id]})",
            )
        seen[scenario.id] = doc_line
        loaded.append(LoadedScenario(scenario, file, doc_line))
    if not loaded:
        raise ScenarioError(file, None, None, "the file holds no scenario")
    return loaded


def _scenario_model(kind: Any) -> type[GatewayScenario] | type[A2AClientScenario] | None:
    if kind == "gateway":
        return GatewayScenario
    if kind == "a2a-client":
        from harness.scenario_a2a import A2AClientScenario

        return A2AClientScenario
    return None


def _best_error(exc: ValidationError) -> Any:
    """Of a union's alternatives, report the error that got furthest into the document."""
    errors = exc.errors(include_url=False)
    # Deepest first; at equal depth an unknown key (usually a typo) explains more than the
    # "field required" it causes.
    return max(errors, key=lambda e: (len(_yaml_loc(e["loc"])), e["type"] == "extra_forbidden"))


def _error_text(err: Any) -> str:
    msg = str(err["msg"])
    if err["type"] == "extra_forbidden":
        return "unknown key"
    return msg.removeprefix("Value error, ")


def load_scenarios(path: str | Path) -> list[LoadedScenario]:
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(file, None, None, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(file, None, None, f"not UTF-8 text: {exc.reason}") from None
    return parse_scenarios(text, file)
