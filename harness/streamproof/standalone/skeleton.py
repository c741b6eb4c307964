"""What ``streamproof proxy`` saw, written as a scenario for the user to finish.

A reproduction on a real stack is the start of a regression test: once the team has seen
their client fail behind "our proxy cuts the stream at 60 s", the same plan should run in
their CI against streamproof's scripted fakes. The proxy knows the plan and the request
sequence; it does not know what the agent said (it does not keep bodies), so the file holds
those as commented placeholders.

* Traffic with A2A JSON-RPC methods gives an ``a2a-client`` scenario: ``links.a2a`` is the
  plan, ``expect.ledger`` the methods in the order the proxy saw them, ``client:``, ``task:``
  and ``expect.result`` commented placeholders.
* Anything else gives a ``gateway`` scenario: the plan on the ``model`` link when the requests
  were Gemini calls (``...:streamGenerateContent``), else on the ``browser`` link, and
  ``request:`` and ``model:`` as commented placeholders.

Either way the file ends with what the proxy saw, request by request, in scenario time (the
real seconds divided by the proxy's ``--time-scale``), which is what the ``task:`` timeline or
the ``model:`` chunks are filled in from. Once the placeholders are filled in, the file loads
with :func:`streamproof.suites.loading.parse_scenarios`.

Pure: the plan and the records in, YAML text out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import yaml

from streamproof.faults.records import LinkEvent
from streamproof.protocol.a2a.vocabulary import version_of

__all__ = ["scenario_skeleton"]

_SHOWN_TIMES: Final = 12
"""Event times listed per request in the closing comment."""


def _flow(item: Any) -> str:
    """``item`` as one line of flow-style YAML (a scalar too: quoted only if it must be)."""
    text = str(yaml.safe_dump([item], default_flow_style=True, sort_keys=False, width=math.inf))
    return text.strip()[1:-1]


def _plan_lines(link: str, plan: Sequence[Any], engine: str) -> list[str]:
    lines = ["links:"]
    if engine != "inline":
        lines.append(f"  engine: {{{link}: {engine}}}")
    if not plan:
        lines.append(f"  {link}: []                      # the proxy ran without faults")
        return lines
    lines.append(f"  {link}:")
    lines += [f"    - {_flow(item)}" for item in plan]
    return lines


def _seen(records: Sequence[LinkEvent], time_scale: float) -> list[str]:
    """One comment line per request: when, what, the response, events, faults, the end."""
    by_request: dict[int, list[LinkEvent]] = {}
    for record in records:
        if record.request is not None:
            by_request.setdefault(record.request, []).append(record)

    def at(t: float) -> str:
        return f"{t / time_scale:.2f}s"

    lines: list[str] = []
    for request, own in by_request.items():
        first = own[0]
        start = first.t
        what = f"{first.method} {first.path}" + (f" rpc={first.rpc}" if first.rpc else "")
        parts = [f"#   req {request} at {at(start)} (conn {first.connection}): {what}"]
        status = next((r.status for r in own if r.kind in ("response_headers", "first_byte")), None)
        if status is not None:
            parts.append(f"status {status}")
        events = [r for r in own if r.kind == "event"]
        if events:
            times = " ".join(f"+{at(r.t - start)}" for r in events[:_SHOWN_TIMES])
            more = f" (+{len(events) - _SHOWN_TIMES} more)" if len(events) > _SHOWN_TIMES else ""
            parts.append(f"{len(events)} events at {times}{more}")
        for r in own:
            if r.kind == "fault" and r.fault is not None:
                parts.append(f"fault [{r.fault.index}] {r.detail} at +{at(r.t - start)}")
            elif r.kind == "end":
                parts.append(f"ended {r.how} by {r.by} at +{at(r.t - start)}")
        lines.append("; ".join(parts))
    return lines or ["#   (no requests)"]


def scenario_skeleton(
    *,
    plan: Sequence[Any],
    records: Sequence[LinkEvent],
    upstream: str,
    engine: str,
    time_scale: float,
    written_at: str,
    scenario_id: str,
) -> str:
    """The scenario file's text. ``plan`` holds the plan items as written (YAML-shaped),
    ``written_at`` an ISO time for the header, ``scenario_id`` the part after the suite's
    folder (``captured-20261201-100000``)."""
    requests = [r for r in records if r.kind == "request"]
    methods = [r.rpc for r in requests if r.rpc is not None and version_of(r.rpc) is not None]
    scale = f", times divided by --time-scale {time_scale:g}" if time_scale != 1 else ""
    header = [
        f"# Written by `streamproof proxy` at {written_at} from what it saw in front of",
        f"# {upstream} (engine {engine}). Fill in the commented placeholders (<...>), then:",
        "#   streamproof validate THIS_FILE",
    ]
    if methods:
        body = _a2a(plan, methods, upstream, engine, scenario_id)
        header.append("#   streamproof run THIS_FILE --target your-client.yaml")
    else:
        body = _gateway(plan, requests, upstream, engine, scenario_id)
        header.append("#   streamproof run THIS_FILE --target your-gateway.yaml")
    seen = [f"# What the proxy saw (scenario time since it started{scale}):"]
    seen += _seen(records, time_scale)
    return "\n".join([*header, *body, "", *seen]) + "\n"


def _a2a(
    plan: Sequence[Any], methods: Sequence[str], upstream: str, engine: str, scenario_id: str
) -> list[str]:
    return [
        f"id: a2a_client/{scenario_id}",
        f"title: {_flow(f'Captured by streamproof proxy in front of {upstream}')}",
        "kind: a2a-client",
        "requirements: [A2A-C-RECOVERY]   # what it reproduces: `streamproof list` names all",
        "# client:                               # how your client is called, in scenario time",
        "#   deadline: 90s",
        "#   idle: 20s",
        "#   prompt: <the user's text>",
        "# task:                                 # what the fake agent does, in scenario time",
        "#   - {at: 0s, status: submitted}",
        "#   - {at: 12s, artifact: {id: <artifact id>, text: <first chunk>}}",
        "#   - {at: 70s, artifact: {id: <artifact id>, append: true, text: <last chunk>, "
        "last: true}}",
        "#   - {at: 78s, status: completed}",
        *_plan_lines("a2a", plan, engine),
        "expect:",
        "  # result: {status: completed, artifacts: {<artifact id>: complete}}",
        f"  ledger: {_flow(list(methods))}   # the JSON-RPC methods, in the order seen",
        "  # tasks_created: 1",
    ]


def _gateway(
    plan: Sequence[Any],
    requests: Sequence[LinkEvent],
    upstream: str,
    engine: str,
    scenario_id: str,
) -> list[str]:
    gemini = any("generatecontent" in (r.path or "").lower() for r in requests)
    link = "model" if gemini else "browser"
    where = (
        "the model link: between the gateway and Gemini, as the proxy was"
        if gemini
        else "the browser link: between the browser and the gateway (use model: for the "
        "gateway's calls to Gemini)"
    )
    return [
        f"id: gateway/{scenario_id}",
        f"title: {_flow(f'Captured by streamproof proxy in front of {upstream}')}",
        "kind: gateway",
        "requirements: [GW-STREAM-TERMINAL]   # what it reproduces: `streamproof list` names all",
        "# request: <the user's text>",
        "# model:                               # what the fake model answers, one item per call",
        "#   - chunks: [<the first part of the answer>, <the rest>]",
        f"# The plan goes on {where}.",
        *_plan_lines(link, plan, engine),
        "# expect:",
        "#   frames: [delta+, message, done]",
    ]
