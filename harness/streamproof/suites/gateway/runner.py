"""Scenario + target -> observation -> verdicts.

:class:`GatewayEnvironment` owns what lives for a whole test process: the fake model, the fake
tool service and the gateway. :meth:`GatewayEnvironment.run` resets the fakes for one scenario,
drives one chat turn, and records everything into a :class:`GatewayObservation`. The pytest
plugin and the CLI both go through here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import secrets
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from streamproof.core.capabilities import GATEWAY_CAPABILITIES, ScenarioSkipped, missing_reason
from streamproof.core.concurrency import MAX_CONCURRENCY
from streamproof.core.durations import TimeScale
from streamproof.core.verdicts import Outcome, Verdict
from streamproof.fakes.model import FakeModel
from streamproof.fakes.records import MARKER_PLACEHOLDER, ModelCall, ToolCall
from streamproof.fakes.tools import FakeTools
from streamproof.faults.engines import FaultLink
from streamproof.faults.engines.pool import EnginePool
from streamproof.faults.fired import judge_fault_plan
from streamproof.faults.records import LinkEvent
from streamproof.protocol.sse import Decoder
from streamproof.suites.gateway.checks.concurrency import Session, concurrency_verdicts
from streamproof.suites.gateway.checks.disposal import MIN_BOUND as MIN_DISPOSE_BOUND
from streamproof.suites.gateway.checks.link_faults import browser_link_cut
from streamproof.suites.gateway.checks.run_bound import run_bound_deadline
from streamproof.suites.gateway.concurrency import (
    ConcurrentResult,
    load_figures,
    merge_verdicts,
    own_link_events,
    session_marker,
    tag_turns,
    tool_calls_of,
    untaggable,
)
from streamproof.suites.gateway.observation import (
    AuthProbe,
    ChatResponse,
    Frame,
    GatewayObservation,
)
from streamproof.suites.gateway.profiles.base import ChatBody, ReadAs
from streamproof.suites.gateway.profiles.registry import check_gateway, profile
from streamproof.suites.gateway.scenario import GatewayLimits, GatewayScenario, ModelPath
from streamproof.suites.gateway.target import GatewayTarget, RunningGateway, start_gateway
from streamproof.targets.errors import TargetConfigError, TargetError

CONTRACT_TOOL = "lookupOrder"
"""The tool every conformance gateway's agent has (docs/reference/gateway-contract.md)."""
MIN_RUN_TIMEOUT = 10.0
"""The harness waits at least this long for a stream to end, whatever the time scale."""
DISPOSE_MARGIN = 0.25
"""Extra wait after the disposal bound before the harness looks, so a call closed right at
the bound is seen closed."""
QUIET_SECONDS = 0.5
"""After a run that did not end cleanly, the fakes must see no call for this long before the
next scenario starts (an orphaned run goes on calling the model between its steps)."""
LINK_SETTLE_SECONDS = 0.5
"""After a stream ended, how long (real time, at most) the harness lets the model link see the
gateway close a model call it has just given up (a run stopped at its bound closes its model
call just before its last frame): the link's records are read after that."""
SETTLE_SECONDS = 2.0
"""How long (scaled, at least 1 s) the harness waits after a stream ends for the model calls the
gateway still has open to finish, before it reads the history."""


MAX_PARKED = 3
"""How many gateways started for other settings stay running beside the one in use (the
bundled gateway suite uses four settings: direct, and three proxy paths or run bounds)."""

GatewaySettings = tuple[str, ModelPath, float]
"""What a gateway is started with and keeps while it runs: the model link's engine, the model
path and the run bound (real seconds)."""


@dataclass
class _Parked:
    """A gateway started for other settings, kept running with its own links while another
    is in use, to be used again when a scenario needs its settings."""

    gateway: RunningGateway
    links: dict[str, FaultLink]
    link_engines: dict[str, str]
    browser_url: str


@dataclass(frozen=True)
class ScenarioResult:
    observation: GatewayObservation
    verdicts: tuple[Verdict, ...]


