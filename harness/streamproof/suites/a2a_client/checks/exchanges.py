"""What the A2A client experienced, rebuilt from both sides of the ``a2a`` link (pure).

The fake server's ledger says what it received and wrote; the link's records say what the
client actually got (a stalled stream swallows what the server writes, a ``502`` from the proxy
never reaches the server at all). :func:`exchanges` joins the two into one
:class:`Exchange` per request the client made, in the order it made them, and the helpers below
answer the questions the checks ask: which frames reached the client, when the client last heard
anything on a stream, which turn a request belongs to, how the server's artifacts evolved.

Joining: a link request reached the server when upstream answered its headers, or when no
fault fired on it before upstream was contacted. Requests with the same HTTP method, path and
JSON-RPC method are paired in arrival order.

What reached the client: the first *n* data frames the server wrote, *n* being the events the
link forwarded (a finite ``stall: {for: …}`` drops the frames written during it first). Without
a link, every frame the server wrote.

What the client could read of it: a frame a ``corrupt`` fault damaged (the link's ``damage``)
was not read as sent. Truncated or merged, it is not valid JSON: the recipe's "loud failure"
("a malformed event"), after which a client may stop reading the stream, so the frames after it
are only *readable* (it may or may not have read them), not *delivered*. A frame ``lost`` by a
spec decoder (a BOM on its only data line) is skipped silently, without an error: the client
cannot know it ever existed, and it reads on.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from streamproof.fakes.a2a.ledger import RequestRecord, SentFrame, TaskEventRecord
from streamproof.faults.records import LinkEvent
from streamproof.protocol.a2a import INTERRUPTED_STATES, TERMINAL_STATES, Op, op_of
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.result import ClientRun

__all__ = [
    "DONE_STATES",
    "INTERRUPTED",
    "TERMINAL",
    "Exchange",
    "LinkRequest",
    "artifact_chunks",
    "exchanges",
    "first_request_t",
    "link_requests",
    "replay_artifacts",
    "state_at",
    "turn_exchanges",
    "turn_task",
]

TERMINAL: Final = frozenset(s.value for s in TERMINAL_STATES)
INTERRUPTED: Final = frozenset(s.value for s in INTERRUPTED_STATES)
DONE_STATES: Final = TERMINAL | INTERRUPTED
"""States that end a turn (0.3 spellings)."""
_DATA_KINDS: Final = frozenset({"task", "message", "status-update", "artifact-update", "error"})
_TASK_KINDS: Final = frozenset({"task", "status-update", "artifact-update"})


@dataclass
class LinkRequest:
    """One request as the link recorded it."""

    index: int
    t: float
    method: str | None
    path: str | None
    rpc: str | None
    headers_status: int | None = None
    first_byte_t: float | None = None
    first_byte_status: int | None = None
    events: list[float] = field(default_factory=list)
    damage: list[str | None] = field(default_factory=list)
    """Per event (parallel to ``events``): how a corruption changed it, if one did."""
    comments: list[float] = field(default_factory=list)
    faults: list[LinkEvent] = field(default_factory=list)
    end: LinkEvent | None = None

    @property
    def reached_upstream(self) -> bool:
        if self.headers_status is not None:
            return True
        return not self.faults and (self.end is None or self.end.by == "client")

    @property
    def key(self) -> tuple[str, str, str | None]:
        return ((self.method or "").upper(), self.path or "", self.rpc)


def link_requests(events: Iterable[LinkEvent]) -> list[LinkRequest]:
    """The link's records grouped per request, in arrival order."""
    out: dict[int, LinkRequest] = {}
    for e in events:
        if e.request is None:
            continue
        req = out.get(e.request)
        if req is None:
            req = out[e.request] = LinkRequest(e.request, e.t, e.method, e.path, e.rpc)
        if e.kind == "request":
            req.t, req.rpc = e.t, e.rpc
        elif e.kind == "response_headers":
            req.headers_status = e.status
        elif e.kind == "first_byte":
            req.first_byte_t, req.first_byte_status = e.t, e.status
        elif e.kind == "event":
            req.events.append(e.t)
            req.damage.append(e.damage)
        elif e.kind == "comment":
            req.comments.append(e.t)
        elif e.kind == "fault":
            req.faults.append(e)
        elif e.kind == "end" and req.end is None:
            req.end = e
    return sorted(out.values(), key=lambda r: (r.t, r.index))


