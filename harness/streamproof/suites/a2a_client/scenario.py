"""A2A client scenarios (``kind: a2a-client``): what the fake agent does, which faults the
``a2a`` link injects, how the client is called, and what must be observed.

One document reads like the seed's worked example::

    id: a2a_client/summary-survives-proxy-timeout
    title: The seed's worked example, a summary that survives a proxy timeout
    kind: a2a-client
    requirements: [A2A-C-RECOVERY, A2A-C-SNAPSHOT-FIRST, A2A-C-ARTIFACTS-COMPLETE]
    client: {deadline: 90s, idle: 20s, prompt: "Summarise the market in three sections"}
    task:                                   # the fake server's timeline (fakes/a2a/script.py)
      - {at: 0s,  status: submitted}
      - {at: 12s, artifact: {id: summary, text: "Section 1 ..."}}
      - {at: 70s, artifact: {id: summary, append: true, text: "Section 3 ...", last: true}}
      - {at: 78s, status: completed}
    server: {wire: "0.3"}                   # optional; how the fake behaves
    links:
      a2a:
        - {when: {rpc: message/stream, after: 40s}, do: stall}
    expect:
      result: {status: completed, artifacts: {summary: complete}}
      ledger: [message/stream, tasks/get, tasks/resubscribe]
      tasks_created: 1

``binding`` pins the A2A binding the call runs on (``jsonrpc`` or ``rest``); without it the
scenario runs once on every binding the client target declares that can carry its wire (REST
and gRPC are A2A 1.0 bindings: a ``wire: "0.3"`` scenario runs on JSON-RPC only), one scenario
id per binding: the plain id is the JSON-RPC run, ``<id>[rest]`` the REST one
(:meth:`A2AClientScenario.variants`; docs/reference/a2a-client-contract.md#bindings).

``task`` / ``reply`` / ``server`` are the fake server's script
(:class:`~streamproof.fakes.a2a.script.A2AScript`, validated the same way); ``links.a2a`` is a
fault plan (:class:`~streamproof.faults.plan.Fault`). ``client.follow_up`` is the user's answer
for a second turn: when the first turn ends input-required or auth-required, the client is
run again with it and the task and context ids of its first result.

``expect.ledger`` is a pattern over the JSON-RPC methods the server received, one term per
list item (or a space-separated string): a method name, ``a|b`` alternatives (optionally in
parentheses) and a ``+``, ``*`` or ``?`` quantifier. 1.0 names are read as their 0.3
equivalents (``SendStreamingMessage`` is ``message/stream``), so one pattern fits both wires.

A parsed document is ``A2AClientScenario.model_validate(data)``; :class:`ScenarioError`
locations come from the shared loader in :mod:`streamproof.suites.loading`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from streamproof.core.capabilities import Binding, ClientCapability
from streamproof.core.durations import Duration
from streamproof.core.patterns import json_schema_pattern
from streamproof.core.requirements import RequirementIds
from streamproof.fakes.a2a.fixture import fixture_timeline
from streamproof.fakes.a2a.push.script import PushScript
from streamproof.fakes.a2a.script import A2AScript, Reply, ReplySpelling, ServerBehaviour, Step
from streamproof.faults.engine_names import EngineName
from streamproof.faults.engines.catalog import engine_problems
from streamproof.faults.plan import Fault
from streamproof.protocol.a2a import KNOWN_METHODS, METHODS, op_of, version_of
from streamproof.protocol.fixture import FIXTURE_CONTEXT_KEY, parse_fixture, read_with
from streamproof.suites.a2a_client.result import ResultStatus

__all__ = [
    "A2AClientExpect",
    "A2AClientLimits",
    "A2AClientLinks",
    "A2AClientScenario",
    "ClientCall",
    "ResultExpect",
    "canonical_method",
    "compile_ledger_pattern",
    "ledger_matches",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- the ledger pattern ------------------------------------------------------------------------

_METHOD_NAME = r"[A-Za-z][A-Za-z0-9_/]*"
_NAMES = rf"{_METHOD_NAME}(?:\|{_METHOD_NAME})*"
_TERM = re.compile(rf"^(?:\(({_NAMES})\)|({_NAMES}))([+*?]?)$")


def canonical_method(method: str) -> str:
    """A JSON-RPC method in its 0.3 spelling (``GetTask`` -> ``tasks/get``); others as given."""
    op = op_of(method)
    return METHODS["0.3"].get(op, method) if op is not None else method


def _terms(pattern: str | Sequence[str]) -> list[str]:
    if isinstance(pattern, str):
        return pattern.split()
    return [t for item in pattern for t in str(item).split()]


@lru_cache(maxsize=256)
def _compile(terms: tuple[str, ...]) -> re.Pattern[str]:
    if not terms:
        raise ValueError("the ledger pattern is empty")
    parts: list[str] = []
    for term in terms:
        match = _TERM.match(term)
        if match is None:
            raise ValueError(
                f"bad term {term!r} in the ledger pattern: write JSON-RPC method names "
                "(message/stream, tasks/get...), 'a|b' alternatives and an optional + * ? "
                "quantifier"
            )
        grouped, bare, quantifier = match.groups()
        names = (grouped or bare).split("|")
        for name in names:
            if version_of(name) is None:
                close = difflib.get_close_matches(name, KNOWN_METHODS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(
                    f"{name!r} in the ledger pattern is not an A2A JSON-RPC method{hint}; "
                    f"e.g. {', '.join(METHODS['0.3'].values())}"
                )
        alternatives = "|".join(re.escape(canonical_method(n)) for n in names)
        parts.append(f"(?:(?:{alternatives}) ){quantifier}")
    return re.compile("".join(parts))


def compile_ledger_pattern(pattern: str | Sequence[str]) -> re.Pattern[str]:
    """A regex over ``" ".join(methods) + " "``; raises ValueError naming the bad term."""
    return _compile(tuple(_terms(pattern)))


def ledger_matches(pattern: str | Sequence[str], methods: Sequence[str]) -> bool:
    """Whether the methods (either wire's spelling) match the pattern as a whole."""
    names = "".join(f"{canonical_method(m)} " for m in methods)
    return compile_ledger_pattern(pattern).fullmatch(names) is not None


# --- the model ---------------------------------------------------------------------------------


class ClientCall(_Model):
    """How the client is called (``client:``)."""

    deadline: Duration
    """``STREAMPROOF_DEADLINE_S`` (scaled): the seed's call deadline."""
    idle: Duration
    """``STREAMPROOF_IDLE_S`` (scaled): the watchdog's idle limit."""
    prompt: str = Field("Summarise the market in three sections", min_length=1)
    follow_up: str | None = Field(None, min_length=1)
    """The answer sent in a second turn when the first ends input-required/auth-required."""

    @model_validator(mode="after")
    def _sane(self) -> ClientCall:
        if self.deadline <= 0:
            raise ValueError("deadline must be a positive duration")
        if not 0 < self.idle < self.deadline:
            raise ValueError(
                f"idle ({self.idle:g}s) must be positive and shorter than the deadline "
                f"({self.deadline:g}s)"
            )
        return self


ArtifactExpect = Literal["complete", "incomplete"]


class ResultExpect(_Model):
    status: ResultStatus | None = None
    artifacts: dict[str, ArtifactExpect] = Field(default_factory=dict)
    """Artifact id -> ``complete`` (the result has the server's full text and does not say
    incomplete) or ``incomplete`` (the result says incomplete)."""


LedgerTerms = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "pattern": json_schema_pattern(KNOWN_METHODS),
            "description": "JSON-RPC method names (either wire's spelling), 'a|b' alternatives, "
            "an optional + * ? quantifier; several terms separated by spaces",
        }
    ),
]
"""A ledger pattern's terms as its JSON Schema says (the loader checks the same)."""