class GatewayEnvironment:
    """The fakes and the gateway, started once, reset per scenario."""

    def __init__(
        self,
        target: GatewayTarget,
        *,
        bug: str | None = None,
        time_scale: float = 1.0,
        engine: str | None = None,
    ) -> None:
        self.target = target
        self.bug = bug
        self.scale = TimeScale(time_scale)
        self.model = FakeModel()
        self.tools = FakeTools()
        self.gateway: RunningGateway | None = None
        self.links: dict[str, FaultLink] = {}
        self.browser_url = ""
        self.engines = EnginePool(engine)
        self._link_engines: dict[str, str] = {}
        """The engine of each link in place (the model link's is fixed while the gateway runs:
        the gateway was started with its address)."""
        self._run_bound: float | None = None
        """The run bound (real seconds) the running gateway was given."""
        self._model_path: ModelPath = "direct"
        """How the running gateway reaches the model (fixed while it runs, as the engine)."""
        self._contract_env: dict[str, str] = {}
        self._parked: dict[GatewaySettings, _Parked] = {}
        """Gateways of other settings, still running, the least recently used first."""
        self.starts = 0
        """How many times a gateway process was started (for the benchmarks)."""

    def _quiet_for(self, t0: float) -> float:
        """Seconds since either fake last saw a call start or end (since ``t0``, the epoch
        both fakes record against, when there was none)."""
        last = max(
            (
                *(c.t if c.t_end is None else max(c.t, c.t_end) for c in self.model.calls),
                *(c.t for c in self.tools.calls),
            ),
            default=0.0,
        )
        return time.monotonic() - t0 - last

    async def _wait_quiet(self, limit: float, t0: float) -> None:
        """Until neither fake has seen a call for QUIET_SECONDS and no model call is open (at
        most ``limit``). The quiet spell is counted from the last call's start or end, so one
        that has already passed (while the runner waited out the disposal bound, say) is not
        waited for again: the next scenario starts at once instead of QUIET_SECONDS later."""
        deadline = time.monotonic() + limit
        while True:
            await self.model.wait_idle(max(deadline - time.monotonic(), 0.0))
            quiet = self._quiet_for(t0)
            if quiet >= QUIET_SECONDS and not self.model.busy:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(max(QUIET_SECONDS - quiet, 0.01), left))

    def _horizon(self, scenario: GatewayScenario) -> float:
        """How long the scripted model can keep a call busy: the scaled sum of its delays."""
        total = 0.0
        for turn in scenario.model:
            total += turn.chunk_delay + sum(
                c.delay if c.delay is not None else turn.chunk_delay for c in turn.chunks
            )
        return min(self.scale(total) + 5.0, 60.0)

    def _detached_wait(self, scenario: GatewayScenario) -> float:
        """How long a detached run is given to end after the browser left: its run bound (the
        one the gateway was given, else the scenario's), never less than the script needs."""
        bound = self._run_bound or self.scale(scenario.limits.gateway_run_timeout)
        return max(bound + 2.0, self._horizon(scenario))

    def _stream_wait(self, scenario: GatewayScenario) -> float:
        """How long the harness waits for the stream to end: the scenario's ``run_timeout``
        (scaled, at least MIN_RUN_TIMEOUT), and never less than the run bound of a gateway that
        declares it honours one (plus GW-RUN-BOUND's tolerance). A gateway whose model client
        retries longer than that (ADK Java's defaults: about 57 s of backoff) is ended by its
        own bound, and the harness must still be listening when the error frame comes."""
        wait = max(self.scale(scenario.limits.run_timeout), MIN_RUN_TIMEOUT)
        if "run_timeout" in self.target.declared and self._run_bound is not None:
            wait = max(wait, run_bound_deadline(self._run_bound))
        return wait

    @property
    def link_engines(self) -> dict[str, str]:
        return dict(self._link_engines)

    @property
    def target_label(self) -> str:
        return f"{self.target.name}[bug={self.bug}]" if self.bug else self.target.name

    @property
    def target_info(self) -> dict[str, Any]:
        """The target as a report names it: the command as run (``{python}`` resolved) or the
        URL it was attached by, the address it answered on once started, its capabilities."""
        target = self.target
        command = target.command
        return {
            "kind": target.kind,
            "name": target.name,
            "label": self.target_label,
            "profile": target.profile,
            "command": None
            if command is None
            else [sys.executable if part == "{python}" else part for part in command],
            # ``{port}`` stays a placeholder here: the port is per start; base_url names it.
            "url": target.url,
            "base_url": self.gateway.base_url if self.gateway is not None else None,
            "capabilities": sorted(target.declared),
        }

    async def start(self) -> None:
        try:
            model_url = await self.model.start(port=self.target.fakes.model)
            tools_url = await self.tools.start(port=self.target.fakes.tools)
        except OSError as exc:
            raise TargetConfigError(
                f"target {self.target.name!r}: cannot bind the fakes to the ports in "
                f"'fakes' ({self.target.fakes.model}, {self.target.fakes.tools}): "
                f"{exc.strerror or exc}"
            ) from None
        self._model_url = model_url
        self._contract_env = {
            "GOOGLE_API_KEY": "streamproof-fake-key",
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
            "STREAMPROOF_TOOL_URL": tools_url,
        }
        await self._start_gateway(
            self.engines.default, "direct", self.scale(GatewayLimits().gateway_run_timeout)
        )
        await self._browser_link(self.engines.default)

    async def _start_gateway(
        self, model_engine: str, model_path: ModelPath, run_bound: float
    ) -> None:
        """Start the gateway behind a model link of ``model_engine`` (the gateway reaches the
        fake model through the link, so the scenario can reset, stall or split what the model
        sends). On a proxy path the link is a forward proxy that intercepts TLS, and the
        gateway learns of it only through the proxy variables (:func:`proxy_environment`)."""
        engine = await self.engines.get(model_engine)
        model_link: FaultLink
        if model_path == "direct":
            model_link = engine.link("model", self._model_url, time_scale=self.scale)
            model_env = {"GOOGLE_GEMINI_BASE_URL": await model_link.start()}
        else:
            from streamproof.faults.engines.mitmproxy import MitmproxyEngine

            if not isinstance(engine, MitmproxyEngine):
                raise TypeError(f"model_path {model_path} needs the mitmproxy engine")
            forward = engine.forward_link(
                "model", time_scale=self.scale, buffer_sse=model_path == "buffering-proxy"
            )
            model_link = forward
            proxy_url = await forward.start()
            model_env = {
                **proxy_environment(proxy_url, str(engine.ca_cert)),
                "GOOGLE_GEMINI_BASE_URL": await self.model.serve_tls(),
            }
        self.links["model"] = model_link
        self._link_engines["model"] = model_engine
        self._model_path = model_path
        self._run_bound = run_bound
        env = {
            **self._contract_env,
            **model_env,
            "STREAMPROOF_RUN_TIMEOUT": f"{run_bound:.3f}",
        }
        self.gateway = await start_gateway(
            self.target, env, bug=self.bug, ready_scale=self.scale.factor
        )
        self.starts += 1

    async def _browser_link(self, browser_engine: str) -> None:
        assert self.gateway is not None
        old = self.links.pop("browser", None)
        if old is not None:
            await old.close()
        engine = await self.engines.get(browser_engine)
        browser_link = engine.link("browser", self.gateway.base_url, time_scale=self.scale)
        self.links["browser"] = browser_link
        self._link_engines["browser"] = browser_engine
        self.browser_url = await browser_link.start()

    async def _use_engines(self, scenario: GatewayScenario) -> None:
        """Put each link on the engine the scenario runs it with: the browser link is swapped;
        a new model-link engine restarts the gateway behind a new model link."""
        named: dict[str, str] = {str(k): str(v) for k, v in scenario.links.engine.items()}
        if scenario.model_engine is not None:
            named["model"] = scenario.model_engine
        chosen, problems = self.engines.choose(
            {"browser": scenario.links.browser, "model": scenario.links.model}, named.items()
        )
        if problems:
            raise ScenarioSkipped(
                f"the run's engine {self.engines.default} cannot carry out this scenario's "
                f"plan: {'; '.join(problems)}",
                cause="engine",
            )
        await self.engines.ready(chosen.values())
        run_bound = self.scale(scenario.limits.gateway_run_timeout)
        wanted: GatewaySettings = (chosen["model"], scenario.model_path, run_bound)
        if wanted != self._settings():
            await self._switch(wanted, chosen["browser"])
        if chosen["browser"] != self._link_engines.get("browser"):
            await self._browser_link(chosen["browser"])

    def _settings(self) -> GatewaySettings | None:
        """The settings the gateway in use was started with (None before the first start)."""
        model_engine = self._link_engines.get("model")
        if self.gateway is None or model_engine is None or self._run_bound is None:
            return None
        return (model_engine, self._model_path, self._run_bound)

    async def _switch(self, wanted: GatewaySettings, browser_engine: str) -> None:
        """Put a gateway of ``wanted`` settings in use: the one started for them earlier when
        it still runs, else a new one. The gateway in use is parked, running, with its links
        (the oldest parked one is closed beyond MAX_PARKED): a scenario whose settings differ
        from the previous one's no longer pays a gateway start each time (about 2 s for the
        reference gateway's imports; docs/explanation/performance.md). A parked gateway is what a
        gateway kept between two scenarios of the same settings always was: nothing of one
        scenario is judged in another, since each has sessions and a script of its own and
        the runner waits for quiet after a run that did not end cleanly."""
        parked = self._parked.pop(wanted, None)
        current = self._settings()
        if current is not None and self.gateway is not None:
            self._parked[current] = _Parked(
                self.gateway, dict(self.links), dict(self._link_engines), self.browser_url
            )
            while len(self._parked) > MAX_PARKED:
                oldest = next(iter(self._parked))
                await self._close_parked(self._parked.pop(oldest))
        self.gateway, self.links, self._link_engines = None, {}, {}
        if parked is not None and parked.gateway.crashed() is None:
            self.gateway, self.links = parked.gateway, parked.links
            self._link_engines, self.browser_url = parked.link_engines, parked.browser_url
            self._model_path, self._run_bound = wanted[1], wanted[2]
            return
        if parked is not None:
            await self._close_parked(parked)  # it died while parked: start it again
        model_engine, model_path, run_bound = wanted
        await self._start_gateway(model_engine, model_path, run_bound)
        await self._browser_link(browser_engine)

    @staticmethod
    async def _close_parked(parked: _Parked) -> None:
        for link in parked.links.values():
            await link.close()
        await parked.gateway.close()

    async def close(self) -> None:
        for link in self.links.values():
            await link.close()
        if self.gateway is not None:
            await self.gateway.close()
        while self._parked:
            await self._close_parked(self._parked.pop(next(iter(self._parked))))
        await self.engines.close()
        await self.model.close()
        await self.tools.close()

    async def prepare(self, scenario: GatewayScenario) -> RunningGateway:
        """Check the target can run ``scenario`` (skip if not) and put its links in place."""
        if self.gateway is None:
            raise RuntimeError("GatewayEnvironment.run before start")
        crashed = self.gateway.crashed()
        if crashed is not None:
            raise TargetError(crashed)
        missing = missing_reason(
            self.target.name, scenario.all_needs, self.target.declared, GATEWAY_CAPABILITIES
        )
        if missing is not None:
            raise ScenarioSkipped(missing)
        await self._use_engines(scenario)
        assert self.gateway is not None
        return self.gateway

    def user_headers(self, index: int = 0) -> dict[str, str]:
        """The auth header of the target's ``index``-th user (wrapping round), or none."""
        users = list(self.target.auth.users.values())
        return {self.target.auth.header: users[index % len(users)]} if users else {}

    async def run(self, scenario: GatewayScenario) -> ScenarioResult:
        gateway = await self.prepare(scenario)
        marker = f"SP-SECRET-{secrets.token_hex(8)}"
        self.model.load(scenario.model, time_scale=self.scale.factor)
        self.tools.load(scenario.tools, marker)
        self.links["model"].load(scenario.links.model)
        self.links["browser"].load(scenario.links.browser)
        session_id = new_session_id()
        headers = self.user_headers()
        async with aiohttp.ClientSession() as http:
            session_error = await self.set_up_session(http, gateway, session_id, headers)
        t0 = time.monotonic()
        self.set_epoch(t0)
        turn = await self.drive(
            scenario,
            gateway,
            session_id,
            headers,
            scenario.request.text,
            t0,
            lambda: (tuple(self.model.calls), tuple(self.tools.calls)),
        )
        if turn.disconnected_at is not None or turn.response.end != "clean":
            # An orphaned run (a broken gateway) may still be calling the model and the tools:
            # let it finish before the next scenario loads a new script, so runs never mix.
            await self._wait_quiet(self._horizon(scenario), t0)
        observation = self.observe(scenario, gateway, turn, session_error, marker)
        verdicts = judge_fault_plan(
            check_gateway(observation),
            scenario.links.plans(),
            observation.link_events,
            scenario.requirements,
        )
        return ScenarioResult(observation, tuple(verdicts))

    async def run_concurrent(self, scenario: GatewayScenario, k: int) -> ConcurrentResult:
        """``scenario`` as ``k`` sessions at once against this one gateway (``--concurrency``;
        how the copies are told apart: :mod:`streamproof.suites.gateway.concurrency`)."""
        if not 2 <= k <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency must be 2 to {MAX_CONCURRENCY}, not {k}")
        gateway = await self.prepare(scenario)
        why = untaggable(scenario)
        if why is not None:
            raise ScenarioSkipped(f"not run with --concurrency {k}: {why}", cause="concurrency")
        token = secrets.token_hex(4)
        markers = [session_marker(i, token) for i in range(k)]
        secret = f"SP-SECRET-{secrets.token_hex(8)}"
        self.model.load_keyed(
            {m: tag_turns(scenario.model, m) for m in markers}, time_scale=self.scale.factor
        )
        self.tools.load(scenario.tools, secret)
        self.links["model"].load(scenario.links.model)
        self.links["browser"].load(scenario.links.browser)
        # A scenario that probes auth reads another user's view of the session: every copy is
        # the first user's then. Otherwise the copies take the target's users in turn.
        headers = [self.user_headers(0 if scenario.expect.auth else i) for i in range(k)]
        session_ids = [new_session_id() for _ in range(k)]
        texts = [f"{scenario.request.text} [{m}]" for m in markers]
        async with aiohttp.ClientSession() as http:
            session_errors = await asyncio.gather(
                *(
                    self.set_up_session(http, gateway, sid, h)
                    for sid, h in zip(session_ids, headers, strict=True)
                )
            )
        t0 = time.monotonic()
        self.set_epoch(t0)

        def snapshot_for(marker: str) -> tuple[tuple[ModelCall, ...], tuple[ToolCall, ...]]:
            return tuple(self.model.calls_for(marker)), tool_calls_of(self.tools.calls, marker)

        turns = await asyncio.gather(
            *(
                self.drive(
                    scenario,
                    gateway,
                    session_ids[i],
                    headers[i],
                    texts[i],
                    t0,
                    functools.partial(snapshot_for, markers[i]),
                )
                for i in range(k)
            )
        )
        if any(t.disconnected_at is not None or t.response.end != "clean" for t in turns):
            await self.wait_quiet_after(scenario, t0)
        sessions = tuple(
            Session(m, self.observe(scenario, gateway, own, error, secret))
            for m, own, error in zip(
                markers,
                (
                    dataclasses.replace(t, link_events=own_link_events(t.link_events, sid))
                    for t, sid in zip(turns, session_ids, strict=True)
                ),
                session_errors,
                strict=True,
            )
        )
        unkeyed = tuple(self.model.calls)
        per_session = [check_gateway(s.observation) for s in sessions]
        verdicts = [*concurrency_verdicts(sessions, unkeyed), *merge_verdicts(per_session)]
        shown = next(
            (
                s.observation
                for s, vs in zip(sessions, per_session, strict=True)
                if any(v.outcome is Outcome.FAIL for v in vs)
            ),
            sessions[0].observation,
        )
        return ConcurrentResult(shown, tuple(verdicts), sessions, unkeyed, load_figures(sessions))

    async def set_up_session(
        self,
        http: aiohttp.ClientSession,
        gateway: RunningGateway,
        session_id: str,
        headers: dict[str, str],
    ) -> str | None:
        """Set-up, not the browser's traffic: straight to the gateway, before the clock."""
        return await _set_up_session(http, gateway.endpoint("session", session_id), headers)

    def set_epoch(self, t0: float) -> None:
        self.model.set_epoch(t0)
        self.tools.set_epoch(t0)
        for link in self.links.values():
            link.set_epoch(t0)

    async def drive(
        self,
        scenario: GatewayScenario,
        gateway: RunningGateway,
        session_id: str,
        headers: dict[str, str],
        text: str,
        t0: float,
        snapshot: Callable[[], tuple[tuple[ModelCall, ...], tuple[ToolCall, ...]]],
    ) -> Turn:
        """One chat turn of ``session_id`` as the browser sends it (through the browser
        link), then its history and auth probes; ``snapshot`` reads this turn's model and tool
        calls once the stream has ended and the gateway settled."""
        which = "chat" if scenario.request.streaming else "chat_none"
        # What the browser does goes through the browser link.
        endpoint = gateway.endpoint(which, session_id, base=self.browser_url)
        history_endpoint = gateway.endpoint("history", session_id, base=self.browser_url)
        assert endpoint is not None  # none_mode is declared exactly when chat_none is set
        request = scenario.request
        stream_wait = self._stream_wait(scenario)
        body = chat_request(self.target, text, session_id, streaming=request.streaming)
        wire = profile(self.target.profile)
        read_as = ReadAs(self.target.frames, request.streaming)
        async with aiohttp.ClientSession() as http:
            response, frames = await _stream_chat(
                http,
                endpoint,
                body.data,
                {**headers, "Content-Type": body.content_type},
                timeout=stream_wait,
                t0=t0,
                disconnect_after=request.disconnect_after_frames,
                # The scenario counts the seed's frames: on another wire, the events that read
                # as one of them (an AG-UI RUN_STARTED is none).
                count=lambda got: len(wire.seed_frames(got, read_as)),
            )
            disconnected_at = response.elapsed if response.end == "client-closed" else None
            if disconnected_at is None:
                response, disconnected_at = _browser_left(response, self.links["browser"].events)
            history_read_at: float | None = None
            after_run: _HistoryRead | None = None
            if disconnected_at is not None:
                if request.reload:
                    history_read_at = time.monotonic() - t0
                    history, history_error = await _read_history(http, history_endpoint, headers)
                if self.target.on_disconnect == "detach":
                    # The run goes on without the browser, on purpose: let it end (within its
                    # bound), then read what a later reload shows.
                    await self._wait_quiet(self._detached_wait(scenario), t0)
                    read_at = time.monotonic() - t0
                    stored, stored_error = await _read_history(http, history_endpoint, headers)
                    after_run = _HistoryRead(stored, stored_error, round(read_at, 4))
                    if history_read_at is None:
                        history_read_at, history, history_error = read_at, stored, stored_error
                else:
                    # Give the gateway its disposal bound, then look: a model stream still
                    # open or a call started since then is an orphaned run.
                    bound = max(self.scale(scenario.limits.dispose_within), MIN_DISPOSE_BOUND)
                    await _sleep_until(t0 + disconnected_at + bound + DISPOSE_MARGIN)
            else:
                await self.model.wait_idle(max(self.scale(SETTLE_SECONDS), 1.0))
                if response.end in ("clean", "error"):
                    await self.links["model"].wait_quiet(LINK_SETTLE_SECONDS)
            if history_read_at is None:
                history_read_at = time.monotonic() - t0
                history, history_error = await _read_history(http, history_endpoint, headers)
            # Snapshot before the auth probes: a gateway that wrongly accepts a probe would
            # start another run, and its model calls are not part of this turn.
            model_calls, tool_calls = snapshot()
            link_events = {name: tuple(link.events) for name, link in self.links.items()}
            probes = None
            if scenario.expect.auth and self.target.auth_declared:
                probes = await _auth_probes(http, gateway, session_id, self.target)
            elif scenario.expect.auth:
                probes = ()
        return Turn(
            response=response,
            frames=tuple(frames),
            disconnected_at=disconnected_at,
            history=history,
            history_error=history_error,
            history_read_at=history_read_at,
            model_calls=model_calls,
            tool_calls=tool_calls,
            link_events=link_events,
            probes=probes,
            stream_wait=stream_wait,
            request_text=text,
            request_body=body.json,
            after_run=after_run,
        )

    def observe(
        self,
        scenario: GatewayScenario,
        gateway: RunningGateway,
        turn: Turn,
        session_error: str | None,
        marker: str,
    ) -> GatewayObservation:
        """What one turn gives the checks."""
        return GatewayObservation(
            scenario=scenario.id,
            target=self.target_label,
            profile=self.target.profile,
            frame_mapping=self.target.frames,
            on_disconnect=self.target.on_disconnect,
            request_body=turn.request_body,
            session_error=session_error,
            # A leak can only be judged where a tool payload carried the marker.
            marker=marker if MARKER_PLACEHOLDER in json.dumps(scenario.tools) else "",
            request_text=turn.request_text,
            streaming=scenario.request.streaming,
            response=turn.response,
            frames=turn.frames,
            model_calls=turn.model_calls,
            tool_calls=turn.tool_calls,
            service_tools=service_tools(scenario),
            history=turn.history,
            history_error=turn.history_error,
            history_read_at=round(turn.history_read_at, 4),
            disconnected_at=turn.disconnected_at,
            history_after_run=turn.after_run.events if turn.after_run else None,
            history_after_run_error=turn.after_run.error if turn.after_run else None,
            history_after_run_at=turn.after_run.at if turn.after_run else None,
            link_events=turn.link_events,
            auth_probes=turn.probes,
            auth_declared=self.target.auth_declared,
            scripted_calls=scenario.scripted_calls,
            scripted_agents=scenario.scripted_agents,
            expect=scenario.expect,
            limits=scenario.limits,
            time_scale=self.scale.factor,
            stream_wait_s=turn.stream_wait,
            target_log=gateway.log(),
            run_bound_s=self._run_bound if "run_timeout" in self.target.declared else None,
            model_path=scenario.model_path,
        )

    async def wait_quiet_after(self, scenario: GatewayScenario, t0: float) -> None:
        """Let an orphaned run finish calling the fakes before the next scenario (``t0``: the
        epoch the fakes record against)."""
        await self._wait_quiet(self._horizon(scenario), t0)


