"""A 0.3-only A2A client: the seed's streaming recipe on plain aiohttp and its own SSE parser.

``python -m harness.tests.independent.client`` reads the docs' client contract
(docs/reference/a2a-client-contract.md) from the
environment (``STREAMPROOF_A2A_URL``, ``STREAMPROOF_PROMPT``, ``STREAMPROOF_DEADLINE_S``,
``STREAMPROOF_IDLE_S``), makes one ``message/stream`` call and prints one JSON result line
last on stdout. Follow-up turns are not supported.

The recipe, to the letter: the task id comes from the first event that carries one;
artifacts are reassembled per artifact id (append extends, otherwise replace); the call ends
on a final status update, a terminal state, input-required, auth-required or a direct message.
A loud error or an idle watchdog (no event for ``STREAMPROOF_IDLE_S``) goes to ``recover()``:
without a task id the call fails (never resend); otherwise a ``tasks/get`` snapshot replaces
the buffers (or marks the result incomplete), its state may end the call, and if not the
client resubscribes. On the deadline it sends ``tasks/cancel`` and reports a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp

CARD_PATH: Final = "/.well-known/agent-card.json"
TERMINAL: Final = frozenset({"completed", "failed", "canceled", "rejected", "unknown"})
INTERRUPTED: Final = frozenset({"input-required", "auth-required"})
RESULT_STATES: Final = TERMINAL | INTERRUPTED
GET_ATTEMPTS: Final = 3
"""``retryLater``: how many times a failed snapshot is tried before the call fails."""
MAX_RECOVERIES_WITHOUT_EVENT: Final = 5
CANCEL_BOUND_S: Final = 1.0


def log(msg: str) -> None:
    print(f"[independent-client] {msg}", file=sys.stderr, flush=True)


# --- a small SSE parser ---------------------------------------------------------------------


class SseParser:
    """Bytes in, ``data`` payloads out: lines end in CRLF, LF or CR; comments are ignored."""

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[str] = []
        self._started = False

    def feed(self, chunk: bytes) -> list[str]:
        self._buf += chunk
        if not self._started and self._buf:
            if len(self._buf) < 3 and b"\xef\xbb\xbf".startswith(self._buf):
                return []
            self._buf = self._buf.removeprefix(b"\xef\xbb\xbf")
            self._started = True
        out: list[str] = []
        while True:
            cut = -1
            for i, byte in enumerate(self._buf):
                if byte in (0x0A, 0x0D):
                    cut = i
                    break
            if cut < 0:
                return out
            if self._buf[cut] == 0x0D:
                if cut + 1 >= len(self._buf):
                    return out  # a CR at the end: wait to see whether LF follows
                end = cut + 2 if self._buf[cut + 1] == 0x0A else cut + 1
            else:
                end = cut + 1
            line = self._buf[:cut].decode("utf-8", errors="replace")
            self._buf = self._buf[end:]
            self._line(line, out)

    def _line(self, line: str, out: list[str]) -> None:
        if line == "":
            if self._data:
                out.append("\n".join(self._data))
            self._data = []
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)


# --- JSON-RPC 0.3 ---------------------------------------------------------------------------


class RpcError(Exception):
    """A loud failure: an HTTP error, a JSON-RPC error, a malformed event, a broken stream."""


_ids = itertools.count(1)


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


def unwrap(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise RpcError(f"not a JSON-RPC response: {body!r:.200}")
    if body.get("error") is not None:
        raise RpcError(f"JSON-RPC error: {json.dumps(body['error'])[:300]}")
    result = body.get("result")
    if not isinstance(result, dict):
        raise RpcError(f"JSON-RPC response without an object result: {body!r:.200}")
    return result


def text_of(parts: Any) -> str:
    """The seed's ``text(parts)``: the text parts joined, everything else skipped."""
    if not isinstance(parts, list):
        return ""
    return "".join(
        p.get("text", "")
        for p in parts
        if isinstance(p, dict) and p.get("kind") == "text" and isinstance(p.get("text"), str)
    )


