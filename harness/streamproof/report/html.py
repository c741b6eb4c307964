"""``report.html``: a run's ``results.json`` for people, in one self-contained file.

Made from the report dict alone (:func:`render_html`), so a saved ``results.json`` renders to
the same bytes later (``streamproof report``). No external URL, no script: inline CSS and SVG.

Layout: a header with the run's verdict, counts, target, time scale, versions and command line;
the matrix of requirements (rows, with level and seed section) by scenarios (columns), each
cell a state (``pass``, ``fail``, ``unmet`` SHOULD, ``known`` failure of the baseline, ``skip``,
``na`` not applicable, ``none`` not judged there) linking to the scenario's section; the
scenarios' own expectations (``expect.frames``...) are rows of their own below the
requirements. Then one section per scenario, failed ones first: its timeline, each broken
rule's expected and observed, the messages, what was observed, the target's output tail and
the command that reruns it.

Selectors other tools rely on (keep them): ``header.verdict.ok|failed``, ``table.matrix`` with
``td.cell.STATE`` (judged cells hold an ``a[href="#scn-ID"]``), ``section.scenario#scn-ID``
with ``svg.timeline``; ``ID`` is the scenario id with ``/`` replaced by ``--``.
"""

from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape
from markupsafe import Markup
from pydantic import ValidationError

from streamproof.core.texts import compress
from streamproof.core.timeline import Timeline
from streamproof.core.verdicts import Kind, Outcome
from streamproof.report.results import FAILURE_COUNTS, summary_line
from streamproof.report.svg import SVG_CSS, svg_defs, timeline_svg
from streamproof.suites import REGISTRY

__all__ = [
    "GENERATOR",
    "STATES",
    "anchor",
    "cell_state",
    "render_html",
    "rerun_command",
    "write_html",
]

GENERATOR = "streamproof report.html"
"""The ``<meta name="generator">`` of every report this module writes (how ``streamproof
report`` knows a file it may replace)."""

STATES: dict[str, tuple[str, str]] = {
    "fail": ("\u2717", "MUST failed"),
    "known": ("\u2691", "known failure (baseline)"),
    "unmet": ("!", "SHOULD unmet"),
    "pass": ("\u2713", "passed"),
    "skip": ("\u21b7", "skipped"),
    "na": ("\u00b7", "not applicable"),
    "none": ("", "not judged in this scenario"),
}
"""Cell state: (symbol, meaning), worst first: a cell of several verdicts shows the worst."""

OBSERVATION_CAP = 12_000
"""Characters of a whole observation the page shows (the rest is in results.json; the
highlights above it are drawn from all of it)."""
LOG_LINES = 30


_PNG = "data:image/png;base64,"
"""A browser-client scenario that failed keeps a picture of the page (its observation's
``screenshot``): shown in the report, self-contained."""


def anchor(scenario_id: str) -> str:
    """The id of a scenario's section: ``scn-`` and its id with ``/`` replaced by ``--``."""
    return "scn-" + scenario_id.replace("/", "--")


def cell_state(verdicts: Sequence[Mapping[str, Any]]) -> str:
    """The state of one requirement in one scenario from its verdicts there (the worst)."""
    states = {_verdict_state(v) for v in verdicts} - {"none"}
    for state in STATES:
        if state in states:
            return state
    return "none"


def _verdict_state(verdict: Mapping[str, Any]) -> str:
    outcome = verdict.get("outcome")
    if verdict.get("baseline") and outcome in (Outcome.FAIL.value, Outcome.NON_STRICT.value):
        return "known"  # a baseline entry names it (an unmet SHOULD only under --strict)
    if outcome == Outcome.FAIL.value:
        return "fail"
    return {
        Outcome.NON_STRICT.value: "unmet",
        Outcome.PASS.value: "pass",
        Outcome.SKIP.value: "skip",
        Outcome.NOT_APPLICABLE.value: "na",
    }.get(str(outcome), "none")


