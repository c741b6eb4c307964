"""The real ag-ui-adk gateway (``targets/ag-ui-adk.yaml``) driven directly, for its tests and to
record the captures in ``data/ag_ui/``.

It builds the target's virtualenv through the target file's ``build`` key, starts the app with
the target file's command beside the harness's fakes (the contract's environment, as the
gateway runner gives it), POSTs one AG-UI ``RunAgentInput`` and keeps the response's bytes as
received. Reading the target file as plain YAML keeps this independent of the ``ag-ui``
profile, which the target model does not know yet.

Re-record (about two minutes, most of it the black hole's minute)::

    .venv/bin/python -m harness.tests.ag_ui_adk            # every capture
    .venv/bin/python -m harness.tests.ag_ui_adk worked_example browser_gone
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.protocol.sse import decode
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.loading import load_scenarios, parse_scenarios
from streamproof.targets.build import Build, ensure_built
from streamproof.targets.errors import TargetError
from streamproof.targets.process import TargetProcess

ROOT = Path(__file__).resolve().parents[2]
TARGET_FILE = ROOT / "targets" / "ag-ui-adk.yaml"
DATA = Path(__file__).parent / "data" / "ag_ui"
SCENARIOS = ROOT / "scenarios" / "gateway"
READY_S = 60.0
RUN_TIMEOUT_S = 120.0
"""The run bound the app is given for every capture but the black hole (the seed's 120 s)."""

BLACK_HOLE = """
id: ag-ui-adk/black-hole
title: The model sends its first chunk, then nothing for a minute
requirements: [GW-RUN-BOUND]
model:
  - chunks: ["Let me check ", {text: "the opening hours.", delay: 60s}]
request: When is the support desk open?
"""
"""The model going quiet mid-answer (the bundled corporate-proxy-black-hole makes its link
stall; the model itself stalls here), against a 5 s run bound."""
BLACK_HOLE_RUN_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Capture:
    name: str
    file: str
    """The scenario file in scenarios/gateway/ whose model script and tools are used; empty:
    :data:`BLACK_HOLE`."""
    scenario: str
    leave_after_text_deltas: int | None = None
    """Close the connection after this many TEXT_MESSAGE_CONTENT events (the browser leaves)."""


CAPTURES = (
    Capture("plain_streamed_answer", "plain_streamed_answer.yaml", "gateway/plain-streamed-answer"),
    Capture("worked_example", "worked_example.yaml", "gateway/one-tool-call-streamed"),
    Capture("text_then_tool_call", "text_with_tool_call.yaml", "gateway/text-then-tool-call"),
    Capture(
        "model_error_mid_stream", "model_error_mid_stream.yaml", "gateway/model-error-mid-stream"
    ),
    Capture("model_http_error", "model_http_error.yaml", "gateway/model-http-error"),
    Capture("no_finish_reason", "no_finish_reason.yaml", "gateway/stream-without-finish-reason"),
    Capture("max_tokens", "max_tokens.yaml", "gateway/max-tokens-error-event"),
    Capture("multi_agent_transfer", "multi_agent.yaml", "gateway/multi-agent-transfer"),
    Capture("multi_agent_several_finals", "multi_agent.yaml", "gateway/multi-agent-several-finals"),
    Capture("runaway_tool_loop", "runaway_tool_loop.yaml", "gateway/runaway-tool-loop"),
    Capture(
        "browser_gone",
        "browser_gone.yaml",
        "gateway/browser-gone-mid-stream",
        leave_after_text_deltas=2,
    ),
    Capture("black_hole", "", "ag-ui-adk/black-hole"),
)


def target_file() -> dict[str, Any]:
    data = yaml.safe_load(TARGET_FILE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def target_build() -> Build:
    """The target file's ``build`` key, its folder resolved as the target loader does."""
    build = dict(target_file()["build"])
    build["cwd"] = str((TARGET_FILE.parent / build.get("cwd", ".")).resolve())
    return Build.model_validate(build)


async def build_target() -> None:
    """Build the target's virtualenv unless it is up to date (raises TargetError)."""
    await ensure_built("ag-ui-adk", target_build())


def scenario(capture: Capture) -> GatewayScenario:
    loaded = (
        parse_scenarios(BLACK_HOLE, "black_hole")
        if not capture.file
        else load_scenarios(SCENARIOS / capture.file)
    )
    found = next(s.scenario for s in loaded if s.scenario.id == capture.scenario)
    assert isinstance(found, GatewayScenario)
    return found


@asynccontextmanager
async def running_app(model_url: str, tools_url: str, run_timeout: float) -> AsyncIterator[str]:
    """The app started with the target file's command and the contract's environment; yields
    its base URL once ag-ui-adk answers ``GET /capabilities``. Its process group is killed on
    the way out."""
    data = target_file()
    cwd = str((TARGET_FILE.parent / data["cwd"]).resolve())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("STREAMPROOF_", "GOOGLE_"))},
        "PORT": str(port),
        "STREAMPROOF_TOOL_URL": tools_url,
        "GOOGLE_GEMINI_BASE_URL": model_url,
        "GOOGLE_API_KEY": "streamproof-fake-key",
        "GOOGLE_GENAI_USE_VERTEXAI": "false",
        "STREAMPROOF_RUN_TIMEOUT": f"{run_timeout:.3f}",
    }
    process = TargetProcess("ag-ui-adk", data["command"], env, cwd=cwd)
    await process.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_S
        async with aiohttp.ClientSession() as http:
            while True:
                if process.returncode is not None:
                    await process.drain()
                    raise TargetError(f"the ag-ui-adk app exited:\n{process.output.text()}")
                try:
                    async with http.get(base + "/capabilities") as resp:
                        if resp.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                if time.monotonic() > deadline:
                    raise TargetError(
                        f"the ag-ui-adk app was not ready in {READY_S:g}s:\n{process.output.text()}"
                    )
                await asyncio.sleep(0.1)
        yield base
    finally:
        await process.close()