@dataclass(frozen=True)
class Exchange:
    """One request of the client, as the client experienced it."""

    t: float
    """When the client sent it (the link's record, else the server's)."""
    method: str | None
    """The JSON-RPC method (None: the agent card, or not JSON-RPC)."""
    record: RequestRecord | None
    """What the server saw (None: the request never reached it)."""
    link: LinkRequest | None
    forwarded: tuple[SentFrame, ...]
    """The data frames that reached the client (comments excluded), damaged or not; in the
    order of the link's ``event`` records."""
    last_activity: float
    """When the client last received anything on it (an event, a comment, the headers)."""
    damage: tuple[str | None, ...] = ()
    """Per forwarded frame (parallel to ``forwarded``; shorter: undamaged): how a corruption
    changed it for the client's decoder."""

    def _damage(self, i: int) -> str | None:
        return self.damage[i] if i < len(self.damage) else None

    @property
    def delivered(self) -> tuple[SentFrame, ...]:
        """The data frames the client certainly read as sent: the undamaged ones before the
        first it could not read (frames lost silently are skipped, the client reads on)."""
        out: list[SentFrame] = []
        for i, frame in enumerate(self.forwarded):
            damage = self._damage(i)
            if damage is None or damage.startswith("retyped"):
                out.append(frame)
            elif not damage.startswith("lost"):
                break
        return tuple(out)

    @property
    def readable(self) -> tuple[SentFrame, ...]:
        """The data frames that reached the client as sent, wherever they are: a client that
        read on after a malformed event read these (it may as well have stopped)."""
        return tuple(
            f
            for i, f in enumerate(self.forwarded)
            if self._damage(i) is None or str(self._damage(i)).startswith("retyped")
        )

    @property
    def any_damaged(self) -> bool:
        """A corruption on the link changed a frame of this exchange for the client."""
        return any(d is not None and not d.startswith("retyped") for d in self.damage)

    @property
    def silently_lost(self) -> tuple[SentFrame, ...]:
        """Frames a spec decoder dropped without an error (``lost``): nothing told the client."""
        return tuple(
            f for i, f in enumerate(self.forwarded) if str(self._damage(i)).startswith("lost")
        )

    @property
    def op(self) -> Op | None:
        return op_of(self.method) if self.method is not None else None

    @property
    def streaming(self) -> bool:
        return self.op in ("stream", "subscribe")

    @property
    def task_id(self) -> str | None:
        return self.record.task_id if self.record is not None else None

    @property
    def answered(self) -> bool:
        """A plain JSON answer (not an error) reached the client whole."""
        r = self.record
        return (
            r is not None
            and r.response == "json"
            and r.error_code is None
            and r.ended == "completed"
            and self.cut_by_link is None
        )

    @property
    def knows_task(self) -> bool:
        """Whether this exchange gave the client a task id (a resubscribe already had one)."""
        if self.op == "subscribe" or (self.op == "send" and self.answered):
            return True
        return any(f.kind in _TASK_KINDS for f in self.delivered)

    @property
    def turn_end_delivered(self) -> bool:
        """A frame that ends the turn reached the client: a Message, or a terminal or
        interrupted state."""
        return any(_ends_turn(f) for f in self.delivered)

    @property
    def turn_end_unreadable(self) -> bool:
        """A frame that ends the turn reached the client only damaged (it could not read it)."""
        return any(_ends_turn(f) for f in self.forwarded) and not any(
            _ends_turn(f) for f in self.readable
        )

    @property
    def message_delivered(self) -> bool:
        return any(f.kind == "message" for f in self.delivered)

    @property
    def cut_by_link(self) -> str | None:
        """How a fault of the link ended or held this exchange (``rst``, ``stall``, ``status
        502``...), if one did."""
        link = self.link
        if link is None:
            return None
        if link.end is not None and link.end.by == "proxy" and link.end.fault is not None:
            if link.end.status is not None and link.end.how == "clean" and not link.events:
                return f"status {link.end.status}"
            return link.end.how if link.end.how != "clean" else "end_clean"
        stalls = [f for f in link.faults if f.fault is not None and f.fault.action == "stall"]
        return "stall" if stalls else None

    @property
    def failed(self) -> bool:
        """The client got an error: a JSON-RPC error, an error frame, an HTTP error, a cut."""
        if self.record is not None and self.record.error_code is not None:
            return True
        if self.link is not None:
            status = self.link.first_byte_status or self.link.headers_status
            if status is not None and status >= 400:
                return True
        return self.cut_by_link not in (None, "stall")


def _ends_turn(f: SentFrame) -> bool:
    return f.kind == "message" or (f.kind in ("task", "status-update") and f.state in DONE_STATES)


def _data_frames(
    record: RequestRecord, link: LinkRequest | None, obs: A2AClientObservation
) -> tuple[SentFrame, ...]:
    """The data frames the link forwarded to the client, damaged or not (see the module)."""
    frames = [f for f in record.frames if f.kind in _DATA_KINDS]
    if link is None:
        return tuple(frames)
    for fired in link.faults:
        ref = fired.fault
        if ref is None or ref.action != "stall" or ref.index >= len(obs.faults):
            continue
        stall = obs.faults[ref.index].do.stall
        if stall is not None and stall.for_ is not None:
            until = fired.t + stall.for_ * obs.time_scale
            frames = [f for f in frames if not fired.t <= f.t < until]
    return tuple(frames[: len(link.events)])