def rerun_command(report: Mapping[str, Any], record: Mapping[str, Any]) -> str:
    """``streamproof run`` with the run's target, bug, time scale, strictness and engine, the
    scenario's file and ``-k`` its id."""
    env = report.get("environment") or {}
    command = ["streamproof", "run"]
    if report.get("target_file"):
        command += ["--target", str(report["target_file"])]
    if report.get("bug"):
        command += ["--bug", str(report["bug"])]
    if report.get("time_scale") is not None:
        command += ["--time-scale", f"{report['time_scale']:g}"]
    if report.get("strict"):
        command.append("--strict")
    engine = env.get("engine") if isinstance(env, Mapping) else None
    if engine and engine != "inline":
        command += ["--engine", str(engine)]
    command += [str(record.get("file", "?")), "-k", str(record.get("id", "?"))]
    return shlex.join(command)


def render_html(report: Mapping[str, Any]) -> str:
    """The page for ``report`` (a ``results.json`` dict). The report is taken as it reads back
    from JSON (tuples as lists...), so a run's page and the page of its saved ``results.json``
    are the same bytes."""
    saved = json.loads(json.dumps(report, ensure_ascii=False))
    return str(_template().render(**_page(saved)))


def write_html(report: Mapping[str, Any], path: Path) -> Path:
    """Write ``report``'s page to ``path`` (its folder created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report), encoding="utf-8")
    return path


@functools.cache
def _template() -> Template:
    env = Environment(
        loader=PackageLoader("streamproof.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.get_template("report.html.j2")


# --- the page's data ------------------------------------------------------------------------


def _page(report: Mapping[str, Any]) -> dict[str, Any]:
    records = [r for r in report.get("scenarios") or [] if isinstance(r, Mapping)]
    summary = report.get("summary") or {}
    env = report.get("environment") or {}
    scenarios = [_scenario(report, r) for r in records]
    # new failures first, then the failures a baseline knows, then the rest
    order = {"failed": 0, "interrupted": 1, "passed": 2, "skipped": 3}
    sections = sorted(scenarios, key=lambda s: 1 if s["known"] else order[s["outcome"]])
    return {
        "generator": GENERATOR,
        "css": Markup(SVG_CSS),
        "defs": Markup(svg_defs()),
        "header": _header(report, summary, env),
        "matrix": _matrix(records),
        "states": STATES,
        "scenarios": sections,
        "failed": [s for s in scenarios if s["outcome"] == "failed" and not s["known"]],
        "known": [s for s in scenarios if s["known"]],
    }


def _parallel_text(env: Mapping[str, Any]) -> str | None:
    """``shard 2/4 (11 of the 42 selected scenarios); 2 parallel workers``, or None for a
    whole selection run in one process."""
    parts: list[str] = []
    shard = env.get("shard")
    if isinstance(shard, Mapping):
        parts.append(
            f"shard {shard.get('index')}/{shard.get('count')} ({shard.get('scenarios')} of the "
            f"{shard.get('of')} selected scenarios, balanced by {shard.get('balanced_by')})"
        )
    if env.get("workers"):
        parts.append(f"{env['workers']} parallel workers")
    return "; ".join(parts) or None


def _header(
    report: Mapping[str, Any], summary: Mapping[str, Any], env: Mapping[str, Any]
) -> dict[str, Any]:
    counts = summary.get("verdicts") or {}
    req = counts.get(Kind.REQUIREMENT.value) or {}
    exp = counts.get(Kind.EXPECTATION.value) or {}
    packages = env.get("packages") or {}
    python = env.get("python") or {}
    versions = [("streamproof", env.get("streamproof"))]
    versions.append(("Python", python.get("version") if isinstance(python, Mapping) else None))
    versions += sorted(packages.items()) if isinstance(packages, Mapping) else []
    targets = env.get("targets") or {}
    target_names = [
        f"{kind}: {info.get('name', '?')}" if isinstance(info, Mapping) else f"{kind}: ?"
        for kind, info in sorted(targets.items())
    ]
    command = env.get("command_line")
    baseline = summary.get("baseline")
    # What failed, by kind, only where there is some: a FAILED header never says "0 ...".
    failures = [(words, summary[key]) for key, words in FAILURE_COUNTS if summary.get(key, 0) > 0]
    faults = counts.get(Kind.FAULT.value) or {}
    return {
        "ok": bool(summary.get("ok")),
        "line": summary_line(summary),
        "error": summary.get("error"),
        "interrupted": bool(summary.get("interrupted")),
        "warnings": list(summary.get("warnings") or []),
        "failures": failures,
        "counts": [
            ("scenarios", summary.get("scenarios", 0)),
            ("passed", summary.get("passed", 0)),
            ("failed", summary.get("failed", 0)),
            ("skipped scenarios", summary.get("skipped", 0)),
            ("requirements passed", req.get(Outcome.PASS.value, 0)),
            ("SHOULD unmet", req.get(Outcome.NON_STRICT.value, 0)),
            ("not applicable", req.get(Outcome.NOT_APPLICABLE.value, 0)),
            ("skipped checks", req.get(Outcome.SKIP.value, 0)),
            ("expectations met", exp.get(Outcome.PASS.value, 0)),
            ("faults fired", faults.get(Outcome.PASS.value, 0)),
        ],
        "target": report.get("target_file") or "the bundled reference",
        "targets": target_names,
        "bug": report.get("bug"),
        "time_scale": report.get("time_scale"),
        "strict": bool(report.get("strict")),
        "engine": env.get("engine"),
        "started_at": report.get("started_at"),
        "duration_s": report.get("duration_s"),
        "versions": [(name, version or "not installed") for name, version in versions],
        "command": shlex.join(map(str, command)) if isinstance(command, list) else None,
        "baseline": baseline if isinstance(baseline, Mapping) else None,
        "parallel": _parallel_text(env),
    }


def _matrix(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Rows: the requirements judged or declared anywhere (registry order), then the
    expectations; columns: the scenarios in run order."""
    by_row: dict[tuple[str, str], dict[int, list[Mapping[str, Any]]]] = {}
    declared: dict[str, set[int]] = {}
    for col, record in enumerate(records):
        for verdict in record.get("verdicts") or []:
            kind = verdict.get("kind", Kind.REQUIREMENT.value)
            key = (str(kind), str(verdict.get("requirement")))
            by_row.setdefault(key, {}).setdefault(col, []).append(verdict)
        for rid in record.get("requirements") or []:
            declared.setdefault(str(rid), set()).add(col)
            by_row.setdefault((Kind.REQUIREMENT.value, str(rid)), {})
    registry_order = {rid: i for i, rid in enumerate(REGISTRY)}

    def row_order(key: tuple[str, str]) -> tuple[int, int, str]:
        kind, rid = key
        if kind == Kind.REQUIREMENT.value:
            return (0, registry_order.get(rid, len(registry_order)), rid)
        return (1, 0, rid)

    columns: list[dict[str, Any]] = [
        {
            "id": str(r.get("id", "?")),
            "anchor": anchor(str(r.get("id", "?"))),
            "outcome": _outcome(r),
            "known": bool(r.get("known_failure")),
        }
        for r in records
    ]
    rows = []
    for key in sorted(by_row, key=row_order):
        kind, rid = key
        cells = []
        for col, column in enumerate(columns):
            verdicts = by_row[key].get(col, [])
            state = cell_state(verdicts)
            if state == "none" and col in declared.get(rid, ()) and column["outcome"] == "skipped":
                state = "skip"  # the scenario that would have judged it was skipped
            cells.append(
                {
                    "state": state,
                    "symbol": STATES[state][0],
                    "href": "#" + column["anchor"] if state != "none" else None,
                }
            )
        rule = REGISTRY.get(rid) if kind == Kind.REQUIREMENT.value else None
        level = rule.level.value if rule else _level(by_row[key])
        rows.append(
            {
                "id": rid,
                "kind": kind,
                "level": level,
                "section": rule.section if rule else "",
                "seed": f"{rule.source()}: {rule.section}" if rule else "",
                "statement": rule.statement
                if rule
                else (
                    "each fault the scenario planned on a link fired (optional: true: need not)"
                    if kind == Kind.FAULT.value
                    else "the scenario's own expectation"
                ),
                "cells": cells,
            }
        )
    return {
        "columns": columns,
        "requirements": [r for r in rows if r["kind"] == Kind.REQUIREMENT.value],
        "expectations": [r for r in rows if r["kind"] != Kind.REQUIREMENT.value],
    }


