"""A2A client scenario + client target -> observation -> verdicts.

:class:`A2AClientEnvironment` owns what lives for a whole test process: the fake A2A server and
the ``a2a`` link (the fault proxy) in front of it. :meth:`A2AClientEnvironment.run` loads one
scenario into both (the script into the fake, the fault plan into the link), runs the client
command once (and again for a follow-up turn), and records everything into an
:class:`~streamproof.suites.a2a_client.observation.A2AClientObservation`. Its interface matches
:class:`~streamproof.suites.gateway.runner.GatewayEnvironment`, so the plugin and the CLI
dispatch on the scenario's kind::

    env = A2AClientEnvironment(load_client_target(path), bug=None, time_scale=0.1)
    await env.start()
    result = await env.run(scenario)       # .observation, .verdicts
    await env.close()
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from streamproof.core.capabilities import (
    CLIENT_CAPABILITIES,
    Binding,
    ScenarioSkipped,
    missing_reason,
)
from streamproof.core.concurrency import MAX_CONCURRENCY, merge_verdicts
from streamproof.core.durations import TimeScale
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.fakes.a2a import RPC_PATH, FakeA2AServer
from streamproof.fakes.a2a.ledger import A2ALedger
from streamproof.faults.engines import FaultLink
from streamproof.faults.engines.pool import EnginePool
from streamproof.faults.fired import judge_fault_plan
from streamproof.faults.plan import Fault
from streamproof.faults.records import LinkEvent
from streamproof.protocol import a2a
from streamproof.suites.a2a_client.checks import check_a2a_client
from streamproof.suites.a2a_client.checks.concurrency import Call, concurrency_verdicts
from streamproof.suites.a2a_client.checks.push import delivery_faults_fired
from streamproof.suites.a2a_client.concurrency import (
    call_marker,
    load_figures,
    split_ledger,
    tag,
    tag_script,
    untaggable,
)
from streamproof.suites.a2a_client.observation import (
    A2AClientObservation,
    ServerArtifact,
    ServerTask,
)
from streamproof.suites.a2a_client.result import ClientRun
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.a2a_client.target import ClientTarget, check_target_bug, run_client_turn
from streamproof.targets.build import ensure_built
from streamproof.targets.errors import TargetError

__all__ = ["A2AClientConcurrentResult", "A2AClientEnvironment", "A2AClientScenarioResult"]

MIN_PLAY_OUT_S: Final = 0.5
_TURN_ENDS: Final = a2a.TERMINAL_STATES | a2a.INTERRUPTED_STATES
CALL_SLACK_S: Final = 0.25
"""Under ``--concurrency K`` each call's time limits allow at least ``K`` times this, in real
seconds: K client processes boot and run side by side on the runner's cores (four Python
clients on two cores answered half a second late on a correct deadline), and a time limit
judges the client, not the machine's share of CPU. A client that waits on another call waits
for whole calls, seconds at the default scale, far past it."""
SETTLE_S: Final = 2.0
"""How long the harness waits after the last turn for the fake and the link to see the client's
connections go (they notice within tens of milliseconds)."""


def _served(binding: Binding) -> Literal["jsonrpc", "rest"]:
    """The binding the fake's card advertises for a run on ``binding`` (gRPC runs are
    skipped before they load)."""
    if binding == "grpc":
        raise ValueError("the fake A2A server does not serve gRPC")
    return binding


@dataclass(frozen=True)
class A2AClientScenarioResult:
    observation: A2AClientObservation
    verdicts: tuple[Verdict, ...]


def _follow_up(scenario: A2AClientScenario, first: ClientRun) -> tuple[str, str, str] | None:
    """The follow-up turn's prompt, task id and context id, when the scenario has one and the
    first turn ended waiting for input (or auth) with both ids."""
    result = first.result
    if (
        scenario.client.follow_up is not None
        and result is not None
        and result.status in ("input-required", "auth-required")
        and result.task_id
        and result.context_id
    ):
        return scenario.client.follow_up, result.task_id, result.context_id
    return None


@dataclass(frozen=True)
class A2AClientConcurrentResult:
    """What a scenario run as K calls at once gave: the observation shown for it (the first
    call that broke a rule, else the first), every verdict, each call, and the load figures."""

    observation: A2AClientObservation
    verdicts: tuple[Verdict, ...]
    calls: tuple[Call, ...]
    load: dict[str, Any]


class A2AClientEnvironment:
    """The fake A2A server and the ``a2a`` link, started once, loaded per scenario."""

    def __init__(
        self,
        target: ClientTarget,
        *,
        bug: str | None = None,
        time_scale: float = 1.0,
        engine: str | None = None,
    ) -> None:
        if bug is not None:
            check_target_bug(target, bug)
        self.target = target
        self.bug = bug
        self.scale = TimeScale(time_scale)
        self.fake = FakeA2AServer()
        self.link: FaultLink | None = None
        self.link_engine: str | None = None
        self.push_link: FaultLink | None = None
        """The ``push`` link: the fake's push sender -> the relay -> the client's webhook."""
        self.push_engine: str | None = None
        self._push_url: str | None = None
        self.engines = EnginePool(engine)
        self._fake_url: str | None = None
        self._url: str | None = None

    @property
    def link_engines(self) -> dict[str, str]:
        engines = {"a2a": self.link_engine} if self.link_engine is not None else {}
        if self.push_engine is not None:
            engines["push"] = self.push_engine
        return engines

    @property
    def target_label(self) -> str:
        return f"{self.target.name}[bug={self.bug}]" if self.bug else self.target.name

    @property
    def target_info(self) -> dict[str, Any]:
        """The target as a report names it: the command as run (``{python}`` resolved), the
        wires it speaks and its capabilities."""
        return {
            "kind": self.target.kind,
            "name": self.target.name,
            "label": self.target_label,
            "command": self.target.argv(),
            "wires": list(self.target.wires),
            "bindings": list(self.target.bindings),
            "capabilities": sorted(self.target.capabilities),
        }

    @property
    def url(self) -> str:
        """The agent's base URL as the client is given it (the link's address)."""
        if self._url is None:
            raise RuntimeError("A2AClientEnvironment.url before start")
        return self._url

    async def start(self) -> None:
        if self.target.build is not None:
            await ensure_built(self.target.name, self.target.build)
        self._fake_url = await self.fake.start()
        try:
            await self._use_engine(self.engines.default)
        except BaseException:
            await self.fake.close()
            raise

    async def _use_engine(self, name: str) -> None:
        """Put the A2A link on engine ``name`` (the client is started per turn with the
        link's address, so a link can change between scenarios)."""
        if name == self.link_engine:
            return
        assert self._fake_url is not None
        if self.link is not None:
            await self.link.close()
            self.link, self.link_engine, self._url = None, None, None
        engine = await self.engines.get(name)
        link = engine.link("a2a", self._fake_url, time_scale=self.scale)
        self._url = await link.start()
        self.link, self.link_engine = link, name

    async def _use_push_engine(self, name: str) -> None:
        """Put the push link on engine ``name``, in front of the fake's push relay (started on
        the first push scenario: a webhook's URL is known only when a client sends it, so the
        link points at the relay, which forwards each delivery to its webhook)."""
        if name == self.push_engine:
            return
        if self.push_link is not None:
            await self.push_link.close()
            self.push_link, self.push_engine, self._push_url = None, None, None
        engine = await self.engines.get(name)
        link = engine.link("push", self.fake.push_relay_url, time_scale=self.scale)
        self._push_url = await link.start()
        self.push_link, self.push_engine = link, name

    async def close(self) -> None:
        if self.push_link is not None:
            await self.push_link.close()
            self.push_link = None
        if self.link is not None:
            await self.link.close()
            self.link = None
        await self.engines.close()
        await self.fake.close()
        self._url = None

    async def run(self, scenario: A2AClientScenario) -> A2AClientScenarioResult:
        if self.link is None or self._url is None:
            raise RuntimeError("A2AClientEnvironment.run before start")
        self._skip_unless_declared(scenario)
        plans = {"a2a": scenario.links.a2a}
        if scenario.push is not None:
            plans["push"] = scenario.links.push
        chosen, problems = self.engines.choose(plans, scenario.links.engine.items())
        if problems:
            raise ScenarioSkipped(
                f"the run's engine {self.engines.default} cannot carry out this scenario's "
                f"plan: {'; '.join(problems)}",
                cause="engine",
            )
        await self.engines.ready(chosen.values())
        await self._use_engine(chosen["a2a"])
        push_link: FaultLink | None = None
        if scenario.push is not None:
            await self._use_push_engine(chosen["push"])
            push_link = self.push_link
            assert push_link is not None
        link = self.link
        assert link is not None and self._url is not None
        scale = self.scale
        # The card advertises the link, so every call the client makes crosses it; through a
        # forward proxy the client is given the agent's own address and HTTP_PROXY instead.
        forward = "a2a" in scenario.links.forward
        agent_url = self._fake_url if forward else self._url
        assert agent_url is not None
        proxy = self._url if forward else None
        binding = scenario.run_binding
        self.fake.load(
            scenario.script,
            time_scale=scale,
            public_url=agent_url + RPC_PATH,
            binding=_served(binding),
            push_via=self._push_url if push_link is not None else None,
        )
        link.load(scenario.links.a2a)
        if push_link is not None:
            push_link.load(scenario.links.push)
        t0 = time.monotonic()
        self.fake.set_epoch(t0)
        link.set_epoch(t0)
        if push_link is not None:
            push_link.set_epoch(t0)
        deadline, idle = scale(scenario.client.deadline), scale(scenario.client.idle)
        grace = scale(scenario.limits.grace)

        async def turn(
            index: int, prompt: str, task_id: str | None, context_id: str | None
        ) -> ClientRun:
            return await run_client_turn(
                self.target,
                url=agent_url,
                prompt=prompt,
                deadline_s=deadline,
                idle_s=idle,
                grace_s=grace,
                epoch=t0,
                turn=index,
                task_id=task_id,
                context_id=context_id,
                bug=self.bug,
                time_scale=self.scale.factor,
                proxy=proxy,
                first_request=self._first_request,
                binding=binding,
                push=scenario.push is not None,
            )

        turns = [await turn(0, scenario.client.prompt, None, None)]
        if turns[0].failure is not None and turns[0].failure.kind == "start":
            # Not a verdict on the client's behaviour: the target could not be run at all.
            raise TargetError(turns[0].failure.message)
        again = _follow_up(scenario, turns[0])
        if again is not None:
            turns.append(await turn(1, *again))
        await self.fake.wait_quiet(SETTLE_S)
        await link.wait_quiet(SETTLE_S)
        if push_link is not None:
            await push_link.wait_quiet(SETTLE_S)
        await self._let_tasks_finish(max(grace, MIN_PLAY_OUT_S))
        observation = self._observe(
            scenario,
            tuple(turns),
            self.fake.ledger,
            tolerance_s=scale(scenario.limits.tolerance),
            link_events=tuple(link.events),
            faults=scenario.links.a2a,
            reply=scenario.reply.text if scenario.reply is not None else None,
            follow_up=scenario.client.follow_up,
        )
        if push_link is not None:
            observation = observation.model_copy(
                update={"push_link_events": tuple(push_link.events)}
            )
        plans["a2a"] = scenario.links.a2a
        events = {"a2a": observation.link_events or ()}
        if push_link is not None:
            events["push"] = observation.push_link_events or ()
        verdicts = judge_fault_plan(
            check_a2a_client(observation),
            plans,
            events,
            scenario.requirements,
            delivery_faults_fired(observation),
        )
        return A2AClientScenarioResult(observation, tuple(verdicts))

    def _skip_unless_declared(self, scenario: A2AClientScenario) -> None:
        missing = scenario.missing_needs(self.target.declared)
        if missing:
            reason = missing_reason(self.target.name, missing, (), CLIENT_CAPABILITIES)
            raise ScenarioSkipped(reason or f"needs {', '.join(missing)}")
        if scenario.run_binding == "grpc":
            raise ScenarioSkipped(
                "the gRPC binding is not served by this install's fake A2A server "
                "(docs/reference/a2a-client-contract.md#bindings)",
                cause="engine",
            )

    def _observe(
        self,
        scenario: A2AClientScenario,
        turns: tuple[ClientRun, ...],
        ledger: A2ALedger,
        *,
        tolerance_s: float,
        link_events: tuple[LinkEvent, ...] | None,
        faults: tuple[Fault, ...],
        reply: str | None,
        follow_up: str | None,
    ) -> A2AClientObservation:
        """What a call (or one of K calls at once) is judged on, its tasks read from the fake."""
        scale = self.scale
        return A2AClientObservation(
            scenario=scenario.id,
            target=self.target_label,
            wire=scenario.server.wire,
            binding=scenario.run_binding,
            resubscribe_snapshot=scenario.server.resubscribe_snapshot,
            snapshot_artifacts=scenario.server.snapshot_artifacts,
            time_scale=scale.factor,
            deadline_s=scale(scenario.client.deadline),
            idle_s=scale(scenario.client.idle),
            tolerance_s=tolerance_s,
            turns=turns,
            ledger=ledger,
            link_events=link_events,
            faults=faults,
            server_tasks=tuple(self._server_tasks(r.task_id for r in ledger.tasks)),
            push=scenario.push is not None,
            push_faults=scenario.push.faults if scenario.push is not None else (),
            reply_text=reply,
            follow_up=follow_up,
            expect=scenario.expect,
        )

    async def run_concurrent(
        self, scenario: A2AClientScenario, k: int
    ) -> A2AClientConcurrentResult:
        """``scenario`` as ``k`` calls at once against the one fake agent (``--concurrency``;
        how the calls are told apart: :mod:`streamproof.suites.a2a_client.concurrency`)."""
        if not 2 <= k <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency must be 2 to {MAX_CONCURRENCY}, not {k}")
        if self.link is None or self._url is None or self._fake_url is None:
            raise RuntimeError("A2AClientEnvironment.run_concurrent before start")
        self._skip_unless_declared(scenario)
        why = untaggable(scenario)
        if why is not None:
            raise ScenarioSkipped(f"not run with --concurrency {k}: {why}", cause="concurrency")
        await self.engines.ready([self.engines.default])
        await self._use_engine(self.engines.default)
        link = self.link
        assert link is not None and self._url is not None
        scale = self.scale
        token = secrets.token_hex(4)
        markers = [call_marker(i, token) for i in range(k)]
        keyed = {m: tag_script(scenario.script, m) for m in markers}
        self.fake.load(
            scenario.script,
            time_scale=scale,
            public_url=self._url + RPC_PATH,
            keyed=keyed,
            binding=_served(scenario.run_binding),
        )
        link.load(())
        t0 = time.monotonic()
        self.fake.set_epoch(t0)
        link.set_epoch(t0)
        deadline, idle = scale(scenario.client.deadline), scale(scenario.client.idle)
        grace = scale(scenario.limits.grace)
        url = self._url

        def first_request_of(marker: str) -> Callable[[float], float | None]:
            # The call's own first request: under its path (its card, usually), or its message.
            def first(after: float) -> float | None:
                ledger = self.fake.ledger
                mine = {m.request for m in ledger.messages if marker in m.text}
                return next(
                    (
                        r.t
                        for r in ledger.requests
                        if r.t >= after and (marker in r.path or r.index in mine)
                    ),
                    None,
                )

            return first

        async def turn(
            index: int, marker: str, prompt: str, task_id: str | None, context_id: str | None
        ) -> ClientRun:
            return await run_client_turn(
                self.target,
                url=f"{url.rstrip('/')}/{marker}",  # the agent under the call's own path
                prompt=tag(prompt, marker),
                deadline_s=deadline,
                idle_s=idle,
                grace_s=grace,
                epoch=t0,
                turn=index,
                task_id=task_id,
                context_id=context_id,
                bug=self.bug,
                time_scale=scale.factor,
                first_request=first_request_of(marker),
                binding=scenario.run_binding,
                push=scenario.push is not None,
            )

        async def call(marker: str) -> tuple[ClientRun, ...]:
            first = await turn(0, marker, scenario.client.prompt, None, None)
            again = _follow_up(scenario, first)
            if again is not None:
                return (first, await turn(1, marker, *again))
            return (first,)

        runs = await asyncio.gather(*(call(m) for m in markers))
        for turns in runs:
            if turns[0].failure is not None and turns[0].failure.kind == "start":
                raise TargetError(turns[0].failure.message)
        await self.fake.wait_quiet(SETTLE_S)
        await link.wait_quiet(SETTLE_S)
        await self._let_tasks_finish(max(grace, MIN_PLAY_OUT_S))
        ledger = self.fake.ledger
        calls: list[Call] = []
        for marker, turns, own in zip(markers, runs, split_ledger(ledger, markers), strict=True):
            script = keyed[marker]
            observation = self._observe(
                scenario,
                turns,
                own,
                tolerance_s=max(scale(scenario.limits.tolerance), CALL_SLACK_S * k),
                link_events=None,  # no fault acts on the shared link: the fake's records stand
                faults=(),
                reply=script.reply.text if script.reply is not None else None,
                follow_up=(
                    tag(scenario.client.follow_up, marker)
                    if scenario.client.follow_up is not None
                    else None
                ),
            )
            calls.append(Call(marker, observation))
        per_call = [check_a2a_client(c.observation) for c in calls]
        verdicts = [*concurrency_verdicts(calls, ledger), *merge_verdicts(per_call, "call")]
        shown = next(
            (
                c.observation
                for c, vs in zip(calls, per_call, strict=True)
                if any(v.outcome is Outcome.FAIL for v in vs)
            ),
            calls[0].observation,
        )
        return A2AClientConcurrentResult(shown, tuple(verdicts), tuple(calls), load_figures(calls))

    def _first_request(self, after: float) -> float | None:
        """When the fake saw the first request of a turn started at ``after`` (seconds since
        the scenario's epoch): the moment the client's own time limits started."""
        return next((r.t for r in self.fake.ledger.requests if r.t >= after), None)

    async def _let_tasks_finish(self, timeout: float) -> None:
        """Give the fake's tasks up to ``timeout`` seconds to reach the end of their turn:
        a task runs on its own clock after the client has gone, and a check may want what it
        would have produced (a structured artifact the client failed on halfway, say)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            tasks = [self.fake.task(t.task_id) for t in self.fake.ledger.tasks]
            if all(t is None or t.status.state in _TURN_ENDS for t in tasks):
                return
            await asyncio.sleep(0.02)

    def _server_tasks(self, task_ids: Iterable[str]) -> list[ServerTask]:
        out: list[ServerTask] = []
        for task_id in task_ids:
            task = self.fake.task(task_id)
            if task is None:
                continue
            out.append(
                ServerTask(
                    task_id=task.id,
                    context_id=task.context_id,
                    state=task.status.state.value,
                    artifacts=tuple(
                        ServerArtifact(id=a.artifact_id, name=a.name, text=a2a.text_of(a.parts))
                        for a in task.artifacts
                    ),
                )
            )
        return out