def exchanges(obs: A2AClientObservation) -> list[Exchange]:
    """Every request of the client, both sides joined, in the order it was sent."""
    records = sorted(obs.ledger.requests, key=lambda r: r.index)
    if obs.link_events is None:
        out = [
            Exchange(
                t=r.t,
                method=r.rpc_method,
                record=r,
                link=None,
                forwarded=_data_frames(r, None, obs),
                last_activity=max([r.t, *(f.t for f in r.frames)]),
            )
            for r in records
        ]
        return sorted(out, key=lambda e: e.t)
    links = link_requests(obs.link_events)
    queues: dict[tuple[str, str, str | None], deque[LinkRequest]] = defaultdict(deque)
    for link in links:
        if link.reached_upstream:
            queues[link.key].append(link)
    paired: dict[int, RequestRecord] = {}
    unpaired: list[RequestRecord] = []
    for r in records:
        queue = queues.get((r.http_method.upper(), r.path, r.rpc_method))
        if queue:
            paired[queue.popleft().index] = r
        else:
            unpaired.append(r)
    out = []
    for link in links:
        record = paired.get(link.index)
        activity = [link.t, *link.events, *link.comments]
        if link.first_byte_t is not None:
            activity.append(link.first_byte_t)
        out.append(
            Exchange(
                t=link.t,
                method=link.rpc,
                record=record,
                link=link,
                forwarded=_data_frames(record, link, obs) if record is not None else (),
                last_activity=max(activity),
                damage=tuple(link.damage),
            )
        )
    for r in unpaired:  # the link lost track (should not happen); trust the server's record
        out.append(
            Exchange(
                t=r.t,
                method=r.rpc_method,
                record=r,
                link=None,
                forwarded=_data_frames(r, None, obs),
                last_activity=max([r.t, *(f.t for f in r.frames)]),
            )
        )
    return sorted(out, key=lambda e: e.t)


def turn_exchanges(
    obs: A2AClientObservation, turn: ClientRun, all_exchanges: Sequence[Exchange]
) -> list[Exchange]:
    """The exchanges sent during ``turn`` (from its start to the next turn's)."""
    later = [t.t_start for t in obs.turns if t.t_start > turn.t_start]
    end = min(later) if later else float("inf")
    return [e for e in all_exchanges if turn.t_start <= e.t < end]


def first_request_t(turn: ClientRun, turn_ex: Sequence[Exchange]) -> float:
    """Where the turn's time limits start: its first request (else its start)."""
    return min((e.t for e in turn_ex), default=turn.t_start)


def turn_task(
    obs: A2AClientObservation, turn: ClientRun, turn_ex: Sequence[Exchange]
) -> str | None:
    """The task this turn is about: the one its result names, else the first it touched."""
    known = {t.task_id for t in obs.ledger.tasks}
    result = turn.result
    if result is not None and result.task_id in known:
        return result.task_id
    for e in turn_ex:
        if e.task_id is not None and e.task_id in known:
            return e.task_id
    return None


def artifact_chunks(
    obs: A2AClientObservation, task_id: str, since: float, until: float
) -> list[TaskEventRecord]:
    """The task's artifact updates with ``since <= t <= until``, in order."""
    return [
        e
        for e in obs.ledger.task_events
        if e.task_id == task_id and e.kind == "artifact-update" and since <= e.t <= until
    ]


def replay_artifacts(
    chunks: Iterable[TaskEventRecord], start: dict[str, str] | None = None
) -> dict[str, str]:
    """Artifact texts after applying ``chunks`` to ``start`` the way the server aggregates them
    (append extends the artifact with that id, otherwise it is replaced)."""
    texts = dict(start or {})
    for c in chunks:
        if c.artifact_id is None:
            continue
        if c.append and c.artifact_id in texts:
            texts[c.artifact_id] += c.text or ""
        elif not c.append:
            texts[c.artifact_id] = c.text or ""
    return texts


def state_at(obs: A2AClientObservation, task_id: str, t: float) -> str | None:
    """The task's state (0.3 spelling) at time ``t``, from its own progression."""
    state: str | None = None
    for e in obs.ledger.task_events:
        if e.task_id != task_id or e.t > t:
            continue
        if e.kind == "created":
            state = "submitted"
        elif e.kind == "follow-up":
            state = "working"
        elif e.kind == "status-update" and e.state is not None:
            state = e.state
    return state
