"""What ``streamproof record`` writes: fixtures from recorded responses, redacted, and the
scenario that replays them.

Pure: the captured exchanges in, file contents out (the command does the I/O).

A captured exchange is one request the recording proxy forwarded and the response bytes it
wrote back, each write stamped with its time since the response started (the moment the
response headers went out). Every streamed response (``text/event-stream``) becomes one
fixture file in the format of ``fixtures/README.md``: the body byte for byte, each event
preceded by a ``: at <time>`` comment holding the time its first byte was written; an event
the response did not finish (no blank line after it) is left out and counted.

Redaction (documented in docs/how-to/serve-and-record.md): nothing written keeps a
secret the traffic carried.

* Query parameters named like a credential (``key``, ``api_key``, ``apikey``,
  ``access_token``, ``token``, ``signature``, ``sig``, ``password``, ``secret``...): the
  value becomes ``REDACTED``.
* Headers: ``Authorization`` and ``Proxy-Authorization`` keep their scheme (``Bearer
  REDACTED``); ``x-goog-api-key``, ``x-api-key``, ``api-key``, ``Cookie``, ``Set-Cookie``
  and any header whose name holds ``token``, ``secret``, ``password`` or ``key`` are
  ``REDACTED``.
* JSON text (the ``data:`` lines of a fixture, the prompt taken from a request body): the
  string value of a member whose name looks like a credential (``apiKey``, ``api_key``,
  ``key``, ``token``, ``accessToken``, ``secret``, ``password``, ``authorization``,
  ``cookie``, ``credential(s)``...) becomes ``"REDACTED"``; anywhere in a string, a Google
  API key (``AIza`` and 35 more characters), an OAuth access token (``ya29.``...), a
  ``Bearer <token>`` and an ``sk-``/``ghp_``-style key are replaced too. The JSON layout
  around a value is kept, so the rest of the event stays byte for byte.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import parse_qsl, quote

import yaml

from streamproof.protocol.fixture import timing_comment

__all__ = [
    "REDACTED",
    "Captured",
    "FixtureFile",
    "Kind",
    "fixture_from_chunks",
    "guess_kind",
    "plan_files",
    "redact_headers",
    "redact_target",
    "redact_text",
]

REDACTED: Final = "REDACTED"
Kind = Literal["model", "a2a"]

_SECRET_NAME: Final = re.compile(
    r"^(?:x-goog-api-key|x-api-key|api[-_]?key|apikey|key|access[-_]?token|refresh[-_]?token|"
    r"id[-_]?token|token|auth[-_]?token|client[-_]?secret|secret|password|passwd|signature|"
    r"sig|authorization|proxy-authorization|cookie|set-cookie|credentials?|session[-_]?id)$",
    re.IGNORECASE,
)
_SECRET_HEADER_PART: Final = re.compile(r"token|secret|password|key|cookie", re.IGNORECASE)
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_VALUE: Final = re.compile(
    r"AIza[0-9A-Za-z_\-]{35}"
    r"|ya29\.[0-9A-Za-z_\-.]+"
    r"|(?<=[Bb]earer )[A-Za-z0-9_\-.~+/]+=*"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
)
_JSON_MEMBER: Final = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:\s*)"((?:[^"\\]|\\.)*)"')
_LINE: Final = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)")
_DATA: Final = re.compile(rb"^data:")


def _secret_name(name: str) -> bool:
    snake = _CAMEL.sub("_", name).lower()
    return bool(_SECRET_NAME.match(name) or _SECRET_NAME.match(snake))


def redact_text(text: str) -> str:
    """``text`` (JSON or not) with credential-named JSON string members and credential-shaped
    strings replaced by ``REDACTED``; everything else as it was."""

    def member(match: re.Match[str]) -> str:
        name, sep, value = match.group(1), match.group(2), match.group(3)
        if _secret_name(name) and value:
            return f'"{name}"{sep}"{REDACTED}"'
        return f'"{name}"{sep}"{_SECRET_VALUE.sub(REDACTED, value)}"'

    return _SECRET_VALUE.sub(REDACTED, _JSON_MEMBER.sub(member, text))


def redact_target(target: str) -> str:
    """A request's path and query with credential-named query values replaced."""
    path, mark, query = target.partition("?")
    if not mark:
        return redact_text(path)
    parts = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        shown = REDACTED if _secret_name(name) else redact_text(value)
        parts.append(f"{quote(name, safe='')}={quote(shown, safe='/:,.-_*')}")
    return f"{redact_text(path)}?{'&'.join(parts)}"