@dataclass(frozen=True)
class Turn:
    """What the harness saw of one chat turn, before it becomes an observation."""

    response: ChatResponse
    frames: tuple[Frame, ...]
    disconnected_at: float | None
    history: tuple[dict[str, Any], ...] | None
    history_error: str | None
    history_read_at: float
    model_calls: tuple[ModelCall, ...]
    tool_calls: tuple[ToolCall, ...]
    link_events: dict[str, tuple[LinkEvent, ...]]
    probes: tuple[AuthProbe, ...] | None
    stream_wait: float
    request_text: str
    request_body: Any = None
    after_run: _HistoryRead | None = None


@dataclass(frozen=True)
class _HistoryRead:
    """A history read after a detached run ended: the events, or what went wrong, and when."""

    events: tuple[dict[str, Any], ...] | None
    error: str | None
    at: float


def chat_request(target: GatewayTarget, text: str, session_id: str, *, streaming: bool) -> ChatBody:
    """The chat request of one turn: the target's ``chat_body`` filled in, else its profile's own
    request (the user's text as the body on the seed's wire)."""
    filled = target.filled_chat_body(text, session_id, streaming=streaming)
    if filled is not None:
        return ChatBody(json.dumps(filled).encode("utf-8"), "application/json", filled)
    request = profile(target.profile).request
    if request is None:
        return ChatBody(text.encode("utf-8"), "text/plain; charset=utf-8")
    return request(text, session_id, streaming)


