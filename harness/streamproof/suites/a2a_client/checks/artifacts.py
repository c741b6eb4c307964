"""Streamed artifacts: complete or flagged (A2A-C-ARTIFACTS-COMPLETE), reassembled from one source
(-REASSEMBLY), the reconnect gap (-GAP) and structured output (-STRUCTURED)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from streamproof.core.requirements import from_violations
from streamproof.core.verdicts import Verdict
from streamproof.fakes.a2a.ledger import TaskEventRecord
from streamproof.suites.a2a_client.checks.exchanges import (
    artifact_chunks,
    replay_artifacts,
)
from streamproof.suites.a2a_client.checks.push import repeated_text
from streamproof.suites.a2a_client.checks.recovery import _resubscribes
from streamproof.suites.a2a_client.checks.turns import (
    _ABSENT,
    _MAX_STATES,
    _label,
    _not_judged,
    _shorten,
    _Turn,
    _turns,
)
from streamproof.suites.a2a_client.observation import A2AClientObservation
from streamproof.suites.a2a_client.scenario import ResultExpect

# --- artifacts ---------------------------------------------------------------------------------


def _reachable(
    chunks: Sequence[TaskEventRecord],
    start: Iterable[str],
    optional: Callable[[TaskEventRecord], bool],
) -> set[str] | None:
    """Every text a client could hold after ``chunks`` when it applies some of them (only the
    ``optional`` ones may be missed) the seed's way: append extends the buffer, otherwise the
    buffer is replaced. ``None`` when there are too many to enumerate."""
    states = set(start)
    for c in chunks:
        text = c.text or ""
        applied = {(s + text if c.append and s != _ABSENT else text) for s in states}
        states = (states | applied) if optional(c) else applied
        if len(states) > _MAX_STATES:
            return None
    return states


class _ArtifactView:
    """One artifact of a turn: its chunks, what the server holds, what the client reported."""

    def __init__(self, turn: _Turn, artifact_id: str, until: float | None = None) -> None:
        obs = turn.obs
        assert turn.task is not None
        end = turn.end if until is None else until
        self.id = artifact_id
        before = replay_artifacts(
            c for c in artifact_chunks(obs, turn.task, 0.0, turn.first - 1e-9)
        )
        self.chunks = [
            c
            for c in artifact_chunks(obs, turn.task, turn.first, end)
            if c.artifact_id == artifact_id
        ]
        self.start = {_ABSENT, before[artifact_id]} if artifact_id in before else {_ABSENT}
        server = replay_artifacts(artifact_chunks(obs, turn.task, 0.0, end))
        self.server_text = server.get(artifact_id)
        fresh = replay_artifacts(self.chunks)
        self.full = {t for t in (self.server_text, fresh.get(artifact_id)) if t is not None}
        windows = _gap_windows(turn)
        self.gap = [c for c in self.chunks if any(a <= c.t <= b for a, b in windows)]
        self.lost = _silently_lost(turn, self.chunks)
        """Chunks whose events a corruption on the link removed without an error: no client
        could tell they were ever sent (the recipe has nothing to recover)."""

    def anything(self) -> set[str] | None:
        return _reachable(self.chunks, self.start, lambda c: True)

    def gap_only(self) -> set[str] | None:
        gap = {id(c) for c in self.gap}
        return _reachable(self.chunks, self.start, lambda c: id(c) in gap)

    def unseen_only(self) -> set[str] | None:
        """Texts that miss only chunks of a reconnect gap or chunks lost silently."""
        unseen = {id(c) for c in (*self.gap, *self.lost)}
        return _reachable(self.chunks, self.start, lambda c: id(c) in unseen)


def _silently_lost(turn: _Turn, chunks: Sequence[TaskEventRecord]) -> list[TaskEventRecord]:
    """The chunks (of ``chunks``) carried by frames a spec decoder dropped silently: each such
    frame is the latest chunk with its artifact id, text and append flag made by then."""
    lost: list[TaskEventRecord] = []
    for e in turn.ex:
        for frame in e.silently_lost:
            if frame.kind != "artifact-update":
                continue
            same = [
                c
                for c in chunks
                if c.artifact_id == frame.artifact_id
                and (c.text or "") == (frame.text or "")
                and bool(c.append) == bool(frame.append)
                and c.t <= frame.t + 1e-6
                and c not in lost
            ]
            if same:
                lost.append(same[-1])
    return lost


def _gap_windows(turn: _Turn) -> list[tuple[float, float]]:
    """(snapshot, tap) for every resubscribe that followed a tasks/get: chunks streamed in
    between reach neither the snapshot nor the new stream (unless it starts with one)."""
    windows: list[tuple[float, float]] = []
    for resub, _previous, get in _resubscribes(turn):
        if get is None or get.record is None or resub.record is None:
            continue
        frames = resub.record.frames
        tap = frames[0].t if frames else (resub.record.t_end or resub.record.t)
        windows.append((get.record.t, tap))
    return windows


def _artifact_ids(turn: _Turn, until: float | None = None) -> list[str]:
    assert turn.task is not None
    end = turn.end if until is None else until
    chunks = artifact_chunks(turn.obs, turn.task, turn.first, end)
    return list(dict.fromkeys(c.artifact_id for c in chunks if c.artifact_id is not None))


SUCCESS: Final = frozenset({"completed", "message"})
"""Result statuses that claim the answer is there: only these owe ``incomplete`` when
chunks are missing."""


def _expect_for(obs: A2AClientObservation, turn: _Turn) -> ResultExpect | None:
    return obs.expect.result if turn.run.turn == 0 else obs.expect.follow_up


def artifacts_complete_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "if the snapshot contains the complete artifact, replace the buffer from it, and if not,
    mark the result incomplete rather than returning a truncated report." An artifact that
    lacks chunks the server streamed, with ``incomplete`` false, fails; content the server
    never had in that shape is :func:`reassembly_verdicts`' business, and chunks lost only
    between a snapshot and its resubscribe are :func:`gap_verdicts`'."""
    rid = "A2A-C-ARTIFACTS-COMPLETE"
    problems: list[str] = []
    reported: list[float] = []  # when each result with a problem was read
    notes: list[str] = []
    judged = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None or not _artifact_ids(turn):
            continue
        if result.status not in SUCCESS:
            # A timeout, error, failure or interruption already says the result is not
            # complete: no incomplete flag is owed (docs/reference/a2a-client-contract.md).
            notes.append(f"{_label(turn.run)} says {result.status!r}, not a success")
            continue
        judged += 1
        if result.incomplete:
            notes.append(f"{_label(turn.run)} says incomplete")
            continue
        found = len(problems)
        for aid in _artifact_ids(turn):
            view = _ArtifactView(turn, aid)
            got = result.artifact(aid)
            if got is None:
                if result.status == "completed":
                    problems.append(
                        f"{_label(turn.run)} reports completed without artifact {aid!r}, which "
                        f"the server streamed ({len(view.server_text or '')} chars), and does "
                        "not say incomplete"
                    )
                continue
            if got.text in view.full:
                continue
            anything = view.anything()
            if anything is None or got.text not in anything:
                continue  # not a truncation: see A2A-C-REASSEMBLY
            gap_only = view.gap_only()
            if gap_only is not None and got.text in gap_only:
                notes.append(f"artifact {aid!r} lacks only chunks of a reconnect gap (A2A-C-GAP)")
                continue
            unseen = view.unseen_only() if view.lost else None
            if unseen is not None and got.text in unseen:
                notes.append(
                    f"artifact {aid!r} lacks only chunks whose events the link's corruption "
                    "removed without an error (no client can tell they were sent)"
                )
                continue
            problems.append(
                f"{_label(turn.run)}: artifact {aid!r} is truncated ({len(got.text)} of "
                f"{len(view.server_text or '')} chars: {_shorten(got.text)!r} where the server "
                f"has {_shorten(view.server_text or '')!r}) and the result does not say "
                "incomplete"
            )
        if len(problems) > found and turn.run.t_result is not None:
            reported.append(turn.run.t_result)
    if not judged:
        why = "; ".join(notes) or "no result claimed success with streamed artifacts"
        return [_not_judged(rid, why)]
    ok = "the result's artifacts equal the server's"
    if notes:
        ok += "; " + "; ".join(notes)
    return [
        from_violations(
            rid,
            problems,
            rule="return the server's artifacts (rebuilt from the snapshot after a gap) or mark "
            "the result incomplete; never a truncated artifact as complete",
            ok=ok,
            at=min(reported, default=None),
        )
    ]


