"""The reference gateway as a process, for the tests that start it: the fake model's scripts, a
strict reader of the seed's SSE frames (exactly id / event / data), and a client of a running
``python -m streamproof.suites.gateway.reference.server`` (a real google-adk Runner on ADK's SQLite
session store)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import pytest

from streamproof.fakes.model import FakeModel
from streamproof.fakes.tools import FakeTools
from streamproof.protocol.gemini import ModelTurn
from streamproof.targets.warm.pool import WarmChild, start_warm


def skip_without_adk() -> None:
    """Skip the calling test module where google-adk is missing (the gateway process runs a
    google-adk Runner), or fail there under ``STREAMPROOF_REQUIRE_ALL=1``."""
    try:
        import google.adk  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the reference needs google-adk
        if os.environ.get("STREAMPROOF_REQUIRE_ALL") == "1":
            raise
        pytest.skip(f"google-adk is not installed: {exc}", allow_module_level=True)


# --- model scripts ---------------------------------------------------------------------------


REPO = Path(__file__).resolve().parents[5]


ALICE = {"Authorization": "Bearer alice-token"}


BOB = {"Authorization": "Bearer bob-token"}


MARKER = "sp-marker-7f3a"


QUESTION = "Where is order 1042?"


ANSWER_CHUNKS = ("Order 1042 shipped ", "on 30 September and ", "is due Monday.")


START_TIMEOUT_S = 30.0


MAX_LLM_CALLS = 20


def turns(*specs: Mapping[str, Any]) -> list[ModelTurn]:
    return [ModelTurn.model_validate(dict(spec)) for spec in specs]


CALL_1042 = {"function_call": {"name": "lookupOrder", "args": {"orderId": "1042"}}}


WORKED_EXAMPLE = turns({"chunks": [CALL_1042]}, {"chunks": list(ANSWER_CHUNKS)})


TEXT_THEN_CALL = turns({"chunks": ["Let me check.", CALL_1042]}, {"chunks": ["Shipped."]})


MAX_TOKENS = turns({"chunks": ["Order 1042 ", "shipped on"], "finish_reason": "MAX_TOKENS"})


MID_STREAM_ERROR = turns({"chunks": ["Order 1042 ", {"error": {"code": 503}}]})


HTTP_ERROR = turns({"http_error": {"code": 500, "status": "INTERNAL"}})


RUNAWAY = turns({"chunks": [CALL_1042], "times": "forever"})


SLOW = turns({"chunks": [f"chunk {i} " for i in range(40)], "chunk_delay": 0.25})


TOOL_PAYLOADS = {"lookupOrder": {"status": "shipped", "eta": "Monday", "secret": "{{marker}}"}}


TO_BILLING = {"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "billing"}}}


ASK_COURIER = {"function_call": {"name": "courier", "args": {"request": "Where is parcel 1042?"}}}


HANDOVER, REFUND = "Refunds are for billing. ", ("Your refund ", "was issued yesterday.")


TRANSFER = turns({"chunks": [HANDOVER, TO_BILLING]}, {"chunks": list(REFUND)})


ASKING, PARCEL, ARRIVES = (
    "Let me ask the courier. ",
    ("Parcel 1042 ", "is out."),
    ("Due ", "today."),
)


SEVERAL_FINALS = turns(
    {"chunks": [ASKING, ASK_COURIER]}, {"chunks": list(PARCEL)}, {"chunks": list(ARRIVES)}
)


# --- SSE reading (strict: exactly the seed's id / event / data shape) ------------------------


@dataclass(frozen=True)
class Frame:
    id: str
    type: str
    data: dict[str, Any]


def parse_frames(body: str) -> list[Frame]:
    assert body == "" or body.endswith("\n\n"), f"body does not end with a blank line: {body!r}"
    frames = []
    for block in body.split("\n\n")[:-1]:
        lines = block.split("\n")
        assert len(lines) == 3, f"frame is not id/event/data: {block!r}"
        assert lines[0].startswith("id: ") and lines[1].startswith("event: "), block
        assert lines[2].startswith("data: "), block
        frames.append(Frame(lines[0][4:], lines[1][7:], json.loads(lines[2][6:])))
    return frames


def types_of(frames: list[Frame]) -> list[str]:
    return [f.type for f in frames]


@dataclass
class Chat:
    status: int
    headers: Mapping[str, str]
    frames: list[Frame]
    body: str


# --- the gateway process ---------------------------------------------------------------------


class GatewayProcess(Protocol):
    """What the tests use of a gateway process: an ordinary one or a warm start's child."""

    pid: int
    stdout: asyncio.StreamReader | None

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...


class _Warm:
    """A warm start's child as a :class:`GatewayProcess`, its stderr copied to a file as it
    comes (where an ordinary start writes it directly)."""

    def __init__(self, child: WarmChild, stderr_path: Path) -> None:
        self._child = child
        self.pid = child.pid
        self.stdout: asyncio.StreamReader | None = child.stdout
        self._copy = asyncio.create_task(_copy(child.stderr, stderr_path))

    @property
    def returncode(self) -> int | None:
        return self._child.returncode

    async def wait(self) -> int:
        code = await self._child.wait()
        await self._copy
        return code

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)