def new_session_id() -> str:
    return f"sp-{uuid.uuid4().hex[:16]}"


def service_tools(scenario: GatewayScenario) -> tuple[str, ...]:
    """The tools the fake tool service serves in ``scenario`` (the contract's one included)."""
    return tuple(sorted({*scenario.tools, CONTRACT_TOOL}))


def proxy_environment(proxy_url: str, ca_file: str) -> dict[str, str]:
    """What a gateway behind a corporate proxy is given
    (docs/reference/gateway-contract.md#through-a-corporate-proxy):
    the proxy for both schemes in both spellings, ``NO_PROXY`` emptied (an inherited one must
    not exempt the fake model on loopback) and the proxy's CA as the only trusted one."""
    return {
        "HTTPS_PROXY": proxy_url,
        "HTTP_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "http_proxy": proxy_url,
        "NO_PROXY": "",
        "no_proxy": "",
        "SSL_CERT_FILE": ca_file,
    }


async def _set_up_session(
    http: aiohttp.ClientSession, endpoint: tuple[str, str] | None, headers: dict[str, str]
) -> str | None:
    """Create the scenario's session through ``endpoints.session`` (when the target declares
    one); what went wrong, or ``None``. A failure is recorded, not raised: the turn is still
    sent, and its verdicts (with the diagnosis) say what the gateway made of it."""
    if endpoint is None:
        return None
    method, url = endpoint
    try:
        async with http.request(
            method,
            url,
            json={},
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=10),
        ) as resp:
            body = await resp.read()
            if 200 <= resp.status < 300:
                return None
            excerpt = body[:300].decode("utf-8", "replace")
            return f"{method} {url} answered {resp.status}: {excerpt}"
    except (aiohttp.ClientError, TimeoutError) as exc:
        return f"{method} {url} failed: {type(exc).__name__}: {exc}"


