"""The engines and what each declares it can do (see :mod:`~streamproof.faults.engines.support`).

Declarations only: importing this module starts nothing and imports no engine's dependency,
so a plan can be judged at load and the docs' table (docs/reference/faults.md) drawn without
toxiproxy or mitmproxy.
Each declaration is held true by the engine conformance tests, which run every item an engine
claims through that engine. The facts behind them are measured in
``docs/explanation/wire-facts/engines.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from streamproof.faults.engine_names import ENGINES, EngineName
from streamproof.faults.engines.support import EXACT, PLAN_ITEMS, EngineSupport, Support
from streamproof.faults.plan import Fault

__all__ = [
    "ENGINES",
    "TABLE_END",
    "TABLE_START",
    "EngineName",
    "engine_problems",
    "engine_support",
    "engines_table",
]


def _all_exact(**overrides: Support) -> dict[str, Support]:
    items = {item: EXACT for item in PLAN_ITEMS}
    for key, support in overrides.items():
        items[key.replace("__", ".")] = support
    return items


INLINE: Final = EngineSupport(
    engine="inline",
    summary="streamproof's own SSE-aware reverse proxy, on the harness's event loop",
    items=_all_exact(
        do__refuse=Support(
            "approximate",
            "the kernel accepts the TCP connection before any code runs: the request is read, "
            "then the socket closes with no response byte (a client sees a disconnect, not "
            "ECONNREFUSED)",
        ),
    ),
)

_PER_CONNECTION = (
    "toxiproxy applies a toxic to every connection of a proxy and cannot tell one HTTP request "
    "from another"
)


def _toxiproxy_combinations(fault: Fault) -> Support | None:
    """Where an action's effect depends on its trigger on toxiproxy."""
    if fault.do.delay is not None and fault.trigger.kind == "on_response_headers":
        return Support(
            "approximate",
            "a latency toxic holds every downstream chunk that long, so the whole response "
            "shifts (inline sends what arrived meanwhile in one burst)",
        )
    return None


# Measured through the engine conformance suite (harness/tests/faults/engines): the recorder
# behind toxiproxy places every trigger exactly (docs/explanation/wire-facts/engines.md §4 expected
# after_event, after and
# idle to be approximate or impossible with toxiproxy alone).
TOXIPROXY: Final = EngineSupport(
    engine="toxiproxy",
    summary="Shopify's TCP proxy (v2.12.0), driven over its HTTP API; streamproof's recorder "
    "behind it decides where each fault lands and toxiproxy carries it out; a toxic acts on "
    "every connection of the link",
    combinations=(_toxiproxy_combinations,),
    items={
        **{f"when.{key}": Support("rejected", _PER_CONNECTION) for key in ("method", "path")},
        "when.rpc": Support("rejected", _PER_CONNECTION),
        "when.occurrence": Support("rejected", _PER_CONNECTION),
        "when.on_request": EXACT,
        "when.on_response_headers": EXACT,
        "when.after_event": EXACT,
        "when.after_bytes": EXACT,
        "when.after": EXACT,
        "when.idle": EXACT,
        "do.status": Support("rejected", "a TCP proxy cannot answer an HTTP status"),
        "do.delay": EXACT,
        "do.drip": Support(
            "approximate",
            "toxiproxy's slicer waits after each chunk it forwards, not before each event: "
            "events that reach it together go out together, and every response on the link is "
            "paced from then on",
        ),
        "do.split": Support(
            "approximate",
            "toxiproxy's slicer halves each chunk until a slice is at most a pieces-th of the "
            "first body chunk (pieces rounded up to a power of two), with the gap after each "
            "slice; every response on the link from then on",
        ),
        "do.corrupt": Support("rejected", "toxiproxy forwards bytes unchanged"),
        "do.stall": Support(
            "exact",
            "the recorder behind toxiproxy stops forwarding on that connection; toxiproxy's "
            "latency toxic would hold every connection of the proxy, and removing it after the "
            "client left blocks its API for seconds",
        ),
        "do.end_clean": Support(
            "rejected",
            "a clean early end of a chunked body needs its terminator, which a TCP proxy "
            "cannot write: it can only cut or hold the stream",
        ),
        "do.fin": EXACT,
        "do.rst": EXACT,
        "do.refuse": EXACT,
    },
)

