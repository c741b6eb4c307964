"""The push sender: one load's webhook deliveries, made as the task's updates happen.

:class:`PushDeliveries` belongs to one :meth:`~streamproof.fakes.a2a.server.FakeA2AServer.load`.
A send whose configuration names a webhook registers it for its task (a later registration for
the task replaces it: a follow-up turn's client listens elsewhere); from then on every update
the task clock applies is also a delivery (:func:`~streamproof.protocol.a2a.push.push_body`),
numbered from 1 (the Task snapshot of the task's creation). Deliveries of a task are sent one at
a time in order, each awaited as a2a-sdk 1.3's sender awaits its POST, with no retry (the spec
sets no retry schedule); a delayed one goes on its own. What the scripted faults do to each
comes from :mod:`~streamproof.fakes.a2a.push.plan`.

Every POST goes to ``<via>/d/<seq>``: through the ``push`` link to the relay
(:mod:`~streamproof.fakes.a2a.push.relay`), which forwards it to the webhook. Every wait is
bounded by the script's ``timeout`` (scaled); :meth:`PushDeliveries.close` cancels whatever is
still in flight, so nothing outlives the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp

from streamproof.core.durations import TimeScale
from streamproof.fakes.a2a.push.plan import Send, plan_delivery
from streamproof.fakes.a2a.push.records import (
    DeliveryEnding,
    DeliveryFaultName,
    DeliveryRecord,
    WebhookRecord,
)
from streamproof.fakes.a2a.push.relay import RELAY_HEADER, PushRelay, Route
from streamproof.fakes.a2a.push.script import FORGED_TEXT, PushScript
from streamproof.protocol import a2a
from streamproof.protocol.a2a.push import push_body, push_headers

__all__ = ["PushDeliveries"]

_SETTLE_MARGIN_S: Final = 0.5
_Event = a2a.Task | a2a.StatusUpdate | a2a.ArtifactUpdate


@dataclass
class _Out:
    """One POST to make."""

    delivery: int | None
    event: _Event
    body: bytes
    headers: dict[str, str]
    fault: DeliveryFaultName | None = None
    fault_index: int | None = None
    authentic: bool = True
    genuine: bool = True


@dataclass
class _TaskPush:
    task_id: str
    context_id: str
    config: a2a.PushConfig
    count: int = 0
    sent: dict[int, _Out] = field(default_factory=dict)
    """Each delivery as built (a replay sends it again)."""
    next_held: list[_Out] = field(default_factory=list)
    stale: list[_Out] = field(default_factory=list)
    queue: asyncio.Queue[_Out | str] = field(default_factory=asyncio.Queue)
    worker: asyncio.Task[None] | None = None
    ended: bool = False
    """The task's terminal update has been published."""
    stale_done: asyncio.Event = field(default_factory=asyncio.Event)


class _Delivery:
    """A delivery in progress: its record, filled in as it goes."""

    def __init__(self, seq: int, out: _Out, task_id: str, url: str, t: float) -> None:
        self.fields: dict[str, Any] = {
            "seq": seq,
            "delivery": out.delivery,
            "task_id": task_id,
            "url": url,
            "t": t,
            "fault": out.fault,
            "fault_index": out.fault_index,
            "authentic": out.authentic,
            "genuine": out.genuine,
            **_describe(out.event),
        }

    def record(self) -> DeliveryRecord:
        return DeliveryRecord(**self.fields)


def _describe(event: _Event) -> dict[str, Any]:
    if isinstance(event, a2a.Task):
        return {"kind": "task", "state": event.status.state.value}
    if isinstance(event, a2a.StatusUpdate):
        message = event.status.message
        return {
            "kind": "status-update",
            "state": event.status.state.value,
            "text": a2a.text_of(message.parts) if message is not None else None,
        }
    return {
        "kind": "artifact-update",
        "artifact_id": event.artifact.artifact_id,
        "append": event.append,
        "last_chunk": event.last_chunk,
        "text": a2a.text_of(event.artifact.parts),
    }