def redact_headers(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers with their secrets replaced (an ``Authorization`` keeps its scheme)."""
    out: list[tuple[str, str]] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered in ("authorization", "proxy-authorization"):
            scheme, _, rest = value.partition(" ")
            out.append((name, f"{scheme} {REDACTED}" if rest else REDACTED))
        elif _secret_name(name) or _SECRET_HEADER_PART.search(lowered):
            out.append((name, REDACTED))
        else:
            out.append((name, redact_text(value)))
    return out


@dataclass(frozen=True)
class Captured:
    """One request the recording proxy forwarded, and what it wrote back."""

    number: int
    method: str
    target: str
    """Path and query as the client sent them (not yet redacted)."""
    rpc: str | None
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes
    status: int | None
    content_type: str
    chunks: tuple[tuple[float, bytes], ...]
    """Each write downstream: (seconds since the response started, the bytes, inflated when
    the body was gzip or deflate)."""
    response_headers: tuple[tuple[str, str], ...] = ()
    encoding: str = ""
    """A ``Content-Encoding`` the recorder could not undo (``br``...): no fixture then."""

    @property
    def streamed(self) -> bool:
        return self.status == 200 and self.content_type == "text/event-stream"

    @property
    def gemini_stream(self) -> bool:
        return self.streamed and "streamgeneratecontent" in self.target.lower()

    def request_json(self) -> Any:
        try:
            return json.loads(self.request_body)
        except ValueError:
            return None


def fixture_from_chunks(
    chunks: Sequence[tuple[float, bytes]], *, first_at_zero: bool = False
) -> tuple[bytes, int, int]:
    """The fixture bytes of a recorded body: (the file, events written, bytes left out).

    Each event gets a ``: at`` line (in its own line end) with the time of the write that
    carried its first byte, to the millisecond; ``data:`` lines are redacted
    (:func:`redact_text`). Bytes after the last blank line (an unfinished event) are left out.
    ``first_at_zero`` stamps the first event ``0s`` whatever its time (an A2A stream's opening
    Task snapshot: the fake creates the task submitted when the call arrives)."""
    body = b"".join(data for _, data in chunks)
    starts: list[tuple[int, float]] = []
    offset = 0
    for t, data in chunks:
        if data:
            starts.append((offset, t))
            offset += len(data)

    def time_at(position: int) -> float:
        found = 0.0
        for start, t in starts:
            if start > position:
                break
            found = t
        return found

    out: list[bytes] = []
    block: list[bytes] = []
    block_start = 0
    position = 0
    events = 0
    last = 0.0
    consumed = 0
    for line in _LINE.findall(body):
        if line.rstrip(b"\r\n"):
            if not block:
                block_start = position
            block.append(line)
        elif block:
            end = line
            at = 0.0 if first_at_zero and not events else round(time_at(block_start), 3)
            at = max(last, at)
            last = at
            stamp = timing_comment(at, end.decode("ascii"))
            out.append(stamp + b"".join(_redact_line(x) for x in block) + end)
            events += 1
            block = []
            consumed = position + len(line)
        else:
            consumed = position + len(line)  # a stray blank line: not part of any event
        position += len(line)
    return b"".join(out), events, len(body) - consumed


def _redact_line(line: bytes) -> bytes:
    if not _DATA.match(line):
        return line
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return line
    return redact_text(text).encode("utf-8")


def guess_kind(captured: Sequence[Captured]) -> Kind:
    """``model`` when the traffic held Gemini calls, else ``a2a``."""
    return "model" if any("generatecontent" in c.target.lower() for c in captured) else "a2a"


@dataclass(frozen=True)
class FixtureFile:
    """A fixture to write: its path relative to the scenario's folder, its bytes."""

    relative: str
    data: bytes
    events: int
    left_out: int
    source: Captured


def plan_files(
    captured: Sequence[Captured],
    *,
    kind: Kind,
    name: str,
    upstream: str,
    written_at: str,
) -> tuple[str, list[FixtureFile], list[str]]:
    """The scenario's text, the fixtures it names, and notes for the terminal."""
    notes: list[str] = []
    fixtures: list[FixtureFile] = []
    for c in captured:
        if not c.streamed:
            continue
        if kind == "model" and not c.gemini_stream:
            continue
        if c.encoding:
            notes.append(
                f"req {c.number}: the body is {c.encoding}-encoded and cannot be decoded; no "
                "fixture (ask the upstream for gzip or none: Accept-Encoding)"
            )
            continue
        data, events, left_out = fixture_from_chunks(c.chunks, first_at_zero=kind == "a2a")
        if not events:
            notes.append(f"req {c.number}: the stream held no complete event; no fixture")
            continue
        if left_out:
            notes.append(f"req {c.number}: {left_out} bytes after the last complete event left out")
        label = "model-turn" if kind == "model" else _slug(c.rpc or "stream")
        relative = f"{name}/{len(fixtures) + 1:02d}-{label}.sse"
        fixtures.append(FixtureFile(relative, data, events, left_out, c))
    header = [
        f"# Written by `streamproof record` at {written_at} from the traffic it forwarded to",
        f"# {redact_target(upstream)}. Each fixture is one streamed response as the wire",
        "# carried it, with `: at` times from the response's start; secrets are redacted",
        "# (docs/how-to/serve-and-record.md). Check the expectations, then:",
        "#   streamproof validate THIS_FILE",
    ]
    if kind == "model":
        header.append("#   streamproof run THIS_FILE --target your-gateway.yaml")
        body = _gateway_body(captured, fixtures, name)
    else:
        header.append("#   streamproof run THIS_FILE --target your-client.yaml")
        body = _a2a_body(captured, fixtures, name)
    seen = ["", "# What was forwarded (method target: status, content type, events recorded):"]
    by_request = {f.source.number: f for f in fixtures}
    for c in captured:
        fixture = by_request.get(c.number)
        what = f" -> {fixture.relative} ({fixture.events} events)" if fixture else ""
        rpc = f" rpc={c.rpc}" if c.rpc else ""
        seen.append(
            f"#   req {c.number}: {c.method} {redact_target(c.target)}{rpc}: "
            f"{c.status if c.status is not None else 'no response'}"
            f"{', ' + c.content_type if c.content_type else ''}{what}"
        )
        headers = ", ".join(f"{k}: {v}" for k, v in redact_headers(c.request_headers))
        if headers:
            seen.append(f"#     request headers: {headers}")
        answered = ", ".join(f"{k}: {v}" for k, v in redact_headers(c.response_headers))
        if answered:
            seen.append(f"#     response headers: {answered}")
    if not captured:
        seen.append("#   (no requests)")
    return "\n".join([*header, *body, *seen]) + "\n", fixtures, notes


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "stream"


def _flow(item: Any) -> str:
    text = str(yaml.safe_dump([item], default_flow_style=True, sort_keys=False, width=math.inf))
    return text.strip()[1:-1]


def _events_json(data: bytes) -> list[Any]:
    found: list[Any] = []
    for line in _LINE.findall(data):
        if line.startswith(b"data:"):
            try:
                found.append(json.loads(line[5:].strip()))
            except ValueError:
                continue
    return found


# --- the A2A client scenario ---------------------------------------------------------------


def _a2a_prompt(c: Captured) -> str | None:
    body = c.request_json()
    if not isinstance(body, dict):
        return None
    params = body.get("params", body)  # JSON-RPC params, or a REST request's whole body
    message = params.get("message") if isinstance(params, dict) else None
    parts = message.get("parts") if isinstance(message, dict) else None
    texts = [
        p["text"]
        for p in parts or []
        if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]
    ]
    return redact_text("".join(texts)) if texts else None