async def _stream_chat(
    http: aiohttp.ClientSession,
    endpoint: tuple[str, str],
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    t0: float,
    disconnect_after: int | None = None,
    count: Callable[[list[Frame]], int] = len,
) -> tuple[ChatResponse, list[Frame]]:
    method, url = endpoint
    frames: list[Frame] = []
    decoder = Decoder()
    status: int | None = None
    content_type: str | None = None
    response_headers: dict[str, str] = {}
    deadline = t0 + timeout

    def add(events: list[Any]) -> None:
        now = time.monotonic() - t0
        for ev in events:
            frames.append(
                Frame(
                    index=len(frames),
                    t=round(now, 4),
                    event=ev.type,
                    id=ev.id,
                    id_line=ev.id_line,
                    data=ev.data,
                )
            )

    def result(end: str, error: str | None = None, body: str = "") -> ChatResponse:
        return ChatResponse(
            status=status,
            content_type=content_type,
            end=end,
            error=error,
            elapsed=round(time.monotonic() - t0, 4),
            body_excerpt=body[:500],
            headers=response_headers,
        )

    try:
        async with asyncio.timeout_at(_loop_time_for(deadline)):
            async with http.request(
                method,
                url,
                data=body,
                headers={**headers, "Accept": "text/event-stream"},
            ) as resp:
                status = resp.status
                content_type = resp.headers.get("Content-Type")
                response_headers = {k.lower(): v for k, v in resp.headers.items()}
                if status != 200 or not (content_type or "").startswith("text/event-stream"):
                    excerpt = (await resp.content.read(4096)).decode("utf-8", "replace")
                    return result("not-sse", body=excerpt), frames
                if disconnect_after == 0:
                    resp.close()
                    return result("client-closed"), frames
                try:
                    async for chunk in resp.content.iter_any():
                        add(decoder.feed(chunk))
                        if disconnect_after is not None and count(frames) >= disconnect_after:
                            # The browser goes away: close the socket, as a closed tab does.
                            resp.close()
                            return result("client-closed"), frames
                except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
                    add(decoder.close())
                    return result("error", f"{type(exc).__name__}: {exc}"), frames
                add(decoder.close())
                return result("clean"), frames
    except TimeoutError:
        return result("timeout", f"no end of stream within {timeout:.2f}s real time"), frames
    except aiohttp.ClientConnectorError as exc:
        return result("refused", f"{type(exc).__name__}: {exc}"), frames
    except aiohttp.ClientError as exc:
        return result("error", f"{type(exc).__name__}: {exc}"), frames


