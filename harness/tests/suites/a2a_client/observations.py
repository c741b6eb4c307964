"""Hand-built A2A client observations for the check tests.

:func:`worked_example` is the seed's worked example ("a summary that survives a proxy
timeout") as a correct client lives it, at time scale 1 so that times read as the seed tells
them: the first request at 0 s, the proxy's stall at 40 s, the watchdog's snapshot and
resubscribe at about 60 s, the result at 78 s. :class:`Story` builds the fake server's ledger and
the link's records side by side, consistent with each other, so a test can break one thing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from streamproof.core.verdicts import Outcome, Verdict
from streamproof.fakes.a2a.ledger import (
    A2ALedger,
    MessageRecord,
    RequestRecord,
    SentFrame,
    TaskCall,
    TaskEventRecord,
    TaskRecord,
)
from streamproof.faults.plan import Fault
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.result import (
    ClientFailure,
    ClientResult,
    ClientRun,
    ResultArtifact,
)
from streamproof.suites.a2a_client.scenario import A2AClientExpect

TASK, CTX = "t-81", "c-12"
S1, S2, S3 = "Section 1: demand grew. ", "Section 2: prices held. ", "Section 3: outlook mixed."
SUMMARY = S1 + S2 + S3
STREAM_FAULT = Fault.model_validate(
    {"when": {"rpc": "message/stream", "after": "40s"}, "do": "stall"}
)

_METHODS_1_0 = {
    "message/stream": "SendStreamingMessage",
    "message/send": "SendMessage",
    "tasks/get": "GetTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/cancel": "CancelTask",
}


def _fault(action: str) -> Fault:
    if action == "stall":
        return STREAM_FAULT
    if action.startswith("status:"):
        return Fault.model_validate({"do": {"status": int(action.split(":")[1])}})
    return Fault.model_validate({"do": action})


# --- frames ------------------------------------------------------------------------------------


def task_frame(t: float, state: str = "submitted") -> SentFrame:
    return SentFrame(t=t, kind="task", state=state)


def status(t: float, state: str, text: str | None = None) -> SentFrame:
    final = state not in ("submitted", "working")
    return SentFrame(t=t, kind="status-update", state=state, text=text, final=final)


def art(t: float, aid: str, text: str, *, append: bool = False, last: bool = False) -> SentFrame:
    return SentFrame(
        t=t, kind="artifact-update", artifact_id=aid, text=text, append=append, last_chunk=last
    )


def reply(t: float, text: str) -> SentFrame:
    return SentFrame(t=t, kind="message", text=text)


def error_frame(t: float, code: int) -> SentFrame:
    return SentFrame(t=t, kind="error", error_code=code)


# --- the story ---------------------------------------------------------------------------------


_REST_ROUTES: Final = {
    "message/send": ("POST", "/message:send"),
    "message/stream": ("POST", "/message:stream"),
    "tasks/get": ("GET", f"/tasks/{TASK}"),
    "tasks/cancel": ("POST", f"/tasks/{TASK}:cancel"),
    "tasks/resubscribe": ("GET", f"/tasks/{TASK}:subscribe"),
}


class Story:
    """A scenario's records, built request by request on both sides of the link."""

    def __init__(
        self,
        *,
        wire: str = "0.3",
        scale: float = 1.0,
        deadline: float = 90.0,
        idle: float = 20.0,
        tolerance: float = 5.0,
        link: bool = True,
        binding: str = "jsonrpc",
    ) -> None:
        """``binding: rest`` (a 1.0 wire): each request is recorded as the fake records a REST
        request, on its route (``POST /message:stream``) with the 1.0 method name."""
        self.wire = wire
        self.binding = binding
        self.scale = scale
        self.deadline, self.idle, self.tolerance = deadline, idle, tolerance
        self.with_link = link
        self.requests: list[RequestRecord] = []
        self.links: list[LinkEvent] = []
        self.tasks: list[TaskRecord] = []
        self.messages: list[MessageRecord] = []
        self.gets: list[TaskCall] = []
        self.resubscribes: list[TaskCall] = []
        self.cancels: list[TaskCall] = []
        self.events: list[TaskEventRecord] = []
        self.turns: list[ClientRun] = []
        self.faults: list[Fault] = []
        self._link_index = 0

    # --- the task's own progression ------------------------------------------------------------

    def created(self, t: float, task_id: str = TASK, context_id: str = CTX, text: str = "") -> None:
        self.events.append(
            TaskEventRecord(task_id=task_id, t=t, kind="created", turn=0, state="submitted")
        )
        self.tasks.append(
            TaskRecord(
                task_id=task_id,
                context_id=context_id,
                t=t,
                request=len(self.requests),
                message_id=f"m-{len(self.tasks)}",
                text=text,
            )
        )

    def state(
        self, t: float, state: str, text: str | None = None, *, task_id: str = TASK, turn: int = 0
    ) -> None:
        self.events.append(
            TaskEventRecord(
                task_id=task_id, t=t, kind="status-update", turn=turn, state=state, text=text
            )
        )

    def chunk(
        self,
        t: float,
        aid: str,
        text: str,
        *,
        append: bool = False,
        last: bool = False,
        task_id: str = TASK,
        turn: int = 0,
    ) -> None:
        self.events.append(
            TaskEventRecord(
                task_id=task_id,
                t=t,
                kind="artifact-update",
                turn=turn,
                artifact_id=aid,
                append=append,
                last_chunk=last,
                text=text,
            )
        )

    def follow_up_event(self, t: float, task_id: str = TASK, turn: int = 1) -> None:
        self.events.append(TaskEventRecord(task_id=task_id, t=t, kind="follow-up", turn=turn))

    # --- requests ------------------------------------------------------------------------------

    def _method(self, method: str) -> str:
        return _METHODS_1_0[method] if self.wire == "1.0" else method

    def _link_request(
        self,
        t: float,
        *,
        method: str,
        path: str,
        rpc: str | None,
        status: int | None,
        forwarded: Sequence[float],
        end: tuple[float, str, str] | None,
        fault: tuple[float, str] | None,
        reached: bool,
        end_status: int | None = None,
        damage: Mapping[int, str] | None = None,
    ) -> None:
        if not self.with_link:
            return
        index = self._link_index
        self._link_index += 1
        conn = index

        def add(kind: Any, at: float, **kw: Any) -> None:
            self.links.append(
                LinkEvent(
                    t=at,
                    link="a2a",
                    connection=conn,
                    request=index,
                    kind=kind,
                    method=method,
                    path=path,
                    rpc=rpc,
                    **kw,
                )
            )

        self.links.append(LinkEvent(t=t, link="a2a", connection=conn, kind="connect"))
        add("request", t)
        ref: FaultRef | None = None
        if fault is not None:
            self.faults.append(_fault(fault[1]))
            ref = FaultRef(index=len(self.faults) - 1, action=fault[1].split(":")[0])
        if reached and status is not None:
            add("response_headers", t + 0.001, status=status)
            add("first_byte", t + 0.002, status=status)
        for i, at in enumerate(forwarded, start=1):
            add("event", at, event_index=i, detail="message", damage=(damage or {}).get(i))
        if fault is not None and (end is None or end[2] != "proxy"):
            add("fault", fault[0], fault=ref, detail=fault[1])
        if end is not None:
            at, how, by = end
            if not reached and end_status is not None:
                add("first_byte", at, status=end_status)
            add(
                "end",
                at,
                how=how,
                by=by,
                status=end_status,
                fault=ref if by == "proxy" else None,
            )

    def card(self, t: float = 0.0, *, proxy_status: int | None = None) -> None:
        """The agent card fetch; with ``proxy_status`` the proxy answers it (a ``502``) and the
        server never sees it."""
        if proxy_status is not None:
            self._link_request(
                t,
                method="GET",
                path="/.well-known/agent-card.json",
                rpc=None,
                status=None,
                forwarded=(),
                end=(t + 0.01, "clean", "proxy"),
                fault=(t, f"status: {proxy_status}"),
                reached=False,
                end_status=proxy_status,
            )
            return
        self.requests.append(
            RequestRecord(
                index=len(self.requests),
                t=t,
                t_end=t + 0.01,
                connection=1,
                http_method="GET",
                path="/.well-known/agent-card.json",
                rpc_method=None,
                status=200,
                ended="completed",
            )
        )
        self._link_request(
            t,
            method="GET",
            path="/.well-known/agent-card.json",
            rpc=None,
            status=200,
            forwarded=(),
            end=(t + 0.01, "clean", "upstream"),
            fault=None,
            reached=True,
        )

    def rpc(
        self,
        t: float,
        method: str,
        *,
        frames: Sequence[SentFrame] = (),
        task_id: str | None = TASK,
        forwarded: int | None = None,
        ended: str = "completed",
        t_end: float | None = None,
        link_end: tuple[float, str, str] | None = None,
        fault: tuple[float, str] | None = None,
        reached: bool = True,
        proxy_status: int | None = None,
        error_code: int | None = None,
        accept: str | None = None,
        a2a_version: str | None = None,
        params: Any = None,
        damage: Mapping[int, str] | None = None,
    ) -> int:
        """One JSON-RPC request; returns its ledger index (-1 when it never reached the fake).
        ``damage``: the link's damage record per forwarded event (1-based), as a ``corrupt``
        fault leaves it."""
        name = self._method(method)
        streaming = method in ("message/stream", "tasks/resubscribe")
        if accept is None:
            accept = "text/event-stream" if streaming else "application/json"
        if a2a_version is None:
            a2a_version = "1.0" if self.wire == "1.0" else "0.3"
        end_t = t_end if t_end is not None else (frames[-1].t if frames else t + 0.01)
        http_method, path = "POST", "/"
        if self.binding == "rest":
            http_method, path = _REST_ROUTES[method]
        index = -1
        if reached:
            index = len(self.requests)
            self.requests.append(
                RequestRecord(
                    index=index,
                    t=t,
                    t_end=end_t,
                    connection=index + 1,
                    http_method=http_method,
                    path=path,
                    rpc_method=name,
                    wire="1.0" if self.wire == "1.0" else "0.3",
                    binding=self.binding,  # type: ignore[arg-type]
                    params=params,
                    accept=accept,
                    a2a_version=a2a_version,
                    content_type="application/json",
                    status=200,
                    response="sse" if streaming and frames else "json",
                    error_code=error_code,
                    task_id=task_id,
                    frames=tuple(frames),
                    ended=ended,  # type: ignore[arg-type]
                )
            )
        data = [f.t for f in frames if f.kind not in ("heartbeat", "ping")]
        count = len(data) if forwarded is None else forwarded
        if link_end is None:
            how = "clean"
            link_end = (end_t, how, "upstream")
        self._link_request(
            t,
            method=http_method,
            path=path,
            rpc=name,
            status=200 if reached else None,
            forwarded=data[:count],
            end=link_end,
            fault=fault,
            reached=reached,
            end_status=proxy_status,
            damage=damage,
        )
        return index

    def message(
        self,
        t: float,
        frames: Sequence[SentFrame],
        *,
        outcome: str = "created",
        task_id: str | None = TASK,
        context_id: str | None = None,
        given_task: str | None = None,
        **kw: Any,
    ) -> int:
        index = self.rpc(t, "message/stream", frames=frames, task_id=task_id, **kw)
        if index >= 0:
            self.messages.append(
                MessageRecord(
                    t=t,
                    request=index,
                    message_id=f"msg-{index}",
                    task_id=given_task,
                    context_id=context_id,
                    text="the prompt",
                    outcome=outcome,  # type: ignore[arg-type]
                )
            )
        return index

    def get(self, t: float, state: str | None, *, task_id: str = TASK) -> int:
        index = self.rpc(t, "tasks/get", task_id=task_id)
        self.gets.append(TaskCall(t=t, request=index, task_id=task_id, state=state))
        return index

    def resubscribe(
        self, t: float, frames: Sequence[SentFrame], *, task_id: str = TASK, **kw: Any
    ) -> int:
        index = self.rpc(t, "tasks/resubscribe", frames=frames, task_id=task_id, **kw)
        self.resubscribes.append(TaskCall(t=t, request=index, task_id=task_id, state="working"))
        return index

    def cancel(self, t: float, state: str, *, code: int | None = None) -> int:
        index = self.rpc(t, "tasks/cancel", error_code=code)
        self.cancels.append(
            TaskCall(t=t, request=index, task_id=TASK, state=state, error_code=code)
        )
        return index

    # --- the client ----------------------------------------------------------------------------

    def run(
        self,
        result: ClientResult | None,
        *,
        t_result: float | None,
        t_start: float = -0.3,
        t_exit: float | None = None,
        turn: int = 0,
        failure: ClientFailure | None = None,
        result_lines: int | None = None,
        task_id_given: str | None = None,
        context_id_given: str | None = None,
    ) -> None:
        self.turns.append(
            ClientRun(
                turn=turn,
                prompt="the prompt",
                task_id_given=task_id_given,
                context_id_given=context_id_given,
                deadline_s=self.deadline * self.scale,
                idle_s=self.idle * self.scale,
                bound_s=(self.deadline + 10) * self.scale,
                t_start=t_start,
                t_result=t_result,
                t_exit=t_exit if t_exit is not None else (t_result or 0.0) + 0.05,
                exit_code=0 if failure is None else 1,
                result=result,
                failure=failure,
                result_lines=(1 if result is not None else 0)
                if result_lines is None
                else result_lines,
            )
        )

    def build(self, **overrides: Any) -> A2AClientObservation:
        values: dict[str, Any] = {
            "scenario": "a2a_client/test",
            "target": "test-client",
            "wire": self.wire,
            "time_scale": self.scale,
            "deadline_s": self.deadline * self.scale,
            "idle_s": self.idle * self.scale,
            "tolerance_s": self.tolerance * self.scale,
            "turns": tuple(self.turns),
            "ledger": A2ALedger(
                requests=tuple(self.requests),
                tasks=tuple(self.tasks),
                messages=tuple(self.messages),
                gets=tuple(self.gets),
                resubscribes=tuple(self.resubscribes),
                cancels=tuple(self.cancels),
                task_events=tuple(sorted(self.events, key=lambda e: e.t)),
            ),
            "link_events": tuple(sorted(self.links, key=lambda e: e.t)) if self.with_link else None,
            "faults": tuple(self.faults),
        }
        values.update(overrides)
        return A2AClientObservation(**values)