def _state(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    state = raw.lower().removeprefix("task_state_").replace("_", "-")
    return state or None


def _a2a_outcome(data: bytes) -> tuple[str | None, dict[str, str], float]:
    """The last task state, artifact id -> complete when its last chunk said so, the longest
    gap between events (seconds)."""
    state: str | None = None
    artifacts: dict[str, str] = {}
    for event in _events_json(data):
        # a JSON-RPC response's result, or a REST stream's bare event
        result = event.get("result", event) if isinstance(event, dict) else None
        if not isinstance(result, dict):
            continue
        if len(result) == 1 and isinstance(next(iter(result.values())), dict):
            result = next(iter(result.values()))  # 1.0: {"statusUpdate": {...}}
        status = result.get("status")
        if isinstance(status, dict) and _state(status.get("state")):
            state = _state(status.get("state"))
        artifact = result.get("artifact")
        if isinstance(artifact, dict) and isinstance(artifact.get("artifactId"), str):
            last = bool(result.get("lastChunk") or result.get("last_chunk"))
            artifacts[artifact["artifactId"]] = "complete" if last else "open"
    done = {k: v for k, v in artifacts.items() if v == "complete"}
    times = [
        float(m.group(1)) * (0.001 if m.group(2) == b"ms" else 1.0)
        for m in re.finditer(rb"^: at (\d+(?:\.\d+)?)(ms|s)\r?$", data, re.MULTILINE)
    ]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return state, done, max(gaps, default=0.0)


def _a2a_body(captured: Sequence[Captured], fixtures: list[FixtureFile], name: str) -> list[str]:
    ledger = [c.rpc for c in captured if c.rpc is not None]
    lines = [
        f"id: a2a_client/{name}",
        f"title: {_flow(f'Recorded by streamproof record: {name}')}",
        "kind: a2a-client",
        "requirements: [A2A-C-REASSEMBLY, A2A-C-ARTIFACTS-COMPLETE]",
    ]
    if not fixtures:
        return [
            *lines,
            "# No streamed A2A response was recorded: there is nothing to replay yet.",
            "# task: {fixture: <a recorded .sse>}",
        ]
    first = fixtures[0]
    wire = "1.0" if (first.source.rpc or "") == "SendStreamingMessage" else "0.3"
    state, artifacts, gap = _a2a_outcome(first.data)
    at_end = max(
        (t for t in (float(x) for x in re.findall(rb"^: at (\d+(?:\.\d+)?)s", first.data, re.M))),
        default=0.0,
    )
    idle = max(10.0, math.ceil(gap * 3))
    deadline = max(30.0, math.ceil(at_end * 3 + idle))
    prompt = _a2a_prompt(first.source) or "the recorded prompt"
    client = {"deadline": f"{deadline:g}s", "idle": f"{idle:g}s", "prompt": prompt}
    lines.append(f"client: {_flow(client)}")
    if wire == "1.0":
        lines.append('server: {wire: "1.0"}')
    lines.append(f"task: {{fixture: {first.relative}}}")
    for extra in fixtures[1:]:
        lines.append(f"# also recorded: {extra.relative} (a later stream; e.g. follow_up:)")
    lines.append("expect:")
    result: dict[str, Any] = {}
    if state is not None:
        result["status"] = state
    if artifacts:
        result["artifacts"] = artifacts
    if result:
        lines.append(f"  result: {_flow(result)}")
    streams = [c.rpc for c in captured if c.rpc in ("message/stream", "SendStreamingMessage")]
    lines.append(f"  ledger: {_flow([first.source.rpc or 'message/stream'])}")
    lines.append("  tasks_created: 1")
    if ledger != streams[:1]:
        lines.append(f"  # the recorded client called: {_flow(ledger)}")
    return lines


# --- the gateway scenario ------------------------------------------------------------------


def _gemini_contents(c: Captured) -> list[Any]:
    body = c.request_json()
    contents = body.get("contents") if isinstance(body, dict) else None
    return contents if isinstance(contents, list) else []


def _user_text(contents: list[Any]) -> str | None:
    for content in contents:
        if not isinstance(content, dict) or content.get("role") != "user":
            continue
        for part in content.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                return redact_text(part["text"])
    return None


def _tool_results(captured: Sequence[Captured]) -> dict[str, Any]:
    """The function responses the gateway sent back to the model, by tool name."""
    tools: dict[str, Any] = {}
    for c in captured:
        for content in _gemini_contents(c):
            for part in content.get("parts") or [] if isinstance(content, dict) else []:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict) and isinstance(response.get("name"), str):
                    value = response.get("response")
                    redacted = json.loads(redact_text(json.dumps(value)))
                    tools.setdefault(response["name"], redacted)
    return tools


