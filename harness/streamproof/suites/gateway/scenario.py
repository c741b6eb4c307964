"""The gateway scenario: a frozen pydantic model of one YAML document of kind ``gateway``
(the fake model's turns, the tools' answers, the chat request, faults on the links, and what
must be observed). Loaded and located by :mod:`streamproof.suites.loading`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from streamproof.core.capabilities import GatewayCapability
from streamproof.core.durations import Duration
from streamproof.core.patterns import check_names, json_schema_pattern
from streamproof.core.requirements import RequirementIds
from streamproof.fakes.records import MARKER_PLACEHOLDER
from streamproof.faults.engines.catalog import engine_problems, intercepted_tls_problems
from streamproof.faults.plan import Links
from streamproof.protocol.gemini import ModelTurn


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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


FrameType = Literal["delta", "message", "tool_call", "tool_result", "error", "done"]
"""The frame types of the seed's typed protocol (the SSE ``event:`` names)."""
FRAME_TYPES: Final[tuple[FrameType, ...]] = get_args(FrameType)

HistoryKind = Literal["user", "function_call", "function_response", "text", "error"]
"""The kinds of stored session events an expectation names."""
HISTORY_KINDS: Final[tuple[HistoryKind, ...]] = get_args(HistoryKind)


def _pattern_schema(names: Sequence[str], what: str) -> dict[str, Any]:
    """The JSON Schema of a pattern string over ``names`` (the loader checks the same with
    :func:`streamproof.core.patterns.check_names`)."""
    return {
        "type": "string",
        "pattern": json_schema_pattern(names),
        "description": f"a pattern over {what}s ({', '.join(names)}): names, 'a|b' "
        "alternatives, an optional + * ? quantifier",
    }


FramePattern = Annotated[str, WithJsonSchema(_pattern_schema(FRAME_TYPES, "frame type"))]
HistoryPattern = Annotated[str, WithJsonSchema(_pattern_schema(HISTORY_KINDS, "history kind"))]


_CALL_COUNT = re.compile(r"^\s*(\d+)\s*(?:(\+)|\.\.\s*(\d+))?\s*$")


class CallCount(_Model):
    """How many model calls a scenario expects: exactly ``N`` (YAML ``2``), at least ``N``
    (``"1+"``), or from ``N`` to ``M`` (``"1..5"``). A model client may retry a failed call
    (ADK Java retries a 5xx five times, ADK Python not at all), so a scenario whose model
    fails states a range, not an exact count."""

    min: int = Field(ge=0)
    max: int | None = Field(None, ge=0)
    """``None``: no upper bound."""

    @model_validator(mode="after")
    def _ordered(self) -> CallCount:
        if self.max is not None and self.max < self.min:
            raise ValueError(
                f"model_calls: {self.min}..{self.max} is empty (the upper bound is "
                "below the lower one)"
            )
        return self

    def admits(self, count: int) -> bool:
        return count >= self.min and (self.max is None or count <= self.max)

    def __str__(self) -> str:
        if self.max is None:
            return f"{self.min}+"
        return str(self.min) if self.max == self.min else f"{self.min}..{self.max}"