def reassembly_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "When isAppend() is true, the parts extend the artifact with that ID; when false, they
    replace it" and "do not also append from it, or you risk counting a chunk twice. Pick one
    source." Each reported artifact must be a text the client can reach by applying the
    server's chunks that way, missing some at most: never a chunk twice, never a replaced
    chunk kept."""
    rid = "A2A-C-REASSEMBLY"
    problems: list[str] = []
    judged = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None:
            continue
        judged += len(result.artifacts)
        known = set(_artifact_ids(turn))
        server_all = replay_artifacts(artifact_chunks(obs, turn.task, 0.0, turn.end))
        for got in result.artifacts:
            if got.id not in known:
                if got.id not in server_all:
                    problems.append(
                        f"{_label(turn.run)} reports artifact {got.id!r}, which the server "
                        "never streamed"
                    )
                elif got.text != server_all[got.id]:
                    problems.append(
                        f"{_label(turn.run)}: artifact {got.id!r} ({_shorten(got.text)!r}) is "
                        f"not the server's ({_shorten(server_all[got.id])!r})"
                    )
                continue
            view = _ArtifactView(turn, got.id)
            if got.text in view.full:
                continue
            if repeated_text(obs, turn.run, got.id, got.text):
                continue  # a push delivery applied twice: A2A-C-PUSH-ONCE
            anything = view.anything()
            if anything is None:
                continue  # too many chunks to tell; A2A-C-ARTIFACTS-COMPLETE still compares
            if got.text not in anything:
                problems.append(
                    f"{_label(turn.run)}: artifact {got.id!r} is {_shorten(got.text)!r}, which "
                    "no append/replace reassembly of the server's chunks gives (the server has "
                    f"{_shorten(view.server_text or '')!r}): a chunk counted twice or a replaced "
                    "chunk kept"
                )
    if not judged:
        return [_not_judged(rid, "the result reports no artifact")]
    return [
        from_violations(
            rid,
            problems,
            rule="per artifact id, append extends and replace resets; build from one source, "
            "never from both the task snapshot and the update",
            ok="every artifact reassembled from the updates, no chunk twice",
        )
    ]


def gap_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """SHOULD, beyond the recipe: "Because resubscribe does not replay, any artifact chunks
    streamed during the gap are lost from your buffer". The recipe's snapshot covers the
    silence before it, not the moment between the snapshot and the resubscribe; a client that
    reads the resubscribe's Task snapshot (a2a-sdk 1.x servers send one) or checks the task
    once more at the end loses nothing."""
    rid = "A2A-C-GAP"
    problems: list[str] = []
    windows = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None:
            continue
        windows += len(_gap_windows(turn))
        if result.incomplete:
            continue
        for aid in _artifact_ids(turn):
            view = _ArtifactView(turn, aid)
            got = result.artifact(aid)
            if got is None or got.text in view.full or not view.gap:
                continue
            gap_only = view.gap_only()
            if gap_only is not None and got.text in gap_only:
                lost = [c.text or "" for c in view.gap if (c.text or "") not in got.text]
                problems.append(
                    f"{_label(turn.run)}: artifact {aid!r} lacks chunk(s) streamed between the "
                    f"snapshot and the resubscribe ({', '.join(repr(_shorten(t)) for t in lost)})"
                    " and the result does not say incomplete"
                )
    if not windows:
        return [_not_judged(rid, "no resubscribe after a snapshot, so no gap")]
    return [
        from_violations(
            rid,
            problems,
            rule="chunks streamed between the tasks/get snapshot and the resubscribe reach the "
            "result (from the resubscribe's snapshot or a final tasks/get), or the result says "
            "incomplete",
            ok="no chunk was lost between a snapshot and its resubscribe",
        )
    ]


def _json(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def structured_verdicts(obs: A2AClientObservation) -> list[Verdict]:
    """ "If you need structured output, buffer the raw parts and parse once the last chunk
    arrives, never per chunk." Judged on artifacts whose full text is JSON streamed in pieces
    that are not JSON on their own: a parsed value (``data``) must be the whole artifact's, and
    the call must not fail over a partial chunk."""
    rid = "A2A-C-STRUCTURED"
    problems: list[str] = []
    judged = 0
    for turn in _turns(obs):
        result = turn.result
        if result is None or turn.task is None:
            continue
        for aid in _artifact_ids(turn, turn.horizon):
            view = _ArtifactView(turn, aid, turn.horizon)
            ok, value = _json(view.server_text or "")
            pieces = [c.text or "" for c in view.chunks]
            if not ok or len(pieces) < 2 or all(_json(p)[0] for p in pieces):
                continue
            judged += 1
            got = result.artifact(aid)
            if got is not None and got.data is not None and got.data != value:
                problems.append(
                    f"{_label(turn.run)}: artifact {aid!r} was parsed as "
                    f"{_shorten(json.dumps(got.data))!r}, not as the whole artifact "
                    f"{_shorten(view.server_text or '')!r}"
                )
            if (
                result.status == "error"
                and turn.outcome(turn.horizon) == "completed"
                and not turn.troubled()
                and not any(e.any_damaged for e in turn.ex)  # a malformed event, not a chunk
            ):
                problems.append(
                    f"{_label(turn.run)} failed ({_shorten(result.message or '')!r}) although "
                    f"the task completed and artifact {aid!r} is valid JSON once whole: a "
                    "partial chunk was parsed"
                )
    if not judged:
        return [_not_judged(rid, "no structured artifact streamed in pieces")]
    return [
        from_violations(
            rid,
            problems,
            rule="buffer the raw parts and parse once the last chunk arrived",
            ok="structured output parsed whole",
        )
    ]
