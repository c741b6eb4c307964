"""An A2A 1.0 client on the HTTP+JSON (REST) binding, written from the A2A specification and
streamproof's documented client contract alone (docs/reference/a2a-client-contract.md), not
from the reference client: plain httpx, its own SSE reader (rest_wire), its own state
(call_book).

One turn per run: read the contract's environment, find the REST interface on the card, send
one message (streamed, or with a push webhook when the turn asks for push), follow the task to
its end through drops (GetTask snapshot, then SubscribeToTask, never a second message), cancel
it at the deadline, and print one JSON result line last on stdout. Logs go to stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from harness.tests.independent.call_book import CallBook
from harness.tests.independent.rest_wire import (
    SseDecoder,
    WireError,
    describe_error,
    error_reason,
    parse_frame,
    read_json,
)

A2A_VERSION = "1.0"
JSON_TYPE = "application/json"


def log(text: str) -> None:
    print(f"[rest-client] {text}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Turn:
    """The contract's environment for this run."""

    url: str
    prompt: str
    deadline_s: float
    idle_s: float
    task_id: str | None
    context_id: str | None
    push: bool

    @classmethod
    def from_env(cls) -> Turn:
        env = os.environ

        def seconds(name: str, default: float) -> float:
            try:
                return max(0.05, float(env.get(name, default)))
            except ValueError:
                log(f"{name}={env.get(name)!r} is not a number; using {default}")
                return default

        return cls(
            url=env.get("STREAMPROOF_A2A_URL", "").rstrip("/"),
            prompt=env.get("STREAMPROOF_PROMPT", ""),
            deadline_s=seconds("STREAMPROOF_DEADLINE_S", 60.0),
            idle_s=seconds("STREAMPROOF_IDLE_S", 20.0),
            task_id=env.get("STREAMPROOF_TASK_ID") or None,
            context_id=env.get("STREAMPROOF_CONTEXT_ID") or None,
            push=env.get("STREAMPROOF_A2A_PUSH", "").lower() in ("1", "true", "yes", "on"),
        )


class StreamGone(Exception):
    """The stream ended without ending the call: closed, reset, refused or unreadable."""


class Refused(Exception):
    """The server answered with an A2A error (HTTP status and google.rpc.Status body)."""

    def __init__(self, status: int, body: object) -> None:
        super().__init__(f"HTTP {status} {describe_error(body)}")
        self.status = status
        self.reason = error_reason(body)


class Agent:
    """The remote agent on its REST interface: one httpx client, reused for the whole turn."""

    def __init__(self, http: httpx.AsyncClient, base: str) -> None:
        self.http = http
        self.base = base.rstrip("/")
        self.streaming = True
        self.push_capable = False

    @staticmethod
    def headers(stream: bool = False) -> dict[str, str]:
        out = {"A2A-Version": A2A_VERSION, "Content-Type": JSON_TYPE, "Accept": JSON_TYPE}
        if stream:
            out["Accept"] = "text/event-stream"
        return out

    async def discover(self, timeout: float) -> None:
        """Read the card; use its HTTP+JSON interface (its URL, and its tenant when set)."""
        answer = await self.http.get(
            f"{self.base}/.well-known/agent-card.json",
            headers={"Accept": JSON_TYPE, "A2A-Version": A2A_VERSION},
            timeout=timeout,
        )
        card = read_json(answer.content)
        if answer.status_code != 200 or not isinstance(card, dict):
            raise Refused(answer.status_code, card)
        caps = card.get("capabilities") if isinstance(card.get("capabilities"), dict) else {}
        assert isinstance(caps, dict)
        self.streaming = caps.get("streaming") is not False
        self.push_capable = caps.get("pushNotifications") is True
        for face in card.get("supportedInterfaces") or ():
            if not isinstance(face, dict):
                continue
            if str(face.get("protocolBinding", "")).upper() in ("HTTP+JSON", "REST"):
                url = str(face.get("url") or self.base).rstrip("/")
                tenant = face.get("tenant")
                self.base = f"{url}/{tenant}" if tenant else url
                break
        log(
            f"card {card.get('name')!r}: REST at {self.base}, streaming={self.streaming}, "
            f"push={self.push_capable}"
        )

    async def call(self, method: str, path: str, body: object, timeout: float) -> Any:
        answer = await self.http.request(
            method,
            f"{self.base}{path}",
            headers=self.headers(),
            content=None if body is None else json.dumps(body),
            timeout=timeout,
        )
        parsed = read_json(answer.content)
        if answer.status_code >= 300:
            raise Refused(answer.status_code, parsed)
        if not isinstance(parsed, dict):
            raise WireError(f"{method} {path}: a body that is not a JSON object")
        return parsed

    @asynccontextmanager
    async def stream(self, method: str, path: str, body: object) -> AsyncIterator[httpx.Response]:
        request = self.http.build_request(
            method,
            f"{self.base}{path}",
            headers=self.headers(stream=True),
            content=None if body is None else json.dumps(body),
        )
        answer = await self.http.send(request, stream=True)
        try:
            if answer.status_code >= 300:
                raw = await answer.aread()
                raise Refused(answer.status_code, read_json(raw))
            yield answer
        finally:
            await answer.aclose()


