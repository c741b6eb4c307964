"""The report's view of one observation at a glance: the highlights (the frame sequence, the
requests and push deliveries the fake saw, each call's result, the stored history, how the
response ended) and the tails of what the target printed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamproof.core.texts import compress

__all__ = ["LOG_LINES", "highlights", "logs"]

LOG_LINES = 30
"""Lines of a target's output the page shows (the whole of it is in results.json)."""


def highlights(observation: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The observed pattern at a glance: the frame sequence (gateway), the requests the fake
    server saw, its push deliveries and each call's result (A2A client), the stored history,
    the response's end."""
    out: list[tuple[str, str]] = []
    frames = observation.get("frames")
    if isinstance(frames, list):
        events = [str(f.get("event")) for f in frames if isinstance(f, Mapping)]
        out.append(("frame pattern", compress(events, limit=40) or "(no frames)"))
    elif isinstance(observation.get("frame_sequence"), str):
        out.append(("frame pattern", observation["frame_sequence"] or "(no frames)"))
    response = observation.get("response")
    if isinstance(response, Mapping):
        out.append(
            (
                "response",
                ", ".join(
                    f"{k} {response[k]}" for k in ("status", "end", "error") if response.get(k)
                ),
            )
        )
    history = observation.get("history")
    if isinstance(history, list):
        authors = [str(e.get("author", "?")) for e in history if isinstance(e, Mapping)]
        out.append(("stored history (authors)", compress(authors, limit=40) or "(empty)"))
    if observation.get("history_error"):
        out.append(("history", str(observation["history_error"])))
    ledger = observation.get("ledger")
    if isinstance(ledger, Mapping) and isinstance(ledger.get("requests"), list):
        calls = [
            str(r.get("rpc_method") or f"{r.get('http_method')} {r.get('path')}")
            for r in ledger["requests"]
            if isinstance(r, Mapping)
        ]
        out.append(("requests (ledger)", compress(calls, limit=40) or "(none)"))
    elif isinstance(observation.get("requests"), str):
        out.append(("requests (ledger)", observation["requests"]))
    if isinstance(ledger, Mapping) and ledger.get("deliveries"):
        sent = [
            (f"#{d['delivery']}" if d.get("delivery") else "forged")
            + f" {d.get('ended')}"
            + (f" [{d['fault']}]" if d.get("fault") else "")
            for d in ledger["deliveries"]
            if isinstance(d, Mapping)
        ]
        out.append(("push deliveries (ledger)", compress(sent, limit=40)))
    for turn in observation.get("turns") or []:
        if isinstance(turn, Mapping):
            out.append((f"turn {turn.get('turn', '?')} result", _turn(turn)))
    return out


def _turn(turn: Mapping[str, Any]) -> str:
    result = turn.get("result")
    parts = []
    if isinstance(result, Mapping):
        parts.append(f"status {result.get('status')}")
        if result.get("incomplete"):
            parts.append("incomplete")
        artifacts = result.get("artifacts")
        if isinstance(artifacts, list):
            parts.append(f"{len(artifacts)} artifact(s)")
    elif "status" in turn:
        parts.append(f"status {turn.get('status')}")
    failure = turn.get("failure")
    if isinstance(failure, Mapping):
        parts.append(f"failure {failure.get('kind')}")
    elif failure:
        parts.append(f"failure {failure}")
    if turn.get("exit_code") is not None:
        parts.append(f"exit code {turn['exit_code']}")
    return ", ".join(parts) or "no result"


def logs(observation: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The target's output tail: the gateway's log, each client call's stderr."""
    out: list[tuple[str, str]] = []
    log = observation.get("target_log")
    if isinstance(log, str) and log.strip():
        out.append(("target output (tail)", _tail(log)))
    for turn in observation.get("turns") or []:
        if isinstance(turn, Mapping):
            for stream in ("stderr_tail", "stdout_tail"):
                text = turn.get(stream)
                if isinstance(text, str) and text.strip():
                    name = stream.removesuffix("_tail")
                    out.append((f"turn {turn.get('turn', '?')} {name} (tail)", _tail(text)))
    return out


def _tail(text: str) -> str:
    return "\n".join(text.splitlines()[-LOG_LINES:])