def result(
    status: str = "completed",
    artifacts: dict[str, str] | None = None,
    *,
    incomplete: bool = False,
    task_id: str | None = TASK,
    context_id: str | None = CTX,
    message: str | None = None,
    data: dict[str, Any] | None = None,
) -> ClientResult:
    items = [
        ResultArtifact(id=k, text=v, data=(data or {}).get(k))
        for k, v in (artifacts if artifacts is not None else {"summary": SUMMARY}).items()
    ]
    return ClientResult(
        status=status,  # type: ignore[arg-type]
        task_id=task_id,
        context_id=context_id,
        artifacts=tuple(items),
        message=message,
        incomplete=incomplete,
    )


# --- the worked example ------------------------------------------------------------------------


def summary_progress(story: Story, *, gap_chunk: float | None = None) -> None:
    """The agent's own timeline (the task runs whether or not anyone listens)."""
    story.created(0.1)
    story.state(2.1, "working", "gathering sources")
    story.state(8.1, "working", "drafting section 1")
    story.chunk(12.1, "summary", S1)
    story.chunk(25.1, "summary", S2, append=True)
    story.state(39.1, "working", "waiting on a slow search")
    if gap_chunk is not None:
        story.chunk(gap_chunk, "summary", "Section 2b. ", append=True)
    story.chunk(70.1, "summary", S3, append=True, last=True)
    story.state(78.1, "completed")