def _browser_left(
    response: ChatResponse, events: Sequence[LinkEvent]
) -> tuple[ChatResponse, float | None]:
    """A cut on the browser link (the harness's own connection to the gateway) is the browser
    going away, a closed tab: the response is recorded as the browser closing it at the cut,
    with how the link cut it, so the rules judge it as ``request.disconnect_after_frames``
    (GW-DISPOSE and the rest apply; how the stream would have ended is not known)."""
    cut = browser_link_cut(events)
    if cut is None or cut.fault is None:
        return response, None
    how = f"the browser link cut the stream ({cut.fault.action}, {cut.detail}) at {cut.t:.3f}s"
    seen = f"; the browser saw: {response.error}" if response.error else ""
    left = response.model_copy(update={"end": "client-closed", "error": how + seen})
    return left, round(cut.t, 4)


async def _sleep_until(monotonic_deadline: float) -> None:
    delay = monotonic_deadline - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


def _loop_time_for(monotonic_deadline: float) -> float:
    loop = asyncio.get_running_loop()
    return loop.time() + (monotonic_deadline - time.monotonic())


async def _read_history(
    http: aiohttp.ClientSession, endpoint: tuple[str, str] | None, headers: dict[str, str]
) -> tuple[tuple[dict[str, Any], ...] | None, str | None]:
    if endpoint is None:
        return None, None
    method, url = endpoint
    try:
        async with http.request(
            method, url, headers=headers, timeout=aiohttp.ClientTimeout(total=10)
        ) as resp:
            body = await resp.read()
            if resp.status != 200:
                excerpt = body[:300].decode("utf-8", "replace")
                return None, f"{method} {url} answered {resp.status}: {excerpt}"
    except (aiohttp.ClientError, TimeoutError) as exc:
        return None, f"{method} {url} failed: {type(exc).__name__}: {exc}"
    try:
        data = json.loads(body)
    except ValueError as exc:
        return None, f"{method} {url} did not answer JSON: {exc}"
    events = data.get("events") if isinstance(data, dict) else data
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        return None, (
            f"{method} {url} answered JSON that is neither a list of events nor an object "
            "with an 'events' list"
        )
    return tuple(events), None


