"""Gateway targets: how to start or reach the gateway under test, and its endpoints.

A target file is YAML (see ``reference-gateway.yaml`` in the suite's folder for the bundled
reference). Either ``command`` (streamproof starts it with the contract's environment and
kills its process group afterwards) or ``url`` (streamproof attaches to a running gateway).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from streamproof.core.capabilities import GatewayCapability
from streamproof.core.durations import Duration
from streamproof.suites.gateway.profiles.wire import (
    PROFILES_WITH_SESSION_IN_BODY,
    FrameMapping,
    OnDisconnect,
    ProfileName,
)
from streamproof.targets.bugs import BugNames, bugs_need_bug_env
from streamproof.targets.build import Build
from streamproof.targets.files import load_target_file
from streamproof.targets.warm.request import check_warm_start

DEFAULT_TARGET = Path(__file__).parent.with_name("reference-gateway.yaml")
"""The bundled reference, in the suite's folder (harness/streamproof/suites/gateway/)."""

_ENDPOINT = re.compile(r"^(GET|POST|PUT|DELETE|PATCH) (/\S*)$")


PORT_PLACEHOLDER = "{port}"
"""In ``command``: replaced by the port streamproof gives the gateway (``port: auto`` or fixed)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Endpoints(_Model):
    chat: str = "POST /chat/{sessionId}"
    """Streams one turn: the user's text as the body (or ``chat_body``), SSE frames back."""
    chat_none: str | None = None
    """The same turn in non-streaming (NONE) mode, if the gateway offers one."""
    history: str | None = "GET /history/{sessionId}"
    """Returns the stored session events as ADK JSON (a list, or an object with ``events``)."""
    session: str | None = None
    """Creates the scenario's session before its first turn (ADK's ``POST
    /apps/{app}/users/{user}/sessions/{sessionId}``); ``None``: the gateway creates it itself."""

    @field_validator("chat", "chat_none", "history", "session")
    @classmethod
    def _shape(cls, v: str | None) -> str | None:
        if v is not None and not _ENDPOINT.match(v):
            raise ValueError(f"{v!r} is not 'METHOD /path' (e.g. 'POST /chat/{{sessionId}}')")
        return v


class Auth(_Model):
    header: str = "Authorization"
    users: dict[str, str] = Field(default_factory=dict)
    """User name to header value, e.g. ``alice: Bearer alice-token``; the first user chats."""