FIRST_STREAM = (
    task_frame(0.1),
    status(2.1, "working", "gathering sources"),
    status(8.1, "working", "drafting section 1"),
    art(12.1, "summary", S1),
    art(25.1, "summary", S2, append=True),
    status(39.1, "working", "waiting on a slow search"),
)


def stalled_stream(story: Story, *, closed_at: float = 59.55) -> int:
    """The message/stream the proxy stalls at 40 s; the client closes it when it recovers."""
    return story.message(
        0.1,
        FIRST_STREAM,
        ended="client_closed",
        t_end=closed_at,
        fault=(40.1, "stall"),
        link_end=(closed_at, "fin", "client"),
    )


def worked_example(*, snapshot: bool = True, link: bool = True) -> A2AClientObservation:
    """Cut at 40 s, the watchdog recovers at 59.5 s (20 s after the last event at 39.1 s), the
    result comes at 78.2 s with the whole summary."""
    story = Story(link=link)
    summary_progress(story)
    story.card(0.0)
    stalled_stream(story)
    story.get(59.5, "working")
    first = (task_frame(59.6, "working"),) if snapshot else ()
    story.resubscribe(
        59.6,
        (*first, art(70.1, "summary", S3, append=True, last=True), status(78.1, "completed")),
    )
    story.run(result(), t_result=78.2)
    return story.build(
        expect=A2AClientExpect.model_validate(
            {
                "result": {"status": "completed", "artifacts": {"summary": "complete"}},
                "ledger": ["message/stream", "tasks/get", "tasks/resubscribe"],
                "tasks_created": 1,
            }
        )
    )