def _call_count_shorthand(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError('model_calls: write a count (2), a minimum ("1+") or a range ("1..5")')
    if isinstance(value, int):
        return {"min": value, "max": value}
    if isinstance(value, str):
        match = _CALL_COUNT.match(value)
        if match is None:
            raise ValueError(
                f'model_calls: {value!r} is not a count (2), a minimum ("1+") or a range ("1..5")'
            )
        low, plus, high = match.groups()
        if plus:
            return {"min": int(low), "max": None}
        return {"min": int(low), "max": int(high) if high is not None else int(low)}
    return value


ModelCallCount = Annotated[
    CallCount,
    BeforeValidator(
        _call_count_shorthand,
        json_schema_input_type=Annotated[int, Field(ge=0, description="exactly this many")]
        | Annotated[
            str,
            Field(
                pattern=r"^\s*\d+\s*(\+|\.\.\s*\d+)?\s*$",
                description="'N+' (at least N) or 'N..M' (from N to M)",
            ),
        ]
        | CallCount,
    ),
]


class GatewayExpect(_Model):
    frames: FramePattern | None = None
    """A pattern over frame types, e.g. ``tool_call tool_result delta+ message done``.
    Quantifiers ``+ * ?`` and alternatives ``error|done`` are allowed."""
    history: tuple[HistoryKind, ...] | HistoryPattern | None = None
    """The kinds of the stored events, in order: a list, or a pattern like the frames one
    (``user function_call function_response error?``)."""
    tool_calls: dict[str, int] | None = None
    """How many times each tool must have been executed."""
    model_calls: ModelCallCount | None = None
    """How many model calls the turn makes, retries included: ``2`` (exactly), ``"1+"`` (at
    least one) or ``"1..5"`` (a range, for a model that fails and a client that may retry)."""
    auth: bool = False
    """Probe the target's authentication and history isolation (needs two users)."""

    @field_validator("frames")
    @classmethod
    def _frame_types(cls, v: str | None) -> str | None:
        if v is not None:
            check_names(v, FRAME_TYPES, "frame type")
        return v

    @field_validator("history")
    @classmethod
    def _history_kinds(cls, v: Any) -> Any:
        if isinstance(v, str):
            check_names(v, HISTORY_KINDS, "history kind")
        return v


RUNAWAY_MARGIN: Final = 10
"""Calls past ``model_calls`` after which the fake model answers a runaway loop with plain
text: GW-LLM-BUDGET has its evidence by then, and a gateway without a budget ends its loop
there instead of at its run bound."""


class GatewayLimits(_Model):
    model_calls: int = Field(50, ge=1)
    """The most model calls a turn may make: an interactive budget, far below ADK's 500."""
    run_timeout: Duration = 30.0
    """How long the harness waits for the stream to end (scaled, never below 10 s)."""
    dispose_within: Duration = 2.0
    """After the browser goes away, the gateway must close its model stream and stop calling
    the model and the tools within this time (scaled, never below 0.5 s)."""
    gateway_run_timeout: Duration = 120.0
    """The run bound the gateway is given (scaled) as ``STREAMPROOF_RUN_TIMEOUT``: the seed's
    ``new SseEmitter(120_000L)``. A scenario that changes it restarts the gateway."""

    @property
    def runaway_cap(self) -> int:
        """The fake model's ``runaway_cap`` for this scenario (:data:`RUNAWAY_MARGIN`)."""
        return self.model_calls + RUNAWAY_MARGIN


ModelPath = Literal["direct", "forward-proxy", "buffering-proxy"]
MODEL_PATHS: Final[tuple[str, ...]] = get_args(ModelPath)
PROXY_ENGINE: Final = "mitmproxy"
"""The engine that carries out the model link when the path is a forward proxy."""


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
    request: Annotated[
        ChatRequest,
        BeforeValidator(
            _request_shorthand,
            json_schema_input_type=Annotated[
                str, Field(min_length=1, description="the user's text: {text: ...}")
            ]
            | ChatRequest,
        ),
    ]
    expect: GatewayExpect = GatewayExpect()
    limits: GatewayLimits = GatewayLimits()
    links: Links = Links()
    """Faults per proxied hop: ``browser`` (harness to gateway), ``model`` (gateway to the
    fake model)."""
    model_path: ModelPath = "direct"
    """How the gateway reaches the fake model. ``direct``: ``GOOGLE_GEMINI_BASE_URL`` names the
    model link (plain http). ``forward-proxy``: a corporate proxy, the model link run by
    mitmproxy as a forward proxy that intercepts TLS; the gateway gets ``HTTPS_PROXY`` and the
    proxy's CA in ``SSL_CERT_FILE``, and the fake model is served over HTTPS.
    ``buffering-proxy``: the same proxy, holding each SSE response until it ends (no faults
    on the model link then)."""

    @field_validator("links")
    @classmethod
    def _gateway_links(cls, v: Links) -> Links:
        if v.a2a or "a2a" in v.engine:
            raise ValueError("a gateway scenario has no 'a2a' link; use 'browser' or 'model'")
        problems = engine_problems(v.plans(), v.engine.items())
        if problems:
            raise ValueError("; ".join(problems))
        return v

    @model_validator(mode="after")
    def _proxy_path(self) -> GatewayScenario:
        if self.model_path == "direct":
            return self
        named = self.links.engine.get("model")
        if named is not None and named != PROXY_ENGINE:
            raise ValueError(
                f"model_path {self.model_path} runs the model link on {PROXY_ENGINE}; "
                f"links.engine.model cannot be {named}"
            )
        problems = engine_problems({"model": self.links.model}, [("model", PROXY_ENGINE)])
        problems += intercepted_tls_problems(self.links.model, "links.model")
        if problems:
            raise ValueError("; ".join(problems))
        if self.model_path == "buffering-proxy" and self.links.model:
            raise ValueError(
                "model_path buffering-proxy: the buffering proxy carries out no fault plan; "
                "leave links.model empty"
            )
        return self

    @property
    def model_engine(self) -> str | None:
        """The engine the scenario runs its model link on, if it decides (``None``: the run's
        engine)."""
        if self.model_path != "direct":
            return PROXY_ENGINE
        return self.links.engine.get("model")

    @property
    def all_needs(self) -> tuple[GatewayCapability, ...]:
        """``needs`` plus what the request and expectations imply, in a fixed order."""
        implied: set[str] = set(self.needs)
        if not self.request.streaming:
            implied.add("none_mode")
        if self.expect.auth:
            implied.add("auth")
        order: tuple[GatewayCapability, ...] = (
            "multi_agent",
            "none_mode",
            "history",
            "auth",
            "run_timeout",
        )
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

    @property
    def horizon(self) -> float:
        """How long the scenario lasts at most in scenario time, for a progress display: the
        time the stream is given to end."""
        return self.limits.run_timeout


__all__ = [
    "FRAME_TYPES",
    "HISTORY_KINDS",
    "MARKER_PLACEHOLDER",
    "MODEL_PATHS",
    "PROXY_ENGINE",
    "CallCount",
    "ChatRequest",
    "FrameType",
    "GatewayExpect",
    "GatewayLimits",
    "GatewayScenario",
    "HistoryKind",
    "ModelPath",
    "ModelTurn",
]