def outgoing_message(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": turn.prompt}],
    }
    if turn.task_id:
        message["taskId"] = turn.task_id
    if turn.context_id:
        message["contextId"] = turn.context_id
    return message


class Driver:
    """Follows one call to its outcome; the deadline and the cancel are ``run``'s."""

    def __init__(self, agent: Agent, turn: Turn, book: CallBook) -> None:
        self.agent = agent
        self.turn = turn
        self.book = book
        self.retry_pause = 0.1
        self.blind_resume = False

    @staticmethod
    def log(text: str) -> None:
        log(text)

    def message(self) -> dict[str, Any]:
        return outgoing_message(self.turn)

    async def pump(self, answer: httpx.Response, *, resuming: bool) -> None:
        """Read SSE events into the book until it settles or the stream ends. A resumed
        stream that does not open with a Task snapshot (the spec says it must) may have
        missed chunks since our GetTask: remember to check the task once more at the end."""
        decoder = SseDecoder()
        first = resuming
        async for chunk in answer.aiter_raw():
            self.book.hear()
            for event in decoder.feed(chunk):
                if event.event == "error":
                    raise WireError(f"an SSE error event: {event.data[:200]}")
                kind, obj = parse_frame(event.data)
                if first and kind != "task":
                    log("the resumed stream opened without a Task snapshot")
                    self.blind_resume = True
                first = False
                self.book.take(kind, obj)
                if self.book.settled:
                    return

    async def watched(self, method: str, path: str, body: object) -> None:
        """One stream under the idle watchdog; returns settled, or raises StreamGone."""
        self.book.hear()

        async def consume() -> None:
            async with self.agent.stream(method, path, body) as answer:
                await self.pump(answer, resuming=method == "GET")

        reader = asyncio.create_task(consume())
        try:
            while not reader.done():
                left = self.turn.idle_s - self.book.silent_for()
                if left <= 0:
                    raise StreamGone(f"no event for {self.turn.idle_s:.2f}s (idle limit)")
                await asyncio.wait({reader}, timeout=left)
            reader.result()
        except (httpx.HTTPError, WireError, OSError) as exc:
            raise StreamGone(f"{type(exc).__name__}: {exc}") from exc
        finally:
            if not reader.done():
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)
        if not self.book.settled:
            raise StreamGone("the stream closed before the task ended")

    async def follow(self) -> None:
        """Send once; then recover from what the server holds until the call settles."""
        body = {
            "message": outgoing_message(self.turn),
            "configuration": {"acceptedOutputModes": ["text/plain", JSON_TYPE]},
        }
        try:
            await self.watched("POST", "/message:stream", body)
            return
        except Refused as exc:
            log(f"message:stream refused: {exc}")
            if self.book.task_id is None:
                self.book.settle("error", str(exc))
                return
        except StreamGone as exc:
            log(f"message:stream lost: {exc}")
        await self.recover_until_settled()

    async def recover_until_settled(self) -> None:
        while not self.book.settled:
            if self.book.task_id is None:
                # Dropped before the first event: a resend would start a second task.
                self.book.settle("error", "the stream dropped before the task had an id")
                return
            if not await self.snapshot():
                continue
            if self.book.settled:
                return
            heard = self.book.events
            try:
                await self.watched("GET", f"/tasks/{self.book.task_id}:subscribe", None)
                await self.reconcile()
                return
            except Refused as exc:
                log(f"subscribe refused: {exc}")
                if exc.reason == "TASK_NOT_FOUND":
                    self.book.settle("error", str(exc))
                    return
            except StreamGone as exc:
                log(f"subscribe lost: {exc}")
            await self.pause(progress=self.book.events > heard)

    async def reconcile(self) -> None:
        """After a resumed stream that lacked its opening snapshot completes the task, one
        GetTask brings the chunks streamed in between (A2A-C-GAP's "a final tasks/get")."""
        if not self.blind_resume or self.book.outcome is None:
            return
        if self.book.outcome.status != "completed":
            return
        try:
            task = await self.agent.call(
                "GET", f"/tasks/{self.book.task_id}", None, timeout=max(1.0, self.turn.idle_s)
            )
        except Exception as exc:  # the result stands as it is; say what was not checked
            log(f"final GetTask failed: {type(exc).__name__}: {exc}")
            return
        self.book.refresh_artifacts(task)

    async def snapshot(self) -> bool:
        """GetTask into the book; False (after a pause) when it could not be read."""
        try:
            task = await self.agent.call(
                "GET", f"/tasks/{self.book.task_id}", None, timeout=max(1.0, self.turn.idle_s)
            )
        except Refused as exc:
            log(f"GetTask refused: {exc}")
            if exc.reason == "TASK_NOT_FOUND" or exc.status == 404:
                self.book.settle("error", str(exc))
                return False
            await self.pause(progress=False)
            return False
        except (httpx.HTTPError, WireError, OSError) as exc:
            log(f"GetTask failed: {type(exc).__name__}: {exc}")
            await self.pause(progress=False)
            return False
        self.book.hear()
        self.book.take_snapshot(task, from_get=True)
        log(f"snapshot: {self.book.state}, gap={self.book.gap}")
        return True

    async def pause(self, *, progress: bool) -> None:
        """Bounded backoff between recoveries that gained nothing (reset by progress)."""
        self.retry_pause = 0.1 if progress else min(self.retry_pause * 2, 1.0)
        await asyncio.sleep(self.retry_pause)