def plain(
    frames: Sequence[SentFrame],
    client_result: ClientResult,
    *,
    wire: str = "0.3",
    t_result: float | None = None,
) -> A2AClientObservation:
    """A stream that runs to its end without faults; the task's progression mirrors it."""
    story = Story(wire=wire, deadline=30, idle=10)
    story.card(0.0)
    for f in frames:
        if f.kind == "task":
            story.created(f.t)
        elif f.kind == "status-update" and f.state is not None:
            story.state(f.t, f.state, f.text)
        elif f.kind == "artifact-update" and f.artifact_id is not None:
            story.chunk(
                f.t, f.artifact_id, f.text or "", append=bool(f.append), last=bool(f.last_chunk)
            )
    story.message(0.1, frames)
    story.run(client_result, t_result=t_result if t_result is not None else frames[-1].t + 0.1)
    return story.build()


# --- assertions --------------------------------------------------------------------------------


def verdict_for(verdicts: Sequence[Verdict], requirement: str) -> Verdict:
    found = [v for v in verdicts if v.requirement == requirement]
    assert len(found) == 1, f"expected one {requirement} verdict, got {found}"
    return found[0]


def assert_passes(verdicts: Sequence[Verdict], requirement: str) -> Verdict:
    verdict = verdict_for(verdicts, requirement)
    assert verdict.outcome is Outcome.PASS, verdict.render()
    return verdict