MITMPROXY: Final = EngineSupport(
    engine="mitmproxy",
    summary="mitmproxy 12 in the harness's process, with one addon carrying out the plan",
    items=_all_exact(
        do__drip=Support(
            "rejected", "mitmproxy's stream callable is synchronous and cannot wait per event"
        ),
        do__split=Support(
            "approximate",
            "the pieces go out as separate chunks back to back: the stream callable cannot "
            "wait, so there is no gap and TCP may join them again",
        ),
        do__end_clean=Support(
            "approximate",
            "the response carries Connection: close and its connection closes after the "
            "terminator: mitmproxy still counts the response as in progress and would write a "
            "terminator of its own into the connection's next response",
        ),
        do__refuse=Support(
            "rejected",
            "mitmproxy always accepts a connection (closing it with no response is not a refusal)",
        ),
    ),
)

_SUPPORT: Final[dict[str, EngineSupport]] = {
    "inline": INLINE,
    "toxiproxy": TOXIPROXY,
    "mitmproxy": MITMPROXY,
}


def engine_support(name: str) -> EngineSupport:
    """The declared support of engine ``name``; raises ``KeyError`` naming the engines."""
    try:
        return _SUPPORT[name]
    except KeyError:
        raise KeyError(f"unknown engine {name!r}; engines are {', '.join(ENGINES)}") from None


def engine_problems(
    plans: Mapping[str, Sequence[Fault]], engines: Iterable[tuple[str, str]]
) -> list[str]:
    """Why the engines a scenario names, as ``(link, engine)`` pairs, cannot carry out its
    plans (empty when they can)."""
    problems: list[str] = []
    for link, name in engines:
        problems += engine_support(name).rejections(plans.get(link, ()), f"links.{link}")
    return problems


_IN_BODY: Final = frozenset({"after_event", "after_bytes"})
"""Triggers that fire inside mitmproxy's stream callable (as a chunk passes)."""


def intercepted_tls_problems(plan: Sequence[Fault], where: str) -> list[str]:
    """Why a mitmproxy forward link, which intercepts TLS, cannot carry out ``plan`` (empty:
    it can). Such a link can only write body bytes from mitmproxy's stream callable: a write at
    another moment (a timed or immediate ``end_clean``, a ``stall: {for: D}`` releasing what it
    held) would go onto the TLS socket as raw bytes, so those are
    rejected; cuts, endless stalls, answers on request and rewrites as a chunk passes work."""
    problems: list[str] = []
    for index, fault in enumerate(plan):
        kind, action = fault.trigger.kind, fault.action
        why = None
        if action == "end_clean" and kind not in _IN_BODY:
            why = "an end_clean that fires outside the body stream (use after_event/after_bytes)"
        elif action == "stall" and fault.do.stall is not None and fault.do.stall.for_ is not None:
            why = "a stall that ends (stall: {for: ...}) releases what it held outside the body"
        if why is not None:
            problems.append(
                f"{where}[{index}]: a forward proxy that intercepts TLS (model_path) cannot do "
                f"{fault.describe()}: {why}"
            )
    return problems


TABLE_START: Final = "<!-- engines:start (generated by `streamproof engines`) -->"
TABLE_END: Final = "<!-- engines:end -->"

_MARK: Final = {"exact": "exact", "approximate": "approx.", "rejected": "no"}


def engines_table() -> str:
    """The engine table of docs/reference/faults.md (Markdown): one row per plan item, one column
    per engine,
    each cell exact / approx. / no with the note as a footnote-like tail."""
    header = "| plan item | " + " | ".join(ENGINES) + " |"
    lines = [header, "|---|" + "---|" * len(ENGINES)]
    for item in PLAN_ITEMS:
        cells = []
        for name in ENGINES:
            support = _SUPPORT[name].items[item]
            cell = _MARK[support.fit]
            if support.note:
                cell += f": {support.note}"
            cells.append(cell)
        lines.append(f"| `{item}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)