def _gateway_body(
    captured: Sequence[Captured], fixtures: list[FixtureFile], name: str
) -> list[str]:
    lines = [
        f"id: gateway/{name}",
        f"title: {_flow(f'Recorded by streamproof record: {name}')}",
        "kind: gateway",
        "requirements: [GW-FRAME-SEQUENCE, GW-ANSWER-AS-MESSAGE]",
    ]
    calls = [c for c in captured if "generatecontent" in c.target.lower()]
    prompt = next((t for t in (_user_text(_gemini_contents(c)) for c in calls) if t), None)
    lines.append(f"request: {_flow(prompt or 'the recorded prompt')}")
    if not fixtures:
        return [
            *lines,
            "# No streamed Gemini response was recorded: there is nothing to replay yet.",
            "# model: [{fixture: <a recorded .sse>}]",
        ]
    lines.append("model:")
    lines += [f"  - fixture: {f.relative}" for f in fixtures]
    tools = _tool_results(captured)
    if tools:
        lines.append("tools:")
        lines += [f"  {_flow(tool)}: {_flow(result)}" for tool, result in tools.items()]
    lines.append("expect:")
    lines.append(f"  model_calls: {len(fixtures)}")
    if tools:
        lines.append(f"  tool_calls: {_flow(dict.fromkeys(tools, 1))}")
    return lines
