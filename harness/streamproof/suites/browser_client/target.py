"""Browser-client target files (``kind: browser-client``): a page, by URL or by a command that
serves it, with the selectors the screen is read by; or a reducer module run in Node
(docs/reference/browser-client-contract.md)::

    kind: browser-client
    name: my-chat-page
    command: ["npm", "run", "serve", "--", "--port", "{port}"]
    port: auto
    path: /chat.html
    gateway: {query: gateway}
    screen: {prompt: "#prompt", send: "#send", message: ".message", draft: ".draft",
             status: "#status", error: "#error"}

    kind: browser-client
    name: my-reducer
    module: src/reducer.mjs
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from streamproof.core.durations import Duration
from streamproof.targets.bugs import BugNames
from streamproof.targets.errors import TargetConfigError
from streamproof.targets.files import load_target_file

__all__ = [
    "AG_UI_TARGET",
    "DEFAULT_PAGE_TARGET",
    "PAGE_CAPABILITIES",
    "PROFILES",
    "REDUCER_TARGET",
    "BrowserEndpoints",
    "BrowserTarget",
    "GatewayHandoff",
    "Screen",
    "load_browser_target",
]

HERE = Path(__file__).resolve().parent
DEFAULT_PAGE_TARGET = HERE / "reference-page.yaml"
REDUCER_TARGET = HERE / "reference-reducer.yaml"
AG_UI_TARGET = HERE / "reference-ag-ui-page.yaml"
PORT_PLACEHOLDER = "{port}"
PAGE_CAPABILITIES = ("transport",)
"""What every page has and a reducer module lacks: a transport (faults on the stream, the tab,
the history endpoint, reconnects)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Screen(_Model):
    """CSS selectors the screen is read by (docs/reference/browser-client-contract.md)."""

    prompt: str = Field(min_length=1)
    send: str = Field(min_length=1)
    message: str = Field(min_length=1)
    message_author: str | None = None
    message_text: str | None = None
    draft: str = Field(min_length=1)
    draft_author: str | None = None
    draft_text: str | None = None
    status: str | None = None
    error: str | None = None


PROFILES = ("typed-frames", "ag-ui")
"""The wires the fake gateway speaks to a page: the seed's typed frames, or AG-UI events as
``ag-ui-adk`` streams them (docs/reference/browser-client-contract.md#ag-ui-pages)."""


class BrowserEndpoints(_Model):
    """The fake gateway's endpoints as the page calls them, ``METHOD /path`` templates."""

    chat: str = "POST /chat/{sessionId}"
    history: str = "GET /history/{sessionId}"

    @model_validator(mode="after")
    def _templates(self) -> BrowserEndpoints:
        for key in ("chat", "history"):
            method, _, path = getattr(self, key).partition(" ")
            if method.upper() not in ("GET", "POST", "PUT") or not path.startswith("/"):
                raise ValueError(
                    f"endpoints.{key}: write 'METHOD /path', e.g. 'POST /chat/{{sessionId}}'"
                )
        return self


class GatewayHandoff(_Model):
    """How the page learns the fake gateway's URL: a query parameter of the page's URL, or an
    environment variable of the command that serves it."""

    query: str | None = None
    """The query parameter (default ``gateway`` when ``env`` is not given)."""
    env: str | None = None

    @model_validator(mode="after")
    def _one(self) -> GatewayHandoff:
        if self.query is not None and self.env is not None:
            raise ValueError("gateway: give one of query (a parameter) or env, not both")
        return self

    @property
    def param(self) -> str | None:
        """The query parameter the page reads, if it is told that way."""
        if self.env is not None:
            return None
        return self.query or "gateway"


class BrowserTarget(_Model):
    kind: Literal["browser-client"] = "browser-client"
    name: str = Field(min_length=1)
    description: str | None = None
    url: str | None = None
    """The page, already served (``http://127.0.0.1:8000/chat.html``)."""
    command: tuple[str, ...] | None = None
    """argv of a command that serves the page; ``{python}`` is the harness's interpreter,
    ``{port}`` (inside any word) the port the harness picked."""
    cwd: str | None = None
    """Where the command runs, relative to the target file (default: streamproof's folder)."""
    env: dict[str, str] = Field(default_factory=dict)
    port: Annotated[int, Field(ge=1, le=65535)] | Literal["auto"] = "auto"
    path: str = "/"
    """The page's path on the command's server."""
    ready_timeout: Duration = 30.0
    """How long the served page has to answer (real seconds, not scaled)."""
    gateway: GatewayHandoff = GatewayHandoff()
    profile: Literal["typed-frames", "ag-ui"] = "typed-frames"
    """The wire the fake gateway speaks to the page."""
    endpoints: BrowserEndpoints = BrowserEndpoints()
    screen: Screen | None = None
    module: str | None = None
    """A reducer module (an ES module exporting ``reduce``), relative to the target file."""
    bug_param: str | None = None
    """A reference's switch for ``--bug NAME``: the page's query parameter (or, for a module,
    ``globalThis.STREAMPROOF_BUG``, with any value here)."""
    bugs: BugNames = ()

    @model_validator(mode="after")
    def _one_way_in(self) -> BrowserTarget:
        ways = [k for k in ("url", "command", "module") if getattr(self, k) is not None]
        if len(ways) != 1:
            raise ValueError(
                "a browser-client target needs exactly one of url, command (a page) or module "
                f"(a reducer), found {', '.join(ways) or 'none'}"
            )
        if self.module is None and self.screen is None:
            raise ValueError("a page needs screen: the selectors its screen is read by")
        if self.module is not None and self.screen is not None:
            raise ValueError("screen: selectors are read on a page; a module has none")
        if self.module is not None and self.profile != "typed-frames":
            raise ValueError("profile: a reducer module is given the seed's typed frames only")
        if self.command is not None and not self.command:
            raise ValueError("'command' must not be empty")
        if self.cwd is not None and self.command is None:
            raise ValueError("'cwd' is where the command runs; only a command has one")
        if self.gateway.env is not None and self.command is None:
            raise ValueError("gateway.env reaches a command; a page by url takes gateway.query")
        if not self.path.startswith("/"):
            raise ValueError("path: starts with '/'")
        if self.bugs and self.bug_param is None:
            raise ValueError("bugs: a target's mutants reach it through bug_param; set it too")
        return self

    @property
    def is_module(self) -> bool:
        return self.module is not None

    @property
    def capabilities(self) -> tuple[str, ...]:
        return () if self.is_module else PAGE_CAPABILITIES

    def argv(self, port: int) -> list[str]:
        assert self.command is not None
        return [
            sys.executable if part == "{python}" else part.replace(PORT_PLACEHOLDER, str(port))
            for part in self.command
        ]


def load_browser_target(path: str | Path | None) -> BrowserTarget:
    """The target file at ``path`` (the reference page when ``None``); a module path is made
    absolute against the file's folder and must exist."""
    file = Path(path) if path is not None else DEFAULT_PAGE_TARGET
    target = load_target_file(file, BrowserTarget, "browser-client")
    if target.module is not None:
        module = (file.parent / target.module).resolve()
        if not module.is_file():
            raise TargetConfigError(f"{file}: module: {target.module!r} is not a file")
        target = target.model_copy(update={"module": str(module)})
    return target