def _split_terms(value: Any) -> Any:
    return tuple(value.split()) if isinstance(value, str) else value


class A2AClientExpect(_Model):
    result: ResultExpect | None = None
    """The first turn's result."""
    follow_up: ResultExpect | None = None
    """The follow-up turn's result."""
    ledger: Annotated[
        tuple[str, ...] | None,
        BeforeValidator(
            _split_terms, json_schema_input_type=LedgerTerms | tuple[LedgerTerms, ...] | None
        ),
    ] = None
    """A pattern over the JSON-RPC methods the server received, in order (all turns)."""
    tasks_created: int | None = Field(None, ge=0)

    @field_validator("ledger")
    @classmethod
    def _compiles(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if v is not None:
            compile_ledger_pattern(v)
        return v


class A2AClientLimits(_Model):
    tolerance: Duration = 5.0
    """How late a timed action (recovery, the end of the call) may be, in scenario time. The
    seed's watchdog "checks every few seconds". Checks never allow less than
    :data:`~streamproof.suites.a2a_client.checks.MIN_SLACK_S` real seconds."""
    grace: Duration = 10.0
    """How long past its deadline a client may run before the harness kills it (scaled, at
    least 1 s)."""
    run_timeout: Duration = 600.0
    """The longest a whole scenario may take (scaled), every turn included."""


class A2AClientLinks(_Model):
    a2a: tuple[Fault, ...] = ()
    """The fault plan of the hop between the client and the fake A2A server."""
    push: tuple[Fault, ...] = ()
    """The fault plan of the hop between the fake's push sender and the client's webhook
    (a scenario with ``push:``; docs/reference/faults.md#push)."""
    engine: dict[Literal["a2a", "push"], EngineName] = Field(default_factory=dict)
    """The engine that must carry out the plan (``engine: {a2a: toxiproxy}``); default: the
    run's ``--engine``, else ``inline``."""
    forward: tuple[Literal["a2a"], ...] = ()
    """Links the client reaches as a forward proxy (``forward: [a2a]``): it is given the
    agent's own URL and ``HTTP_PROXY`` pointing at the link, as behind a corporate proxy,
    rather than the link's URL. Needs a client that declares ``proxy_env``."""

    @model_validator(mode="after")
    def _engine_can(self) -> A2AClientLinks:
        problems = engine_problems({"a2a": self.a2a, "push": self.push}, self.engine.items())
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _reply_shorthand(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


class TaskFixture(_Model):
    """``task: {fixture: fixtures/a2a/0.3/....sse}``: the timeline is a canned stream."""

    fixture: str = Field(min_length=1)
    """An SSE body of one streaming call (0.3 ``message/stream`` or 1.0
    ``SendStreamingMessage``), found relative to the scenario file's folder, then its
    ancestors. Each event becomes one step, at its recorded time."""
    chunk_delay: Duration | None = None
    """Put the steps this far apart instead of at their recorded times."""
    follow_up: tuple[Step, ...] | TaskFixture | None = None
    """When the stream ends input-required or auth-required: the next turn, as steps or as
    another fixture."""


class _FixtureFailure:
    """What ``task`` holds when its fixture could not be read: the scenario's before-validator
    reads the fixture (it needs ``server.wire``) and leaves the problem here, so that the
    field reports it at the ``task`` line."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _task_input(value: Any) -> Any:
    if isinstance(value, _FixtureFailure):
        raise ValueError(value.problem)
    return value


def _lifts(data: dict[str, Any]) -> bool:
    """Whether a document pins a 1.0 binding (``rest``, ``grpc``) without writing
    ``server.wire``: its run is then on the 1.0 wire (:meth:`A2AClientScenario.variants`)."""
    server = data.get("server")
    written = isinstance(server, dict) and "wire" in server
    return data.get("binding") in ("rest", "grpc") and not written


_STEP_INDEX = re.compile(r"^task\[(\d+)\](\S*)")


def _timeline_from_fixture(spec: Any, info: ValidationInfo, wire: Any, path: str) -> Any:
    """The ``task`` steps a ``{fixture: ...}`` mapping stands for (other values unchanged)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("fixture"), str):
        return spec
    parsed = TaskFixture.model_validate(spec)
    context = info.context if isinstance(info.context, dict) else {}
    shown, raw = read_with(context.get(FIXTURE_CONTEXT_KEY), parsed.fixture)
    timeline = fixture_timeline(parse_fixture(raw, shown), shown, chunk_delay=parsed.chunk_delay)
    wires: dict[Any, str] = {0.3: "0.3", 1.0: "1.0"}
    served = wires.get(wire, wire) if not isinstance(wire, bool) else wire
    if served in ("0.3", "1.0") and served != timeline.wire:
        raise ValueError(
            f"{shown} is a {timeline.wire} stream but server.wire is {served}; set "
            f'server.wire: "{timeline.wire}" (or "both")'
        )
    steps = list(timeline.steps)
    follow_up = spec.get("follow_up")
    if follow_up is not None and steps:
        steps[-1] = {
            **steps[-1],
            "follow_up": _timeline_from_fixture(follow_up, info, wire, f"{path}.follow_up"),
        }
    try:
        A2AScript.model_validate({"task": steps})
    except ValidationError as exc:
        message = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
        match = _STEP_INDEX.match(message)
        if match is not None and int(match.group(1)) < len(timeline.events):
            event = timeline.events[int(match.group(1))]
            rest = message[match.end() :].lstrip(": ")
            raise event.problem(shown, f"as a task timeline: {rest}") from None
        raise ValueError(f"{shown}: as a task timeline: {message}") from None
    return steps


class A2AClientScenario(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.\-/]*$")
    title: str = Field(min_length=1)
    kind: Literal["a2a-client"] = "a2a-client"
    requirements: RequirementIds
    """The requirements this scenario is built to test (every check runs anyway)."""
    needs: tuple[ClientCapability, ...] = ()
    """Capabilities the client target must declare; a follow-up turn implies ``follow_up`` and
    the server's wire implies that wire (``both``: either)."""
    binding: Binding | None = None
    """The A2A binding the call runs on; ``None``: every binding the target declares (one run
    each, the JSON-RPC one under the plain id). REST and gRPC need ``server.wire`` 1.0 or
    both."""
    client: ClientCall
    task: Annotated[
        tuple[Step, ...] | None,
        BeforeValidator(_task_input, json_schema_input_type=tuple[Step, ...] | TaskFixture | None),
    ] = None
    """The fake server's timeline: steps, or ``{fixture: fixtures/a2a/...}`` (a canned
    stream, one step per event)."""
    reply: Annotated[
        Reply | None, BeforeValidator(_reply_shorthand, json_schema_input_type=ReplySpelling | None)
    ] = None
    server: ServerBehaviour = Field(default_factory=ServerBehaviour)
    push: PushScript | None = None
    """Push notifications: the client registers a webhook and the fake delivers the task's
    updates to it, with these delivery faults (:mod:`streamproof.fakes.a2a.push.script`);
    needs a client that declares ``push``."""
    links: A2AClientLinks = A2AClientLinks()
    expect: A2AClientExpect = A2AClientExpect()
    limits: A2AClientLimits = A2AClientLimits()

    @model_validator(mode="before")
    @classmethod
    def _task_fixture(cls, data: Any, info: ValidationInfo) -> Any:
        lifted = isinstance(data, dict) and _lifts(data)
        if lifted:
            server = data.get("server")
            data = {
                **data,
                "server": {**(server if isinstance(server, dict) else {}), "wire": "1.0"},
            }
        if isinstance(data, dict) and isinstance(data.get("task"), dict):
            server = data.get("server")
            wire = server.get("wire", "0.3") if isinstance(server, dict) else "0.3"
            if lifted:
                wire = "both"  # a 0.3 fixture's steps are the same task on the 1.0 wire
            try:
                task = _timeline_from_fixture(data["task"], info, wire, "task")
            except ValidationError as exc:  # the mapping itself (an unknown key...)
                error = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in error["loc"])
                message = str(error["msg"])
                if error["type"] == "extra_forbidden":
                    keys = ", ".join(TaskFixture.model_fields)
                    message = f"unknown key; keys here are {keys}"
                task = _FixtureFailure(f"{where}: {message}" if where else message)
            except ValueError as exc:
                task = _FixtureFailure(str(exc))
            return {**data, "task": task}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> A2AClientScenario:
        # The fake's own validation: one of task/reply, times in order, nothing after a
        # terminal state... (its messages name the step, e.g. task[4]).
        try:
            A2AScript(task=self.task, reply=self.reply, server=self.server, push=self.push)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            raise ValueError(str(err["msg"]).removeprefix("Value error, ")) from None
        if self.links.push and self.push is None:
            raise ValueError("links.push needs a push: section (no webhook, no push link)")
        if self.expect.follow_up is not None and self.client.follow_up is None:
            raise ValueError("expect.follow_up needs client.follow_up, the answer to send")
        if self.binding not in (None, "jsonrpc") and self.server.wire == "0.3":
            raise ValueError(
                f"binding {self.binding} is an A2A 1.0 binding, and server.wire is written as "
                '0.3 (A2A 0.3\'s own HTTP+JSON routes are not served); set server.wire to "1.0" '
                'or "both", or leave it out (the run is then on the 1.0 wire), or drop binding'
            )
        turns = 2 if self.client.follow_up is not None else 1
        needed = turns * (self.client.deadline + self.limits.grace)
        if self.limits.run_timeout < needed:
            raise ValueError(
                f"limits.run_timeout ({self.limits.run_timeout:g}s) is shorter than the "
                f"{turns} turn(s) may take ({needed:g}s: deadline + grace each)"
            )
        return self

    @property
    def horizon(self) -> float:
        """How long the scenario lasts at most in scenario time, for a progress display: the
        call's deadline, once per turn."""
        turns = 2 if self.client.follow_up is not None else 1
        return turns * self.client.deadline

    @property
    def run_binding(self) -> Binding:
        """The binding this scenario runs on: its own, else JSON-RPC (the plain id's)."""
        return self.binding or "jsonrpc"

    def variants(self, bindings: Sequence[Binding]) -> tuple[A2AClientScenario, ...]:
        """The runs of this scenario on a target declaring ``bindings``: itself when it pins a
        binding; otherwise one per declared binding that can carry it, JSON-RPC under the
        plain id, the others as ``<id>[<binding>]``. REST and gRPC are A2A 1.0 bindings: they
        carry a scenario on the 1.0 or both wire, and one that does not write its wire (the
        seed's rules hold on either) on the 1.0 wire; a scenario written for the 0.3 wire runs
        on JSON-RPC only. Never empty: when no declared binding can carry it, the plain id's
        run is there, skipped for the binding it lacks."""
        if self.binding is not None:
            return (self,)
        runs: list[A2AClientScenario] = [self] if "jsonrpc" in bindings else []
        for b in dict.fromkeys(bindings):
            if b == "jsonrpc" or (self.server.wire == "0.3" and not self.lifts):
                continue
            update: dict[str, Any] = {"binding": b, "id": f"{self.id}[{b}]"}
            if self.server.wire == "0.3":
                update["server"] = self.server.model_copy(update={"wire": "1.0"})
            runs.append(self.model_copy(update=update))
        return tuple(runs) or (self,)

    @property
    def lifts(self) -> bool:
        """Whether its REST and gRPC runs are lifted to the 1.0 wire: it does not write
        ``server.wire``, so it holds on either wire."""
        return "wire" not in self.server.model_fields_set

    def missing_needs(self, declared: frozenset[str]) -> list[str]:
        """What this scenario needs that a client declaring ``declared`` lacks."""
        needs: list[str] = list(self.needs)
        if self.client.follow_up is not None and "follow_up" not in needs:
            needs.append("follow_up")
        if self.links.forward and "proxy_env" not in needs:
            needs.append("proxy_env")
        needs.append(f"binding {self.run_binding}")
        if self.push is not None and "push" not in needs:
            needs.append("push")
        missing = [n for n in needs if n not in declared]
        wires = ["0.3", "1.0"] if self.server.wire == "both" else [self.server.wire]
        if self.run_binding != "jsonrpc":
            wires = ["1.0"]  # REST and gRPC are A2A 1.0 bindings
        if not any(f"wire {w}" in declared for w in wires):
            missing.append(f"wire {wires[0]}" if len(wires) == 1 else "wire 0.3")
        return missing

    @property
    def script(self) -> A2AScript:
        """The fake A2A server's script."""
        return A2AScript(task=self.task, reply=self.reply, server=self.server, push=self.push)