class Ready(_Model):
    """When the gateway counts as ready. Optional: without a ``path``, a started gateway is
    ready once a process of its own process group listens on its port (so a stranger on that
    port never passes for it); a gateway attached by ``url`` once it answers HTTP at all."""

    path: str | None = None
    """A path that answers 2xx once the gateway is ready (e.g. ``/healthz``); any other status
    means not yet."""
    timeout: Duration = 60.0

    @field_validator("path")
    @classmethod
    def _absolute(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith("/"):
            raise ValueError(f"{v!r} must start with '/'")
        return v


class FakePorts(_Model):
    """Fixed ports for the harness's fakes, for a gateway attached by URL that must be
    configured in advance (``GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:MODEL_PORT``)."""

    model: int = Field(0, ge=0, le=65535)
    tools: int = Field(0, ge=0, le=65535)


class GatewayTarget(_Model):
    kind: Literal["gateway"] = "gateway"
    name: str = "gateway"
    profile: ProfileName = "typed-frames"
    """The wire the gateway speaks: ``typed-frames`` (the seed's protocol), ``adk-events``
    (ADK's raw event JSON), ``ag-ui`` (AG-UI events) or ``ai-sdk-ui`` (the AI SDK UI message
    stream); :mod:`streamproof.suites.gateway.profiles` says how each rule reads on each."""
    frames: FrameMapping | None = None
    """A ``typed-frames`` gateway's own names for the seed's six frame kinds: per kind its SSE
    event name and where its payload fields live (``delta: {event: token, text: chunk}``)."""
    on_disconnect: OnDisconnect = "dispose"
    """What the gateway does with the run when the browser goes away: ``dispose`` it (the
    seed's rule, GW-DISPOSE) or ``detach`` it on purpose (the run finishes and is stored once,
    GW-DETACH-PERSIST-ONCE)."""
    command: tuple[str, ...] | None = None
    """argv; ``{python}`` is replaced by the harness's interpreter, ``{port}`` (inside any word)
    by the gateway's port (``port: auto`` or a fixed port)."""
    url: str | None = None
    cwd: str | None = None
    """The folder the command runs in, relative to the target file; default: the folder
    streamproof runs in."""
    build: Build | None = None
    """How to build the gateway before its command runs (skipped while up to date)."""
    env: dict[str, str] = Field(default_factory=dict)
    port: Annotated[int, Field(ge=0, le=65535)] | Literal["auto"] = 0
    """0: the gateway picks a port and prints it; ``auto``: the harness picks a free port."""
    listening_pattern: str = r"https?://(?:127\.0\.0\.1|localhost):(\d+)"
    ready: Ready = Ready()
    endpoints: Endpoints = Endpoints()
    chat_body: Any = None
    """A JSON body template for the chat turn, sent as ``application/json`` instead of the
    user's text as ``text/plain``: inside every string, ``{text}`` becomes the user's text and
    ``{sessionId}`` the session id; a string that is exactly ``{streaming}`` becomes ``true``
    for ``endpoints.chat`` and ``false`` for ``endpoints.chat_none``."""
    auth: Auth = Auth()
    fakes: FakePorts = FakePorts()
    """0 lets the system pick; set fixed ports when attaching by ``url``."""
    bug_env: str | None = None
    """The environment variable through which ``--bug NAME`` reaches the target (references)."""
    bugs: BugNames = ()
    """The mutant names ``bug_env`` accepts, for a reference of its own (the Java reference
    gateway); empty: the bundled reference's mutants."""
    run_timeout: bool = False
    """The gateway honours ``STREAMPROOF_RUN_TIMEOUT``: a run still going after that many
    seconds is stopped (its model call closed, its stream ended). Declares ``run_timeout``."""
    warm_start: bool = False
    """Fork each start from an interpreter that imported the command's module once (a command
    ``["{python}", "-m", MODULE, ...]`` whose module reads no environment while it is
    imported); docs/reference/target-files.md#warm-starts."""
    capabilities: tuple[GatewayCapability, ...] = ()
    """What the gateway serves beyond the contract: ``multi_agent`` must be declared here;
    ``none_mode``, ``history`` and ``auth`` follow from ``endpoints`` and ``auth`` (listing one
    here without its endpoint or users is an error)."""

    @model_validator(mode="after")
    def _one_way_in(self) -> GatewayTarget:
        if (self.command is None) == (self.url is None):
            raise ValueError("a target needs exactly one of 'command' or 'url'")
        if self.command is not None and not self.command:
            raise ValueError("'command' must not be empty")
        if self.cwd is not None and self.command is None:
            raise ValueError("'cwd' is where the command runs; a target attached by url has none")
        if self.build is not None and self.command is None:
            raise ValueError("'build' prepares the command; a target attached by url has none")
        check_warm_start(self.warm_start, self.command)
        try:
            re.compile(self.listening_pattern)
        except re.error as exc:
            raise ValueError(f"listening_pattern does not compile: {exc}") from None
        if self.command is not None and self.port == 0:
            if any(PORT_PLACEHOLDER in word for word in self.command):
                raise ValueError(
                    "command: '{port}' needs a port streamproof picks: set port: auto (or a "
                    "fixed port); with port: 0 the gateway picks its own"
                )
        return self

    @model_validator(mode="after")
    def _mapping_needs_typed_frames(self) -> GatewayTarget:
        if self.frames is not None and self.profile != "typed-frames":
            raise ValueError(
                f"frames: maps the seed's typed frames to other names; profile {self.profile!r} "
                "has its own event types (remove frames, or use profile: typed-frames)"
            )
        return self

    @model_validator(mode="after")
    def _session_id_reaches_gateway(self) -> GatewayTarget:
        """Every turn must name its session: in the endpoint's path or in ``chat_body``."""
        body_strings = list(_strings(self.chat_body))
        if self.chat_body is not None:
            if not any("{text}" in s for s in body_strings):
                raise ValueError(
                    "chat_body: no string holds '{text}', so the user's text would never be sent"
                )
            try:
                json.dumps(self.chat_body)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"chat_body: not JSON: {exc}") from None
        in_body = any("{sessionId}" in s for s in body_strings) or (
            self.chat_body is None and self.profile in PROFILES_WITH_SESSION_IN_BODY
        )
        endpoints = self.endpoints
        for key in ("chat", "chat_none"):
            template: str | None = getattr(endpoints, key)
            if template is not None and "{sessionId}" not in template and not in_body:
                raise ValueError(
                    f"endpoints.{key}: {template!r} must contain {{sessionId}} (or chat_body "
                    "must carry it)"
                )
        for key in ("history", "session"):
            template = getattr(endpoints, key)
            if template is not None and "{sessionId}" not in template:
                raise ValueError(f"endpoints.{key}: {template!r} must contain {{sessionId}}")
        return self

    @model_validator(mode="after")
    def _bugs_need_bug_env(self) -> GatewayTarget:
        bugs_need_bug_env(self.bugs, self.bug_env)
        return self

    @model_validator(mode="after")
    def _capabilities_backed(self) -> GatewayTarget:
        implied = self._implied()
        for capability in self.capabilities:
            backed = ("none_mode", "history", "auth", "run_timeout")
            if capability in backed and capability not in implied:
                source = {
                    "none_mode": "endpoints.chat_none",
                    "history": "endpoints.history",
                    "auth": "auth.users (two users)",
                    "run_timeout": "run_timeout",
                }[capability]
                raise ValueError(f"capabilities lists {capability!r} but {source} is not set")
        return self

    def _implied(self) -> set[str]:
        implied: set[str] = set()
        if self.endpoints.chat_none is not None:
            implied.add("none_mode")
        if self.endpoints.history is not None:
            implied.add("history")
        if self.auth_declared:
            implied.add("auth")
        if self.run_timeout:
            implied.add("run_timeout")
        return implied

    @property
    def declared(self) -> frozenset[str]:
        """Every capability the target serves: the listed ones and those its endpoints and
        users imply."""
        return frozenset({*self.capabilities, *self._implied()})

    @property
    def auth_declared(self) -> bool:
        return len(self.auth.users) >= 2

    def filled_chat_body(self, text: str, session_id: str, *, streaming: bool) -> Any:
        """``chat_body`` filled in for one turn (``None`` when the target gives none: the
        profile's own request is sent)."""
        if self.chat_body is None:
            return None
        return _fill(self.chat_body, {"{text}": text, "{sessionId}": session_id}, streaming)

    def argv(self, port: int) -> list[str]:
        """``command`` as run: ``{python}`` resolved, ``{port}`` replaced by ``port``."""
        assert self.command is not None
        return [
            sys.executable if part == "{python}" else part.replace(PORT_PLACEHOLDER, str(port))
            for part in self.command
        ]


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _fill(value: Any, words: Mapping[str, str], streaming: bool) -> Any:
    """``value`` with every placeholder of ``words`` replaced inside its strings, and the
    string ``{streaming}`` replaced by the boolean."""
    if isinstance(value, str):
        if value == "{streaming}":
            return streaming
        for word, replacement in words.items():
            value = value.replace(word, replacement)
        return value
    if isinstance(value, Mapping):
        return {_fill(k, words, streaming): _fill(v, words, streaming) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_fill(item, words, streaming) for item in value]
    return value


def load_target(path: str | Path | None) -> GatewayTarget:
    file = Path(path) if path is not None else DEFAULT_TARGET
    return load_target_file(file, GatewayTarget, "gateway")