class PushDeliveries:
    """The webhook deliveries of one load of the fake."""

    def __init__(
        self,
        script: PushScript | None,
        scale: TimeScale,
        now: Callable[[], float],
        relay: PushRelay | None,
        via: str | None,
    ) -> None:
        self.script = script or PushScript()
        self.scale = scale
        self.now = now
        self.relay = relay
        self.via = via.rstrip("/") if via else None
        self.timeout = scale(self.script.timeout)
        self._tasks: dict[str, _TaskPush] = {}
        self._deliveries: list[_Delivery] = []
        self._webhooks: list[WebhookRecord] = []
        self._routes: dict[int, Route] = {}
        self._fired: dict[int, float] = {}
        self._later: set[asyncio.Task[None]] = set()
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        if relay is not None:
            relay.resolve = self._routes.get

    # --- what the server tells it --------------------------------------------------------------

    def register(self, live_task: a2a.Task, config: a2a.PushConfig, request: int) -> None:
        """A send registered ``config`` for the task (a new one replaces the old)."""
        self._webhooks.append(
            WebhookRecord(
                t=self.now(),
                task_id=live_task.id,
                request=request,
                url=config.url,
                config_id=config.id,
                token=config.token is not None,
                scheme=config.scheme if config.credentials else None,
            )
        )
        known = self._tasks.get(live_task.id)
        if known is not None:
            known.config = config
            return
        tp = _TaskPush(live_task.id, live_task.context_id, config)
        self._tasks[live_task.id] = tp
        tp.worker = asyncio.create_task(self._work(tp))
        self.publish(live_task.id, live_task)  # delivery 1: the Task as created

    def publish(self, task_id: str, event: _Event) -> None:
        """The task's next update happened: deliver it as the plan says."""
        tp = self._tasks.get(task_id)
        if tp is None or self._closed:
            return
        tp.count += 1
        n = tp.count
        out = self._build(tp, n, event)
        tp.sent[n] = out
        plan = plan_delivery(self.script.faults, n)
        t = self.now()
        for index in plan.fired:
            self._fired.setdefault(index, t)
        for send in plan.sends:
            tp.queue.put_nowait(self._for(tp, send, out))
        if plan.hold is not None:
            held = _Out(**{**out.__dict__, "fault_index": plan.hold.fault_index})
            if plan.hold.until == "lost":
                self._lost(tp, held)
            elif plan.hold.until == "delay":
                held.fault = "delayed"
                self._spawn(self._send_later(tp, held, self.scale(plan.hold.delay)))
            elif plan.hold.until == "next":
                held.fault = "reordered"
                tp.next_held.append(held)
            else:
                held.fault = "stale"
                tp.stale.append(held)
        if plan.hold is None or plan.hold.until != "next":
            for earlier in [h for h in tp.next_held if h.delivery is not None and h.delivery < n]:
                tp.next_held.remove(earlier)
                tp.queue.put_nowait(earlier)
        if (isinstance(event, a2a.StatusUpdate) and event.status.state in a2a.TERMINAL_STATES) or (
            isinstance(event, a2a.Task) and event.status.state in a2a.TERMINAL_STATES
        ):
            tp.ended = True
            for held in tp.next_held:
                tp.queue.put_nowait(held)
            tp.next_held.clear()
            tp.queue.put_nowait("terminal")

    async def settled(self, task_id: str) -> None:
        """Wait (bounded) until the stale deliveries due after the task's terminal one have
        been made: a request of the client's after the terminal delivery is answered after
        them, so a stale update reaches a client that is still running."""
        tp = self._tasks.get(task_id)
        if tp is None or not tp.ended or not self._has_stale(tp):
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tp.stale_done.wait(), self.timeout + _SETTLE_MARGIN_S)

    def _has_stale(self, tp: _TaskPush) -> bool:
        return any(f.do == "stale" and f.delivery <= tp.count for f in self.script.faults)

    # --- records -------------------------------------------------------------------------------

    @property
    def deliveries(self) -> tuple[DeliveryRecord, ...]:
        return tuple(d.record() for d in self._deliveries)

    @property
    def webhooks(self) -> tuple[WebhookRecord, ...]:
        return tuple(self._webhooks)

    @property
    def fired(self) -> dict[int, float]:
        """``push.faults`` index -> when it first fired."""
        return dict(self._fired)

    @property
    def busy(self) -> bool:
        return any(d.fields.get("t_end") is None for d in self._deliveries)

    async def close(self) -> None:
        self._closed = True
        tasks = [t.worker for t in self._tasks.values() if t.worker is not None]
        tasks.extend(self._later)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for d in self._deliveries:
            if d.fields.get("t_end") is None:
                d.fields.update(t_end=self.now(), ended="error", detail="the run ended first")
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    # --- building ------------------------------------------------------------------------------

    def _build(self, tp: _TaskPush, n: int, event: _Event) -> _Out:
        return _Out(n, event, push_body(event), push_headers(tp.config))

    def _for(self, tp: _TaskPush, send: Send, current: _Out) -> _Out:
        if send.forged:
            fault = self.script.faults[send.fault_index or 0]
            forged = a2a.StatusUpdate(
                task_id=tp.task_id,
                context_id=tp.context_id,
                status=a2a.TaskStatus(
                    state=fault.state,
                    message=a2a.Message(
                        message_id=a2a.new_id(),
                        role="agent",
                        parts=(a2a.TextPart(text=FORGED_TEXT),),
                        task_id=tp.task_id,
                        context_id=tp.context_id,
                    ),
                    timestamp=a2a.timestamp(),
                ),
                final=fault.state in a2a.TERMINAL_STATES,
            )
            wrong = "forged-" + secrets.token_hex(8)
            headers = (
                push_headers(tp.config, token=wrong, authorization=f"Bearer {wrong}")
                if send.fault == "wrong_token"
                else push_headers(tp.config, token="", authorization="")
            )
            return _Out(
                None, forged, push_body(forged), headers, send.fault, send.fault_index, False, False
            )
        if send.fault == "replay":
            original = tp.sent[send.delivery]
            return _Out(**{**original.__dict__, "fault": "replay", "fault_index": send.fault_index})
        return _Out(**{**current.__dict__, "fault": send.fault, "fault_index": send.fault_index})

    # --- sending -------------------------------------------------------------------------------

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def _work(self, tp: _TaskPush) -> None:
        while True:
            item = await tp.queue.get()
            if item == "terminal":
                for held in tp.stale:
                    await self._post(tp, held)
                tp.stale.clear()
                tp.stale_done.set()
                continue
            assert isinstance(item, _Out)
            await self._post(tp, item)

    async def _send_later(self, tp: _TaskPush, out: _Out, delay: float) -> None:
        await asyncio.sleep(delay)
        await self._post(tp, out)

    def _lost(self, tp: _TaskPush, out: _Out) -> None:
        d = _Delivery(len(self._deliveries), out, tp.task_id, tp.config.url, self.now())
        out_fault: DeliveryFaultName = "lost"
        d.fields.update(fault=out_fault, ended="lost", t_end=d.fields["t"], detail="never sent")
        self._deliveries.append(d)

    async def _post(self, tp: _TaskPush, out: _Out) -> None:
        seq = len(self._deliveries)
        url = tp.config.url
        d = _Delivery(seq, out, tp.task_id, url, self.now())
        self._deliveries.append(d)

        def answered(status: int | None, detail: str) -> None:
            d.fields["receiver_status"] = status
            if detail:
                d.fields["detail"] = detail

        self._routes[seq] = Route(url, self.timeout, answered)
        target = f"{self.via or ''}/d/{seq}"
        ended: DeliveryEnding
        detail = ""
        status: int | None = None
        try:
            session = self._session_now()
            async with session.post(
                target,
                data=out.body,
                headers=out.headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                allow_redirects=False,
            ) as answer:
                status = answer.status
                await answer.read()
                relay = answer.headers.get(RELAY_HEADER)
                if relay in ("unreachable", "timeout"):
                    ended = "unreachable" if relay == "unreachable" else "timeout"
                    status = None
                else:
                    ended = "acknowledged" if 200 <= answer.status < 300 else "refused"
        except TimeoutError:
            ended, detail = "timeout", f"no answer within {self.timeout:g}s"
        except aiohttp.ClientConnectorError as exc:
            ended, detail = "unreachable", f"{type(exc).__name__}"
        except (aiohttp.ClientError, OSError) as exc:
            ended, detail = "reset", f"{type(exc).__name__}: {exc}"
        finally:
            self._routes.pop(seq, None)
        d.fields.update(
            t_end=self.now(),
            status=status,
            ended=ended,
            detail=d.fields.get("detail") or detail,
        )

    def _session_now(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                cookie_jar=aiohttp.DummyCookieJar(),
                connector=aiohttp.TCPConnector(limit=0),
            )
        return self._session