async def cancel_quietly(agent: Agent, book: CallBook, timeout: float) -> None:
    if book.task_id is None:
        return
    try:
        task = await agent.call("POST", f"/tasks/{book.task_id}:cancel", {}, timeout=timeout)
        log(f"cancel answered: {task.get('status', {}).get('state')}")
    except Exception as exc:  # a refusal is an answer too: the task was already ending
        log(f"cancel: {type(exc).__name__}: {exc}")


async def run(turn: Turn) -> dict[str, Any]:
    book = CallBook(turn.task_id, turn.context_id)
    started = time.monotonic()

    def left() -> float:
        return turn.deadline_s - (time.monotonic() - started)

    async with httpx.AsyncClient(trust_env=True, timeout=httpx.Timeout(None, connect=5.0)) as http:
        agent = Agent(http, turn.url)
        abandoned = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, abandoned.set)
        work = asyncio.create_task(drive(agent, turn, book, left))
        stop = asyncio.create_task(abandoned.wait())
        await asyncio.wait({work, stop}, timeout=max(0.0, left()), return_when="FIRST_COMPLETED")
        stop.cancel()
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
        elif work.exception() is not None:
            exc = work.exception()
            book.settle("error", f"{type(exc).__name__}: {exc}")
        if not book.settled:
            why = "abandoned" if abandoned.is_set() else "deadline"
            log(f"{why}: cancelling task {book.task_id}")
            await cancel_quietly(agent, book, timeout=min(3.0, max(0.5, turn.idle_s)))
            book.settle("timeout" if why == "deadline" else "error", f"the call was {why}")
    return book.result()


async def drive(agent: Agent, turn: Turn, book: CallBook, left: Any) -> None:
    try:
        await agent.discover(timeout=max(0.5, min(10.0, left())))
    except (httpx.HTTPError, Refused, OSError) as exc:
        book.settle("error", f"agent card: {type(exc).__name__}: {exc}")
        return
    driver = Driver(agent, turn, book)
    if turn.push and not agent.push_capable:
        log("the turn asks for push but the card does not offer it: streaming instead")
    if turn.push and agent.push_capable:
        from harness.tests.independent.push_follow import follow_by_push

        await follow_by_push(driver, left)
    else:
        await driver.follow()


def main() -> int:
    turn = Turn.from_env()
    if not turn.url:
        print(json.dumps({"status": "error", "message": "STREAMPROOF_A2A_URL is not set"}))
        return 0
    log(f"turn: deadline {turn.deadline_s}s, idle {turn.idle_s}s, task {turn.task_id}")
    try:
        line = asyncio.run(run(turn))
    except Exception as exc:  # the contract wants a result line, never a traceback
        line = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
    log(f"result: {line.get('status')}")
    print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