def _level(cells: Mapping[int, list[Mapping[str, Any]]]) -> str:
    for verdicts in cells.values():
        for verdict in verdicts:
            return str(verdict.get("level", ""))
    return ""


def _outcome(record: Mapping[str, Any]) -> str:
    outcome = str(record.get("outcome") or "failed")
    return outcome if outcome in ("passed", "failed", "skipped", "interrupted") else "failed"


def _scenario(report: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    sid = str(record.get("id", "?"))
    verdicts = [v for v in record.get("verdicts") or [] if isinstance(v, Mapping)]
    scale = report.get("time_scale")
    scale = float(scale) if isinstance(scale, int | float) and scale > 0 else 1.0
    broken = [
        _verdict(v, scale)
        for v in verdicts
        if v.get("outcome") in (Outcome.FAIL.value, Outcome.NON_STRICT.value)
    ]
    observation = record.get("observation")
    shot = observation.get("screenshot") if isinstance(observation, Mapping) else None
    if shot is not None and isinstance(observation, Mapping):  # a picture, not JSON text
        observation = {k: v for k, v in observation.items() if k != "screenshot"}
    return {
        "id": sid,
        "anchor": anchor(sid),
        "title": str(record.get("title", "")),
        "where": f"{record.get('file', '?')}:{record.get('line', '?')}",
        "kind": record.get("kind"),
        "target": record.get("target"),
        "outcome": _outcome(record),
        "known": bool(record.get("known_failure")),
        "error": record.get("error"),
        "duration_s": record.get("duration_s"),
        "timeline": _timeline(record),
        "broken": broken,
        "verdicts": [
            _verdict(v, scale) for v in verdicts if v.get("outcome") != Outcome.NOT_APPLICABLE.value
        ],
        "not_applicable": [
            str(v.get("requirement", "?"))
            for v in verdicts
            if v.get("outcome") == Outcome.NOT_APPLICABLE.value
        ],
        "detail": record.get("observation_detail"),
        "highlights": _highlights(observation) if isinstance(observation, Mapping) else [],
        "logs": _logs(observation) if isinstance(observation, Mapping) else [],
        "observation": _json(observation, OBSERVATION_CAP) if observation is not None else None,
        "screenshot": shot if isinstance(shot, str) and shot.startswith(_PNG) else None,
        "rerun": rerun_command(report, record),
    }


def _timeline(record: Mapping[str, Any]) -> dict[str, Any]:
    raw = record.get("timeline")
    if raw is None:
        error = record.get("timeline_error")
        problem = f"the timeline could not be drawn: {error}" if error else None
        return {"svg": None, "problem": problem}
    try:
        timeline = Timeline.model_validate(raw)
    except ValidationError as exc:
        return {"svg": None, "problem": f"the recorded timeline is unreadable: {exc}"}
    return {"svg": Markup(timeline_svg(timeline)), "problem": None}


def _verdict(verdict: Mapping[str, Any], time_scale: float) -> dict[str, Any]:
    state = _verdict_state(verdict)
    rid = str(verdict.get("requirement", "?"))
    return {
        "requirement": rid,
        "level": verdict.get("level"),
        "outcome": verdict.get("outcome"),
        "state": state,
        "symbol": STATES[state][0],
        "message": str(verdict.get("message", "")).removeprefix(f"{rid}: "),
        "expected": _show(verdict["expected"]) if verdict.get("expected") is not None else None,
        "observed": _show(verdict["observed"]) if verdict.get("observed") is not None else None,
        "baseline": verdict.get("baseline"),
        "at": (
            f"at {at / time_scale:.1f} s scenario time ({at:.3f} s real)"
            if isinstance(at := verdict.get("at"), int | float)
            else None
        ),
    }


def _highlights(observation: Mapping[str, Any]) -> list[tuple[str, str]]:
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


def _logs(observation: Mapping[str, Any]) -> list[tuple[str, str]]:
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


def _show(value: Any) -> str:
    return value if isinstance(value, str) else _json(value, OBSERVATION_CAP)


def _json(value: Any, cap: int) -> str:
    text = json.dumps(value, indent=1, ensure_ascii=False, sort_keys=False, default=str)
    if len(text) > cap:
        text = text[:cap] + f"\n... ({len(text) - cap} more characters in results.json)"
    return text