async def _copy(reader: asyncio.StreamReader, path: Path) -> None:
    with path.open("ab") as out:
        while chunk := await reader.read(65536):
            out.write(chunk)
            out.flush()


@dataclass
class Gateway:
    url: str
    proc: GatewayProcess
    stderr_path: Path

    async def chat(
        self,
        session_id: str,
        text: str = QUESTION,
        *,
        headers: Mapping[str, str] = ALICE,
        mode: str | None = None,
        limit_s: float = 20.0,
    ) -> Chat:
        url = f"{self.url}/chat/{session_id}" + (f"?mode={mode}" if mode else "")
        client_timeout = aiohttp.ClientTimeout(total=limit_s)
        async with (
            aiohttp.ClientSession(timeout=client_timeout) as http,
            http.post(url, data=text.encode(), headers={**headers}) as resp,
        ):
            body = await resp.text()
            frames = parse_frames(body) if resp.status == 200 else []
            return Chat(resp.status, dict(resp.headers), frames, body)

    async def history(self, session_id: str, headers: Mapping[str, str] = ALICE) -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{self.url}/history/{session_id}", headers={**headers}) as resp,
        ):
            return resp.status, await resp.json(content_type=None)

    async def stop(self) -> int:
        if self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                os.killpg(self.proc.pid, signal.SIGKILL)
        return await self.proc.wait()  # a warm child's stderr is then in its file, whole


async def spawn(
    args: Sequence[str], env: Mapping[str, str], stderr_path: Path, *, warm: bool = True
) -> GatewayProcess:
    """A gateway's process, its stderr appended to ``stderr_path``: forked from a zygote when
    ``warm`` and it can be, else started the ordinary way (its own process group either way)."""
    child = await start_warm(args, env, str(REPO)) if warm else None
    if isinstance(child, WarmChild):
        return _Warm(child, stderr_path)
    with stderr_path.open("ab") as err:
        return await asyncio.create_subprocess_exec(
            *args,
            cwd=REPO,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )


async def start_gateway(
    model: FakeModel,
    tools: FakeTools,
    *,
    bug: str | None = None,
    env: Mapping[str, str] | None = None,
    warm: bool = True,
) -> Gateway:
    """A reference gateway process on the fakes. ``warm``: forked from a zygote that imported
    the server module once per test worker, as ``streamproof run`` starts it (its target
    declares ``warm_start``); ``False``: started the ordinary way, for the tests of the process
    itself."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMPROOF_", "ADK_"))}
    clean.update(
        PORT="0",
        GOOGLE_GEMINI_BASE_URL=model.base_url,
        GOOGLE_API_KEY="test-key",
        STREAMPROOF_TOOL_URL=tools.base_url,
        STREAMPROOF_MAX_LLM_CALLS=str(MAX_LLM_CALLS),
        PYTHONUNBUFFERED="1",
    )
    clean.update(env or {})
    fd, stderr_name = tempfile.mkstemp(prefix="gateway-stderr-", suffix=".log")
    args = [
        sys.executable,
        "-m",
        "streamproof.suites.gateway.reference.server",
        *(["--bug", bug] if bug else []),
    ]
    os.close(fd)
    proc = await spawn(args, clean, Path(stderr_name), warm=warm)
    gateway = Gateway("", proc, Path(stderr_name))
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT_S)
    except TimeoutError:
        await gateway.stop()
        raise
    prefix = "streamproof-gateway listening on "
    text = line.decode()
    if not text.startswith(prefix) or not text.endswith("\n"):
        await gateway.stop()
        pytest.fail(f"bad listening line {text!r}; stderr: {gateway.stderr_path.read_text()}")
    gateway.url = text[len(prefix) :].strip()
    return gateway


on_module_loop = pytest.mark.asyncio(loop_scope="module")
"""The fakes and gateway processes are module-scoped, so the tests share the module's loop."""


GatewayFactory = Callable[[str | None], Awaitable[Gateway]]


_sessions = iter(range(1_000_000))


def new_session() -> str:
    return f"s-{next(_sessions)}"


def load(model: FakeModel, tools: FakeTools, script: list[ModelTurn], **kw: Any) -> None:
    model.load(script, **kw)
    tools.load(TOOL_PAYLOADS, MARKER)


async def eventually(predicate: Callable[[], bool], within_s: float = 5.0) -> bool:
    """Poll ``predicate`` until it holds (True) or ``within_s`` seconds pass (False)."""
    for _ in range(int(within_s / 0.05)):
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


def listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def history_kinds(events: list[dict[str, Any]]) -> list[str]:
    kinds = []
    for event in events:
        parts = (event.get("content") or {}).get("parts") or []
        if event.get("author") == "user" and any("text" in p for p in parts):
            kinds.append("user")
        elif any("functionCall" in p for p in parts):
            kinds.append("function_call")
        elif any("functionResponse" in p for p in parts):
            kinds.append("function_response")
        elif event.get("errorCode"):
            kinds.append("error")
        else:
            kinds.append("text")
    return kinds
