"""The reference client's push mode: a webhook of its own instead of a stream
(docs/reference/a2a-client-contract.md#push-notifications).

With ``STREAMPROOF_A2A_PUSH=1`` the call listens on 127.0.0.1 (a port it picks, an aiohttp
server), sends its message with ``returnImmediately`` and its webhook (URL and a fresh token) in
the configuration, and takes the task's updates from the deliveries. The design treats
deliveries as news and the server's record as truth:

* the receiver checks the token (``X-A2A-Notification-Token``, compared in constant time)
  before it reads the body: anything else is answered 401 and never parsed;
* each delivery is applied once: one that comes again (the same body) is acknowledged and
  dropped; one for another task is refused (404);
* the call is over at a terminal or interrupted state; anything after is acknowledged and
  ignored;
* silence past the idle limit is a quiet drop: the watchdog reads the task (``GetTask``), takes
  its state and, when it has them, its artifacts, and keeps doing so while the task runs;
* when the call is over it reads the task once more and takes its artifacts from there when the
  record has them (the deliveries may have lost a chunk).

The call's state and event handling are :class:`~.call.StreamCall`'s, its cancel on deadline
:class:`~.recovery.RecoveringCall`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Final

from a2a.client import Client
from a2a.helpers import new_text_message
from a2a.types import GetTaskRequest, Role, SendMessageRequest, StreamResponse
from aiohttp import web
from google.protobuf import json_format

from streamproof.suites.a2a_client.reference.call import log
from streamproof.suites.a2a_client.reference.recovery import RecoveringCall
from streamproof.suites.a2a_client.reference.settings import Settings

__all__ = ["PushCall", "Receiver"]

TOKEN_HEADER: Final = "X-A2A-Notification-Token"
WEBHOOK_PATH: Final = "/a2a/webhook"


Deliver = Callable[[bytes, StreamResponse], int]
"""Applies one verified delivery; the HTTP status to answer it with."""


class Receiver:
    """The call's webhook: an aiohttp server on 127.0.0.1 that hands verified deliveries on
    (to ``deliver``, set once the call exists; until then they are answered 503)."""

    def __init__(self, bug: str | None) -> None:
        self.bug = bug
        self.deliver: Deliver | None = None
        self.token = secrets.token_urlsafe(24)
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> str:
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_post(WEBHOOK_PATH, self.handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._runner = runner
        port = runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}{WEBHOOK_PATH}"
        return self.url

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def handle(self, request: web.Request) -> web.Response:
        if self.bug != "accept-unauthenticated":
            given = request.headers.get(TOKEN_HEADER, "")
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                log.warning("webhook: refused a delivery without the right token")
                return web.Response(status=401, text="unauthenticated")
        body = await request.read()
        try:
            event = json_format.Parse(body, StreamResponse(), ignore_unknown_fields=True)
        except (json_format.ParseError, ValueError) as exc:
            return web.Response(status=400, text=f"not a StreamResponse: {exc}")
        deliver = self.deliver
        return web.Response(status=deliver(body, event) if deliver is not None else 503)


class PushCall(RecoveringCall):
    """One logical call whose updates come to a webhook."""

    def __init__(self, client: Client, settings: Settings, receiver_url: str) -> None:
        super().__init__(client, settings)
        self.receiver_url = receiver_url
        self.seen: set[bytes] = set()
        self.reopened = False

    def start(self) -> None:
        task_id, context_id = self.given
        message = new_text_message(
            self.settings.prompt, role=Role.ROLE_USER, task_id=task_id, context_id=context_id
        )
        self.consumer = asyncio.create_task(self._send(SendMessageRequest(message=message)))

    async def _send(self, request: SendMessageRequest) -> None:
        try:
            async for event in self.client.send_message(request):
                self.on_event(event, "message")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.fail(f"the message could not be sent: {type(exc).__name__}: {exc}")

    def on_delivery(self, body: bytes, event: StreamResponse) -> int:
        """Apply one verified delivery; the HTTP status to answer it with."""
        task_id = _task_id(event)
        if self.task_id is not None and task_id and task_id != self.task_id:
            log.warning("webhook: a delivery for task %s, not ours", task_id)
            return 404
        digest = hashlib.sha256(body).digest()
        if digest in self.seen and self.bug != "double-apply-duplicate":
            return 200  # a duplicate: received, applied already
        self.seen.add(digest)
        if self.done.done():
            if self.bug != "reopen-on-stale":
                return 200  # the call is over: nothing after it counts
            self.reopened = True
            self.done = asyncio.get_running_loop().create_future()
        self.on_event(event, "push")
        return 200

    async def watchdog(self) -> None:
        """Silence past the idle limit: read the task from the server, again and again."""
        every = max(min(self.settings.idle / 10, 1.0), 0.01)
        loop = asyncio.get_running_loop()
        while not self.done.done():
            await asyncio.sleep(every)
            quiet = loop.time() - self.last_event
            if quiet <= self.settings.idle or self.task_id is None or self.done.done():
                continue
            if self.bug == "no-fallback-when-silent":
                continue
            log.warning(
                "no delivery for %.2fs (idle limit %gs): reading the task",
                quiet,
                self.settings.idle,
            )
            await self.read_record(final=False)

    async def read_record(self, *, final: bool) -> None:
        """GetTask: the server's record. Its artifacts replace the buffers when it has them;
        while the call is open its state is the call's too."""
        if self.task_id is None:
            return
        try:
            snap = await self.client.get_task(GetTaskRequest(id=self.task_id))
        except Exception as exc:
            log.warning("reading task %s failed: %s", self.task_id, exc)
            self.last_event = asyncio.get_running_loop().time()
            return
        self.last_event = asyncio.get_running_loop().time()
        if snap.artifacts:
            self.replace_from(snap.artifacts)
        if not final and not self.done.done():
            self.on_state(snap.status)


def _task_id(event: StreamResponse) -> str:
    kind = event.WhichOneof("payload")
    if kind == "task":
        return str(event.task.id)
    if kind == "status_update":
        return str(event.status_update.task_id)
    if kind == "artifact_update":
        return str(event.artifact_update.task_id)
    return ""


MakeClient = Callable[[str, str], Awaitable[Client]]
"""Builds the a2a-sdk client that registers webhook URL and token with its sends."""


async def push_call(make_client: MakeClient, settings: Settings, started: float) -> dict[str, Any]:
    """One logical call on push: the webhook up, the client built with it, the result."""
    loop = asyncio.get_running_loop()
    receiver = Receiver(settings.bug)
    url = await receiver.start()
    try:
        client = await make_client(url, receiver.token)
        call = PushCall(client, settings, url)
        receiver.deliver = call.on_delivery
        watchdog = asyncio.create_task(call.watchdog())
        try:
            call.start()
            while True:
                remaining = settings.deadline - (loop.time() - started)
                done = call.done
                try:
                    status = await asyncio.wait_for(asyncio.shield(done), max(remaining, 0))
                except TimeoutError:
                    await call.stop_consumer()
                    await call.cancel_quietly()
                    call.incomplete = True
                    call.error = f"no result within the {settings.deadline:g}s deadline"
                    return call.result("timeout")
                if status in ("error", "message"):
                    return call.result(status)
                await call.read_record(final=True)
                if call.done is done:
                    return call.result(status)
                log.warning("a delivery after the end reopened the call")
                if watchdog.done():
                    watchdog = asyncio.create_task(call.watchdog())
        finally:
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog
            await call.stop_consumer()
            with contextlib.suppress(Exception):
                await client.close()
    finally:
        await receiver.close()