def run_input(thread_id: str, text: str) -> dict[str, Any]:
    """An AG-UI ``RunAgentInput`` with one new user message (fresh run and message ids)."""
    return {
        "threadId": thread_id,
        "runId": f"run-{uuid.uuid4().hex[:12]}",
        "messages": [{"id": f"msg-{uuid.uuid4().hex[:12]}", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }


@dataclass(frozen=True)
class Response:
    status: int
    content_type: str
    raw: bytes
    """The body's bytes as received."""
    end: str
    seconds: float


async def post_run(
    http: aiohttp.ClientSession,
    base: str,
    body: dict[str, Any],
    *,
    leave_after_text_deltas: int | None = None,
    timeout: float = 150.0,
) -> Response:
    """POST ``body`` with ``Accept: text/event-stream`` and read the stream to its end (or
    close it after that many text deltas)."""
    t0 = time.monotonic()
    raw = b""
    end = "clean"
    async with http.post(
        base + "/",
        json=body,
        headers={"Accept": "text/event-stream"},
        timeout=aiohttp.ClientTimeout(total=timeout),
    ) as resp:
        try:
            async for chunk in resp.content.iter_any():
                raw += chunk
                deltas = raw.count(b'"type":"TEXT_MESSAGE_CONTENT"')
                if leave_after_text_deltas is not None and deltas >= leave_after_text_deltas:
                    end = f"closed by the client after {deltas} text deltas"
                    break
        except TimeoutError:
            end = f"still open after {timeout:g}s"
        return Response(
            resp.status, resp.headers.get("Content-Type", ""), raw, end, time.monotonic() - t0
        )


async def history(http: aiohttp.ClientSession, base: str, thread_id: str) -> Any:
    async with http.get(f"{base}/history/{thread_id}") as resp:
        return await resp.json()


def events(raw: bytes) -> list[dict[str, Any]]:
    """The AG-UI events of a captured stream (its ``data:`` lines as JSON)."""
    return [json.loads(e.data) for e in decode(raw)]


async def _record_one(
    capture: Capture, base: str, model: FakeModel, tools: FakeTools
) -> dict[str, Any]:
    script = scenario(capture)
    marker = f"SP-SECRET-{uuid.uuid4().hex[:16]}"
    model.load(script.model)
    tools.load(script.tools, marker)
    thread = f"sp-{uuid.uuid4().hex[:16]}"
    async with aiohttp.ClientSession() as http:
        response = await post_run(
            http,
            base,
            run_input(thread, script.request.text),
            leave_after_text_deltas=capture.leave_after_text_deltas,
        )
        (DATA / f"{capture.name}.sse").write_bytes(response.raw)
        stored: dict[str, Any] = {}
        if capture.leave_after_text_deltas is not None:
            await asyncio.sleep(3.0)
            stored["3s_after_leaving"] = await history(http, base, thread)
        await model.wait_idle(90.0)
        await asyncio.sleep(1.0)
        stored["after_the_run"] = await history(http, base, thread)
    kept = stored if capture.leave_after_text_deltas is not None else stored["after_the_run"]
    (DATA / f"{capture.name}.history.json").write_text(json.dumps(kept, indent=1) + "\n")
    calls = model.calls
    return {
        "capture": f"{capture.name}.sse",
        "history": f"{capture.name}.history.json",
        "scenario_file": f"scenarios/gateway/{capture.file}" if capture.file else "",
        "scenario": capture.scenario,
        "request": script.request.text,
        "thread_id": thread,
        "status": response.status,
        "content_type": response.content_type,
        "end": response.end,
        "seconds": round(response.seconds, 2),
        "model_calls": len(calls),
        "model_calls_closed_early": sum(1 for c in calls if c.closed_early),
        "model_call_seconds": [
            round(c.t_end - c.t, 2) if c.t_end is not None else None for c in calls
        ],
        "tool_calls": len(tools.calls),
        "marker": marker if "{{marker}}" in json.dumps(script.tools) else "",
        "marker_in_stream": marker.encode() in response.raw,
    }


async def record(names: set[str]) -> list[dict[str, Any]]:
    """Record the captures named (all when empty) into data/ag_ui/; returns their index rows."""
    await build_target()
    DATA.mkdir(parents=True, exist_ok=True)
    model, tools = FakeModel(), FakeTools()
    model_url, tools_url = await model.start(), await tools.start()
    rows: list[dict[str, Any]] = []
    try:
        for bound, chosen in (
            (RUN_TIMEOUT_S, [c for c in CAPTURES if c.name != "black_hole"]),
            (BLACK_HOLE_RUN_TIMEOUT_S, [c for c in CAPTURES if c.name == "black_hole"]),
        ):
            chosen = [c for c in chosen if not names or c.name in names]
            if not chosen:
                continue
            async with running_app(model_url, tools_url, bound) as base:
                for capture in chosen:
                    print(f"recording {capture.name}", flush=True)
                    row = await _record_one(capture, base, model, tools)
                    rows.append({**row, "run_timeout_s": bound})
    finally:
        await model.close()
        await tools.close()
    return rows


def main(argv: list[str]) -> None:
    names = set(argv)
    unknown = names - {c.name for c in CAPTURES}
    if unknown:
        sys.exit(f"unknown capture(s) {sorted(unknown)}; known: {[c.name for c in CAPTURES]}")
    rows = asyncio.run(record(names))
    index_file = DATA / "index.json"
    kept = json.loads(index_file.read_text())["captures"] if index_file.exists() and names else []
    captures = {r["capture"]: r for r in [*kept, *rows]}
    order = [f"{c.name}.sse" for c in CAPTURES]
    index = {
        "target": "targets/ag-ui-adk.yaml",
        "versions": _versions(),
        "captures": [captures[k] for k in order if k in captures],
    }
    index_file.write_text(json.dumps(index, indent=1) + "\n")


def _versions() -> dict[str, str]:
    """The pinned versions the captures were made with (targets/ag-ui-adk/requirements.txt)."""
    pins = (ROOT / "targets" / "ag-ui-adk" / "requirements.txt").read_text().splitlines()
    wanted = ("ag-ui-adk", "ag-ui-protocol", "google-adk", "google-genai", "sse-starlette")
    found = dict(line.split("==", 1) for line in pins if "==" in line)
    return {name: found[name] for name in wanted if name in found}


if __name__ == "__main__":
    main(sys.argv[1:])