async def _auth_probes(
    http: aiohttp.ClientSession,
    gateway: RunningGateway,
    session_id: str,
    target: GatewayTarget,
) -> tuple[AuthProbe, ...]:
    header = target.auth.header
    other = list(target.auth.users.values())[1]
    wrong = "Bearer streamproof-wrong-token"
    probes: list[tuple[str, str, dict[str, str], str]] = [
        ("chat-no-token", "chat", {}, "401"),
        ("chat-wrong-token", "chat", {header: wrong}, "401"),
    ]
    if target.endpoints.history is not None:
        probes += [
            ("history-no-token", "history", {}, "401"),
            ("history-wrong-token", "history", {header: wrong}, "401"),
            ("history-other-user", "history", {header: other}, "401, 403 or 404"),
        ]
    out: list[AuthProbe] = []
    probe = chat_request(target, "streamproof auth probe", session_id, streaming=True)
    for name, which, headers, expected in probes:
        endpoint = gateway.endpoint(which, session_id)
        assert endpoint is not None
        method, url = endpoint
        status: int | None = None
        error: str | None = None
        try:
            async with http.request(
                method,
                url,
                data=probe.data if method != "GET" else None,
                headers={**headers, "Content-Type": probe.content_type}
                if method != "GET"
                else headers,
                timeout=aiohttp.ClientTimeout(total=10),
            ) as resp:
                status = resp.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        out.append(
            AuthProbe(
                name=name, method=method, url=url, status=status, expected=expected, error=error
            )
        )
    return tuple(out)