def endpoint_from_card(card: Any, base_url: str) -> str:
    """The card's 0.3 JSON-RPC endpoint; a card that offers only 1.0 has none."""
    if not isinstance(card, dict):
        raise RpcError("the agent card is not a JSON object")
    url = card.get("url")
    version = str(card.get("protocolVersion", ""))
    if (
        isinstance(url, str)
        and version.startswith("0.")
        and card.get("preferredTransport", "JSONRPC") in ("JSONRPC", "jsonrpc")
    ):
        return url
    for iface in card.get("additionalInterfaces") or []:
        if isinstance(iface, dict) and iface.get("transport") == "JSONRPC" and version:
            return str(iface.get("url"))
    for iface in card.get("supportedInterfaces") or []:
        if (
            isinstance(iface, dict)
            and iface.get("protocolBinding") == "JSONRPC"
            and str(iface.get("protocolVersion", "")).startswith("0.")
        ):
            return str(iface.get("url"))
    raise RpcError(f"the agent at {base_url} offers no A2A 0.3 JSON-RPC interface")


# --- the call -------------------------------------------------------------------------------


@dataclass
class StreamCall:
    """All per-call state, as the seed's ``StreamCall``."""

    http: aiohttp.ClientSession
    endpoint: str
    idle_s: float
    task_id: str | None = None
    context_id: str | None = None
    last_state: str = "submitted"
    last_message: str | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    names: dict[str, str | None] = field(default_factory=dict)
    last_chunks: set[str] = field(default_factory=set)
    incomplete: bool = False
    result: dict[str, Any] | None = None
    last_event: float = field(default_factory=time.monotonic)
    loud_error: BaseException | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    stream: asyncio.Task[None] | None = None
    events_since_recovery: int = 0

    # -- events

    def on_event(self, ev: dict[str, Any]) -> None:
        if self.result is not None:
            return
        self.last_event = time.monotonic()
        self.events_since_recovery += 1
        kind = ev.get("kind")
        if kind == "message":
            self.finish_message(ev)
        elif kind == "task":
            self.remember(ev.get("id"), ev.get("contextId"))
            self.on_state(ev.get("status"))
        elif kind == "status-update":
            self.remember(ev.get("taskId"), ev.get("contextId"))
            self.on_state(ev.get("status"))
            if ev.get("final") is True:
                self.finish()
        elif kind == "artifact-update":
            self.remember(ev.get("taskId"), ev.get("contextId"))
            self.on_artifact(ev)
        else:
            log(f"ignored an event of kind {kind!r}")

    def remember(self, task_id: Any, context_id: Any) -> None:
        if self.task_id is None and isinstance(task_id, str):
            self.task_id = task_id
        if self.context_id is None and isinstance(context_id, str):
            self.context_id = context_id

    def on_state(self, status: Any) -> None:
        if not isinstance(status, dict) or not isinstance(status.get("state"), str):
            return
        self.last_state = status["state"]
        message = status.get("message")
        if isinstance(message, dict):
            self.last_message = text_of(message.get("parts")) or self.last_message
        log(f"task {self.task_id} is {self.last_state}")
        if self.last_state in RESULT_STATES:
            self.finish()

    def on_artifact(self, ev: dict[str, Any]) -> None:
        art = ev.get("artifact")
        if not isinstance(art, dict) or not isinstance(art.get("artifactId"), str):
            raise RpcError(f"artifact-update without an artifact id: {ev!r:.200}")
        art_id: str = art["artifactId"]
        chunk = text_of(art.get("parts"))
        if ev.get("append") is True:
            self.artifacts[art_id] = self.artifacts.get(art_id, "") + chunk
        else:
            self.artifacts[art_id] = chunk
        if art.get("name") is not None or art_id not in self.names:
            self.names[art_id] = art.get("name")
        if ev.get("lastChunk") is True:
            self.last_chunks.add(art_id)
            log(f"artifact {art_id} is ready")

    # -- results

    def assembled(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        whole = self.last_state == "completed"
        for art_id, text in self.artifacts.items():
            item: dict[str, Any] = {"id": art_id, "name": self.names.get(art_id), "text": text}
            if art_id in self.last_chunks or whole:  # parsed once, after the last chunk
                with contextlib.suppress(ValueError):
                    data = json.loads(text)
                    if isinstance(data, (dict, list)):
                        item["data"] = data
            out.append(item)
        return out

    def finish(self) -> None:
        if self.result is not None:
            return  # completion is idempotent
        status = self.last_state if self.last_state in RESULT_STATES else "error"
        self.result = self.task_result(status, self.last_message)
        self.wake.set()

    def finish_message(self, msg: dict[str, Any]) -> None:
        if self.result is not None:
            return
        context = msg.get("contextId")
        self.result = {
            "status": "message",
            "taskId": self.task_id,
            "contextId": context if isinstance(context, str) else self.context_id,
            "artifacts": [],
            "message": text_of(msg.get("parts")),
            "incomplete": False,
        }
        self.wake.set()

    def task_result(self, status: str, message: str | None) -> dict[str, Any]:
        return {
            "status": status,
            "taskId": self.task_id,
            "contextId": self.context_id,
            "artifacts": self.assembled(),
            "message": message,
            "incomplete": self.incomplete,
        }

    def fail(self, message: str) -> None:
        if self.result is None:
            self.result = self.task_result("error", message)
            self.wake.set()

    # -- streams

    def open_stream(self, method: str, params: dict[str, Any]) -> None:
        self.close_stream()
        self.loud_error = None
        self.last_event = time.monotonic()
        self.stream = asyncio.create_task(self._consume(method, params))

    def close_stream(self) -> None:
        if self.stream is not None and not self.stream.done():
            self.stream.cancel()
        self.stream = None

    async def _consume(self, method: str, params: dict[str, Any]) -> None:
        try:
            async for ev in self._events(method, params):
                self.on_event(ev)
                if self.result is not None:
                    return
            log(f"{method}: the stream ended without finishing the call (quiet)")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a loud drop: hand it to recover()
            log(f"{method}: loud failure: {type(exc).__name__}: {exc}")
            self.loud_error = exc
            self.wake.set()

    async def _events(self, method: str, params: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        async with self.http.post(
            self.endpoint, data=json.dumps(rpc(method, params)), headers=headers
        ) as resp:
            if resp.status != 200:
                body = await resp.text()
                raise RpcError(f"{method}: HTTP {resp.status}: {body[:200]}")
            if "text/event-stream" not in resp.headers.get("Content-Type", ""):
                yield unwrap(json.loads(await resp.read()))  # a plain JSON answer
                return
            parser = SseParser()
            async for chunk in resp.content.iter_any():
                for data in parser.feed(chunk):
                    try:
                        body = json.loads(data)
                    except ValueError as exc:
                        raise RpcError(f"malformed event: {data[:200]!r}") from exc
                    yield unwrap(body)

    async def call(self, method: str, params: dict[str, Any], bound: float) -> dict[str, Any]:
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        async with asyncio.timeout(bound):
            async with self.http.post(
                self.endpoint, data=json.dumps(rpc(method, params)), headers=headers
            ) as resp:
                raw = await resp.read()
            if resp.status != 200:
                raise RpcError(f"{method}: HTTP {resp.status}: {raw[:200]!r}")
            try:
                return unwrap(json.loads(raw))
            except ValueError as exc:
                raise RpcError(f"{method}: malformed JSON answer: {raw[:200]!r}") from exc

    # -- recovery

    async def recover(self) -> None:
        """The seed's ``recover()``: snapshot first, then resubscribe unless finished."""
        self.close_stream()
        if self.task_id is None:
            self.fail("the stream dropped before the first event (no task id); not resending")
            return
        snap: dict[str, Any] | None = None
        for attempt in range(GET_ATTEMPTS):
            try:
                snap = await self.call("tasks/get", {"id": self.task_id}, max(self.idle_s, 1.0))
                break
            except (RpcError, aiohttp.ClientError, TimeoutError, ValueError) as exc:
                log(f"tasks/get failed (attempt {attempt + 1}): {type(exc).__name__}: {exc}")
                if attempt + 1 < GET_ATTEMPTS:
                    await asyncio.sleep(0.25 * 2**attempt)  # retryLater: bounded backoff
        if snap is None:
            self.fail(f"recovery failed: tasks/get for task {self.task_id} kept failing")
            return
        arts = snap.get("artifacts")
        if isinstance(arts, list) and arts:  # the snapshot is authoritative after a gap
            self.artifacts.clear()
            for art in arts:
                if isinstance(art, dict) and isinstance(art.get("artifactId"), str):
                    self.artifacts[art["artifactId"]] = text_of(art.get("parts"))
                    self.names[art["artifactId"]] = art.get("name")
        elif self.artifacts:
            self.incomplete = True  # gap chunks are not replayed
        self.on_state(snap.get("status"))  # may already be final
        if self.result is None:
            self.open_stream("tasks/resubscribe", {"id": self.task_id})

    async def cancel(self) -> None:
        if self.task_id is None:
            return
        try:
            task = await self.call("tasks/cancel", {"id": self.task_id}, CANCEL_BOUND_S)
            state = (task.get("status") or {}).get("state")
            log(f"tasks/cancel: the task reached {state}")
        except (RpcError, aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log(f"tasks/cancel refused or failed: {type(exc).__name__}: {exc}")

    # -- the loop

    async def run(self, prompt: str, deadline: float) -> dict[str, Any]:
        message = {
            "kind": "message",
            "role": "user",
            "messageId": str(uuid.uuid4()),
            "parts": [{"kind": "text", "text": prompt}],
        }
        params = {
            "message": message,
            "configuration": {"acceptedOutputModes": ["text/plain", "application/json"]},
        }
        self.open_stream("message/stream", params)
        recoveries = 0
        recoveries_started = False
        tick = max(0.05, min(self.idle_s / 10, 1.0))
        while self.result is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), min(tick, remaining))
            if self.result is not None:
                break
            quiet = time.monotonic() - self.last_event > self.idle_s
            if self.loud_error is None and not quiet:
                continue
            if self.task_id is not None and recoveries_started and not self.events_since_recovery:
                recoveries += 1
                if recoveries > MAX_RECOVERIES_WITHOUT_EVENT:
                    self.fail("recovery keeps failing without any event; giving up")
                    break
                await asyncio.sleep(min(0.25 * 2 ** (recoveries - 1), 2.0))
            else:
                recoveries = 0
            recoveries_started = True
            self.events_since_recovery = 0
            log("idle watchdog fired" if self.loud_error is None else "recovering a loud drop")
            self.loud_error = None
            try:
                async with asyncio.timeout(max(deadline - time.monotonic(), 0.001)):
                    await self.recover()
            except TimeoutError:
                break
        self.close_stream()
        if self.result is not None:
            return self.result
        await self.cancel()
        return self.task_result("timeout", "the deadline passed before the task finished")


async def amain() -> dict[str, Any]:
    started = time.monotonic()
    if os.environ.get("STREAMPROOF_TASK_ID"):
        return {"status": "error", "message": "follow-up not supported"}
    base_url = os.environ["STREAMPROOF_A2A_URL"].rstrip("/")
    prompt = os.environ.get("STREAMPROOF_PROMPT", "")
    deadline = started + float(os.environ.get("STREAMPROOF_DEADLINE_S", "60"))
    idle_s = float(os.environ.get("STREAMPROOF_IDLE_S", "20"))
    timeout = aiohttp.ClientTimeout(total=None, connect=max(idle_s, 1.0))
    async with aiohttp.ClientSession(timeout=timeout) as http:
        try:
            async with asyncio.timeout(max(deadline - time.monotonic(), 0.001)):
                async with http.get(base_url + CARD_PATH) as resp:
                    resp.raise_for_status()
                    card = await resp.json(content_type=None)
            endpoint = endpoint_from_card(card, base_url)
        except (RpcError, aiohttp.ClientError, TimeoutError, ValueError) as exc:
            return {"status": "error", "message": f"agent card: {type(exc).__name__}: {exc}"}
        log(f"agent {card.get('name')!r} streaming={card.get('capabilities', {}).get('streaming')}")
        call = StreamCall(http=http, endpoint=endpoint, idle_s=idle_s)
        return await call.run(prompt, deadline)


def main() -> None:
    try:
        result = asyncio.run(amain())
    except Exception as exc:  # a result line even on a bug
        result = {"status": "error", "message": f"client crashed: {type(exc).__name__}: {exc}"}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
