"""What ``streamproof proxy`` is told, checked before anything listens: where it listens, what
it forwards to, the plan (``--plan FILE`` or ``--fault`` words) and whether the chosen engine
can carry the plan out. Every problem is a :class:`BadInput` line naming the option, the file
and line, or the ``--fault`` text, so the command can print them all and exit 2.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yarl

from streamproof.core.durations import parse_duration
from streamproof.faults.engines.catalog import engine_support
from streamproof.faults.plan import Fault, PlanError, parse_plan
from streamproof.faults.shorthand import ShorthandError, parse_fault, shorthand_data
from streamproof.suites.loading import yaml_documents

__all__ = [
    "LOOPBACK",
    "BadInput",
    "Listen",
    "PlannedFault",
    "engine_verdict",
    "faults_from_texts",
    "load_plan_file",
    "parse_listen",
    "parse_period",
    "parse_upstream",
]

LOOPBACK: Final = ("127.0.0.1", "::1", "localhost")


class BadInput(ValueError):
    """What the command was told cannot be used: one line per problem."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Listen:
    host: str
    port: int


_LISTEN = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]*))(?::(?P<port>[^:]*))?$")


def parse_hop(upstream: str, listen: str, problems: list[str]) -> tuple[str | None, Listen | None]:
    """A proxy's ``--upstream`` and ``--listen``, each ``None`` when bad: the reasons are added
    to ``problems`` (``streamproof proxy`` and ``record`` check every input at once)."""
    target = address = None
    try:
        target = parse_upstream(upstream)
    except BadInput as exc:
        problems += exc.problems
    try:
        address = parse_listen(listen)
    except BadInput as exc:
        problems += exc.problems
    return target, address


def parse_period(flag: str, text: str | None, problems: list[str]) -> float | None:
    """``--flag TEXT`` as a duration longer than zero (``30s``, ``2m``); ``None`` when not
    given, or when it is bad: the reason is added to ``problems``."""
    if text is None:
        return None
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        problems.append(f"{flag} {text}: {exc}")
        return None
    if seconds <= 0:
        problems.append(f"{flag} {text}: must be longer than 0s")
        return None
    return seconds


def parse_listen(text: str) -> Listen:
    """``127.0.0.1:PORT``, ``[::1]:PORT``, ``localhost:PORT``, a host alone (port 0) or a port
    alone (on 127.0.0.1); loopback only."""
    raw = text.strip()
    if raw.isdigit():
        host, port_text = "127.0.0.1", raw
    else:
        match = _LISTEN.match(raw)
        if match is None:
            raise BadInput(
                f"--listen {text}: write HOST:PORT, e.g. 127.0.0.1:8099 or [::1]:8099 "
                "(port 0: any free port)"
            )
        host = match["v6"] or match["host"] or "127.0.0.1"
        port_text = match["port"] if match["port"] is not None else "0"
    if host not in LOOPBACK:
        raise BadInput(
            f"--listen {text}: streamproof proxy listens on loopback only "
            f"({', '.join(LOOPBACK)}): it has no authentication and does to the traffic whatever "
            "its plan says, so nothing outside this machine may reach it"
        )
    if not port_text.isdigit() or int(port_text) > 65535:
        raise BadInput(
            f"--listen {text}: the port must be a number from 0 (any free port) to 65535"
        )
    return Listen(host, int(port_text))


def parse_upstream(text: str) -> str:
    """The upstream base URL: http(s) with a host (requests keep their path and query, appended
    to it)."""
    try:
        url = yarl.URL(text.strip())
    except ValueError:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise BadInput(
            f"--upstream {text}: must be an http(s) URL, e.g. http://127.0.0.1:9000 or "
            "https://staging.example.com/a2a"
        )
    if url.query_string or url.fragment:
        raise BadInput(
            f"--upstream {text}: a base URL has no query or fragment: each request's own path "
            "and query are appended to it"
        )
    return str(url).rstrip("/")


@dataclass(frozen=True)
class PlannedFault:
    """One fault of the plan with where it came from, for messages and the scenario file."""

    label: str
    """``--fault 'after 40s: stall'`` or ``plan.yaml:3 [0]``."""
    data: Any
    """As written: the YAML-shaped item."""
    fault: Fault


def faults_from_texts(texts: Sequence[str]) -> list[PlannedFault]:
    """The ``--fault`` texts in plan order; every text's problem at once."""
    planned: list[PlannedFault] = []
    problems: list[str] = []
    for text in texts:
        try:
            planned.append(
                PlannedFault(f"--fault {text!r}", shorthand_data(text), parse_fault(text))
            )
        except ShorthandError as exc:
            problems.append(str(exc))
    if problems:
        raise BadInput(*problems)
    return planned


_FIELD_STEP = re.compile(r"\[(\d+)\]|([A-Za-z_][A-Za-z0-9_]*)")


def _path_of(field: str) -> tuple[Any, ...]:
    """``[0].when.after_event`` -> ``(0, "when", "after_event")``."""
    return tuple(int(m[1]) if m[1] is not None else m[2] for m in _FIELD_STEP.finditer(field))


def load_plan_file(path: str) -> list[PlannedFault]:
    """A YAML file holding one list of faults, what a scenario has under ``links.<name>``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--plan {path}: cannot read it: {exc}") from None
    documents, problems = yaml_documents(text, path)
    if problems:
        raise BadInput(*(str(p) for p in problems))
    if len(documents) > 1:
        raise BadInput(f"{path}: holds {len(documents)} YAML documents; a plan file holds one list")
    if not documents or documents[0].data is None:
        return []
    data, lines = documents[0].data, documents[0].lines
    if not isinstance(data, list):
        hint = (
            f" (a scenario? copy its links.{next(iter(data['links']), 'a2a')} list into a file "
            "of its own)"
            if isinstance(data, dict) and isinstance(data.get("links"), dict) and data["links"]
            else ""
        )
        raise BadInput(
            f"{path}:{documents[0].line}: a plan file holds a list of faults, what a scenario "
            f"has under links.<name>, e.g. '- {{when: {{after: 40s}}, do: stall}}'{hint}"
        )
    try:
        faults = parse_plan(data)
    except PlanError as exc:
        steps = _path_of(exc.field)
        line = None
        while line is None:
            line = lines.get(steps)
            if not steps:
                break
            steps = steps[:-1]
        where = f"{path}:{line}" if line is not None else path
        raise BadInput(f"{where}: {exc}") from None
    return [
        PlannedFault(f"{path}:{lines.get((i,), documents[0].line)} [{i}]", item, fault)
        for i, (item, fault) in enumerate(zip(data, faults, strict=True))
    ]


def engine_verdict(engine: str, planned: Sequence[PlannedFault]) -> tuple[list[str], list[str]]:
    """What engine ``engine`` rejects in the plan, and the approximations it makes, one line
    each naming the fault."""
    support = engine_support(engine)
    rejected: list[str] = []
    approximated: list[str] = []
    for entry in planned:
        for item, verdict in support.judge(entry.fault):
            what = f"{entry.label}: engine {engine}"
            if verdict.fit == "rejected":
                rejected.append(f"{what} cannot do {item}: {verdict.note}")
            elif verdict.fit == "approximate":
                approximated.append(f"{what} approximates {item}: {verdict.note}")
    return rejected, approximated
