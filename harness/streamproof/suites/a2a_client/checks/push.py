"""Push notifications: the client takes the task's updates from a webhook (``A2A-C-PUSH-…``).

The seed (docs/explanation/a2a-client-rules.md#push-notifications) names push as the trade-off
against streaming and its principles hold there too: one task per logical call (judged by
``A2A-C-NO-RESEND``), knowing when the call is over, recovery from what the server still holds,
and a deadline (``A2A-C-DEADLINE``). What is new on a webhook: anyone can POST to it
(``A2A-C-PUSH-AUTH``), deliveries come twice (``A2A-C-PUSH-ONCE``) or late
(``A2A-C-PUSH-STALE``) or stop (``A2A-C-PUSH-SILENCE``). Each check judges from the ledger's
delivery records (what was sent, what the webhook answered, when) and the result line, and says
not applicable when the run gave it nothing to judge.

:func:`delivery_faults_fired` gives the scenario's delivery faults to the fault judgement
(``fault.fired``), as a link's faults are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from streamproof.core.requirements import from_violations
from streamproof.core.verdicts import Verdict
from streamproof.fakes.a2a.push.records import DeliveryRecord
from streamproof.fakes.a2a.push.script import FORGED_TEXT
from streamproof.faults.fired import NamedFault
from streamproof.suites.a2a_client.checks.turns import _label, _not_judged, _secs, slack
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.result import ClientRun

__all__ = [
    "delivery_faults_fired",
    "forged_status",
    "push_auth_verdicts",
    "push_once_verdicts",
    "push_silence_verdicts",
    "push_stale_verdicts",
    "repeated_text",
]

_TERMINAL = frozenset({"completed", "failed", "canceled", "rejected", "unknown"})
_ENDS_CALL = _TERMINAL | {"input-required", "auth-required"}
_GET = frozenset({"tasks/get", "GetTask"})


def _answered(d: DeliveryRecord) -> bool:
    return d.receiver_status is not None


def _ok(d: DeliveryRecord) -> bool:
    return d.receiver_status is not None and 200 <= d.receiver_status < 300


def _in_turn(run: ClientRun, t: float) -> bool:
    return run.t_start <= t <= run.t_end


def _news(d: DeliveryRecord) -> bool:
    """A delivery that told the client something true: genuine, authentic, and answered."""
    return d.genuine and d.authentic and _answered(d)


# --- A2A-C-PUSH-AUTH ---------------------------------------------------------------------------


def push_auth_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """Spec 1.0 §13.2: "Clients MUST validate webhook authenticity using the provided
    authentication credentials"; the seed: push "at the cost of exposing an authenticated
    webhook". A forged delivery (no token, or a wrong one) carries a state and a text the task
    never had; a client that takes it reports them."""
    rid = "A2A-C-PUSH-AUTH"
    forged = [d for d in obs.ledger.deliveries if not d.authentic and _answered(d)]
    if not forged:
        return [_not_judged(rid, "no unauthenticated delivery reached the webhook")]
    problems: list[str] = []
    for d in forged:
        how = "no token" if d.fault == "no_token" else "a wrong token"
        if _ok(d):
            problems.append(
                f"the webhook accepted a delivery with {how} (HTTP {d.receiver_status} at "
                f"{_secs(obs, d.t)})"
            )
    states = {e.state for e in obs.ledger.task_events if e.state is not None}
    for run in obs.turns:
        result = run.result
        if result is None:
            continue
        mine = [d for d in forged if _in_turn(run, d.t)]
        if not mine:
            continue
        texts = [result.message or "", *(a.text for a in result.artifacts)]
        if any(FORGED_TEXT in text for text in texts):
            problems.append(f"{_label(run)}'s result repeats the forged delivery's text")
        claimed = {d.state for d in mine if d.state is not None}
        if result.status in claimed and result.status not in states:
            problems.append(
                f"{_label(run)}'s result says {result.status!r}, a state only a forged delivery "
                "claimed (the task never had it)"
            )
    return [
        from_violations(
            rid,
            problems,
            rule="a delivery that fails authentication is answered non-2xx and changes nothing",
            ok=f"{len(forged)} forged deliver{'y' if len(forged) == 1 else 'ies'} refused "
            f"({', '.join(str(d.receiver_status) for d in forged)}) and left out of the result",
            at=min((d.t for d in forged), default=None) if problems else None,
        )
    ]


def forged_status(obs: A2AClientObservation, run: ClientRun, status: str) -> bool:
    """Whether ``status`` in ``run``'s result is a forged delivery's, one the webhook took:
    that is ``A2A-C-PUSH-AUTH``'s to judge, and no other rule's."""
    return any(
        not d.authentic and _ok(d) and d.state == status and _in_turn(run, d.t)
        for d in obs.ledger.deliveries
    )


def repeated_text(obs: A2AClientObservation, run: ClientRun, aid: str, text: str) -> bool:
    """Whether artifact ``aid`` reads ``text`` because a duplicated or replayed delivery was
    applied again: ``A2A-C-PUSH-ONCE``'s to judge, and no other rule's."""
    if run.t_result is None:
        return False
    before = [d for d in obs.ledger.deliveries if _news(d) and run.t_start <= d.t <= run.t_result]
    if not any(d.fault in ("duplicate", "replay") for d in before):
        return False
    once = _assemble(d for d in before if d.fault not in ("duplicate", "replay"))
    return _assemble(before).get(aid) == text != once.get(aid)


# --- A2A-C-PUSH-ONCE ---------------------------------------------------------------------------


def _assemble(deliveries: Iterable[DeliveryRecord]) -> dict[str, str]:
    """The artifacts the deliveries give, applied in order (append extends, else replace)."""
    out: dict[str, str] = {}
    for d in deliveries:
        if d.kind != "artifact-update" or d.artifact_id is None:
            continue
        text = d.text or ""
        out[d.artifact_id] = out.get(d.artifact_id, "") + text if d.append else text
    return out


def push_once_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """Spec 1.0 §4.3.3: "Clients SHOULD process notifications idempotently, as duplicate
    deliveries may occur", made a MUST by the seed's rule that no chunk is counted twice
    ("Pick one source ... or you risk counting a chunk twice")."""
    rid = "A2A-C-PUSH-ONCE"
    problems: list[str] = []
    judged = 0
    for run in obs.turns:
        result = run.result
        if result is None or run.t_result is None:
            continue
        before = [
            d for d in obs.ledger.deliveries if _news(d) and run.t_start <= d.t <= run.t_result
        ]
        again = [d for d in before if d.fault in ("duplicate", "replay")]
        if not again:
            continue
        judged += 1
        once = _assemble(d for d in before if d.fault not in ("duplicate", "replay"))
        twice = _assemble(before)
        for aid, doubled in twice.items():
            got = result.artifact(aid)
            if got is not None and got.text == doubled and doubled != once.get(aid):
                problems.append(
                    f"{_label(run)}'s artifact {aid!r} is what the deliveries give with the "
                    f"{again[0].fault} of delivery {again[0].delivery} applied again "
                    f"({len(doubled)} chars, {len(once.get(aid, ''))} applied once)"
                )
        if result.status == "completed" and any(
            d.kind == "status-update" and d.state not in _ENDS_CALL for d in again
        ):
            pass  # a repeated progress update cannot show in a finished result
    if not judged:
        return [_not_judged(rid, "no duplicated or replayed delivery reached the client")]
    return [
        from_violations(
            rid,
            problems,
            rule="a delivery that comes twice is applied once",
            ok="the duplicated or replayed deliveries changed nothing",
        )
    ]


# --- A2A-C-PUSH-STALE --------------------------------------------------------------------------


def push_stale_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """The seed: "make completion idempotent ... a final status update followed by a terminal
    state cannot finish the call twice"; the call completes on a terminal state. An update
    that comes after the terminal one (spec topic streaming-and-async: reject what is too old)
    belongs to a call that is over."""
    rid = "A2A-C-PUSH-STALE"
    problems: list[str] = []
    judged = 0
    limit = slack(obs)
    for run in obs.turns:
        if run.t_result is None or run.result is None:
            continue
        mine = [d for d in obs.ledger.deliveries if _news(d) and _in_turn(run, d.t)]
        terminal = next(
            (
                d
                for d in mine
                if d.kind == "status-update" and d.state in _TERMINAL and _ok(d) and d.fault is None
            ),
            None,
        )
        if terminal is None or terminal.t_end is None:
            continue
        stale = [
            d for d in mine if d.fault == "stale" and d.t >= terminal.t_end and d.t <= run.t_result
        ]
        if not stale:
            continue
        judged += 1
        result = run.result
        if result.status != terminal.state:
            problems.append(
                f"{_label(run)} ended {result.status!r} though the terminal delivery said "
                f"{terminal.state!r} before the stale one"
            )
        last = max((d.t_end or d.t) for d in [terminal, *stale])
        if run.t_result > last + limit:
            problems.append(
                f"{_label(run)} gave its result {_secs(obs, run.t_result - terminal.t_end)} after "
                f"the terminal delivery: the stale delivery at "
                f"{_secs(obs, stale[0].t - terminal.t_end)} after it reopened the call"
            )
    if not judged:
        return [_not_judged(rid, "no stale delivery reached the client after the terminal one")]
    return [
        from_violations(
            rid,
            problems,
            rule="a call is over at its terminal delivery; what comes after changes nothing",
            ok="the stale delivery left the finished call as it was",
        )
    ]


# --- A2A-C-PUSH-SILENCE ------------------------------------------------------------------------


def push_silence_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """The seed's recovery "from what the server still holds": "a watchdog that notices no
    event for longer than the agent's expected heartbeat" fetches the snapshot (GetTask). On
    a webhook a lost or cut delivery is a quiet drop: nothing tells the client but silence."""
    rid = "A2A-C-PUSH-SILENCE"
    if not obs.push:
        return [_not_judged(rid, "not a push call")]
    problems: list[str] = []
    judged = 0
    limit = obs.idle_s + slack(obs)
    for run in obs.turns:
        rpc = [r for r in obs.ledger.requests if r.rpc_method is not None and _in_turn(run, r.t)]
        if not rpc:
            continue
        sent = [d for d in obs.ledger.deliveries if _news(d) and _in_turn(run, d.t)]
        over_at = next(
            (
                d.t_end
                for d in sent
                if d.state in _ENDS_CALL and d.kind != "task" and d.t_end is not None
            ),
            None,
        )
        end = min(x for x in (run.t_end, over_at) if x is not None)
        news = sorted(
            [r.t_end for r in rpc if r.t_end is not None]
            + [d.t_end for d in sent if d.t_end is not None]
        )
        gets = sorted(r.t for r in rpc if r.rpc_method in _GET)
        mark = rpc[0].t_end if rpc[0].t_end is not None else rpc[0].t
        while mark + obs.idle_s < end:
            following = [t for t in [*news, *gets] if mark < t]
            nxt = min(following, default=None)
            if nxt is not None and nxt <= mark + obs.idle_s:
                mark = nxt
                continue
            judged += 1
            recovered = [g for g in gets if mark < g <= mark + limit]
            if not recovered and end > mark + limit:
                problems.append(
                    f"{_label(run)} heard nothing for {_secs(obs, end - mark)} from "
                    f"{_secs(obs, mark - run.t_start)} (idle limit {_secs(obs, obs.idle_s)}) "
                    "and did not ask the server for the task (GetTask)"
                )
                break
            if not recovered:
                break
            mark = recovered[0]
    if not judged:
        return [_not_judged(rid, "deliveries never stopped for longer than the idle limit")]
    return [
        from_violations(
            rid,
            problems,
            rule="when deliveries stop, GetTask within the idle limit plus tolerance",
            ok="every silence longer than the idle limit was followed by GetTask in time",
        )
    ]


# --- fault.fired of the delivery faults ---------------------------------------------------------


def delivery_faults_fired(obs: A2AClientObservation) -> Sequence[NamedFault]:
    """Each ``push.faults`` entry with when it first acted on a delivery (None: never)."""
    out: list[NamedFault] = []
    made = len({(d.task_id, d.delivery) for d in obs.ledger.deliveries if d.delivery is not None})
    for i, fault in enumerate(obs.push_faults):
        at = min((d.t for d in obs.ledger.deliveries if d.fault_index == i), default=None)
        saw = (
            f"the task made {made} deliveries"
            if made
            else "no webhook was registered, so nothing was delivered"
        )
        out.append((f"push.faults[{i}] ({fault.describe()})", at, fault.optional, saw))
    return out