def assert_not_applicable(verdicts: Sequence[Verdict], requirement: str, *needles: str) -> Verdict:
    """The check had nothing to judge, said so, and said why."""
    verdict = verdict_for(verdicts, requirement)
    assert verdict.outcome is Outcome.NOT_APPLICABLE, verdict.render()
    assert verdict.message.startswith("not judged: "), verdict.message
    for needle in needles:
        assert needle in verdict.message, f"{needle!r} not in {verdict.message!r}"
    return verdict


def judged(verdicts: Sequence[Verdict]) -> list[str]:
    """The requirements (and expectations) that were judged on something and held."""
    return [v.requirement for v in verdicts if v.outcome is Outcome.PASS]


def not_passed(verdicts: Sequence[Verdict]) -> list[str]:
    """Every verdict that is neither a pass nor not applicable (fail, non-strict, ...),
    rendered: what a correct client must not get."""
    fine = (Outcome.PASS, Outcome.NOT_APPLICABLE)
    return [v.render() for v in verdicts if v.outcome not in fine]


def assert_fails(verdicts: Sequence[Verdict], requirement: str, *needles: str) -> Verdict:
    verdict = verdict_for(verdicts, requirement)
    assert verdict.outcome in (Outcome.FAIL, Outcome.NON_STRICT), verdict.render()
    assert verdict.message.startswith(f"{requirement}: "), verdict.message
    for needle in needles:
        assert needle in verdict.message, f"{needle!r} not in {verdict.message!r}"
    return verdict
