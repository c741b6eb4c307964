"""Push for the independent REST client: a webhook of its own on 127.0.0.1, registered in
SendMessage's configuration (A2A 1.0 §3.2.2, §4.3, §6.6), that authenticates every delivery
before reading it (§13.2), applies each once, ignores what comes after the call is over, and
falls back to GetTask when the deliveries go quiet for the idle limit.

The secret goes out twice, as the task's ``token`` and as ``authentication`` (Bearer): a sender
may echo either (the token header ``X-A2A-Notification-Token``, or ``Authorization``). A
delivery is authentic when it carries at least one of them and each one it carries matches.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

from aiohttp import web

from harness.tests.independent.rest_wire import WireError, parse_frame

if TYPE_CHECKING:
    from harness.tests.independent.rest_push_client import Driver

TOKEN_HEADER = "X-A2A-Notification-Token"


class Inbox:
    """The webhook: an aiohttp server on 127.0.0.1 with one secret path. The handler only
    authenticates and queues; the call applies deliveries in its own task."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.secret = secrets.token_urlsafe(24)
        self.path = f"/a2a-push/{secrets.token_hex(8)}"
        self.deliveries: asyncio.Queue[bytes] = asyncio.Queue()
        self.refused = 0
        self._log = log
        self._runner: web.AppRunner | None = None
        self.url = ""

    def authentic(self, headers: object) -> bool:
        assert hasattr(headers, "get")
        presented = []
        token = headers.get(TOKEN_HEADER)
        if token is not None:
            presented.append(str(token))
        auth = headers.get("Authorization")
        if auth is not None:
            scheme, _, credentials = str(auth).partition(" ")
            presented.append(credentials.strip() if scheme.lower() == "bearer" else "")
        return bool(presented) and all(
            hmac.compare_digest(p.encode(), self.secret.encode()) for p in presented
        )

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        if not self.authentic(request.headers):
            self.refused += 1
            self._log(f"refused a delivery without our credentials ({self.refused} so far)")
            return web.Response(status=401, text="unauthenticated")
        self.deliveries.put_nowait(await request.read())
        return web.Response(status=200)

    async def open(self) -> str:
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_post(self.path, self._receive)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and hasattr(server, "sockets")
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}{self.path}"
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


class Applier:
    """Applies authentic deliveries to the call's book: ours only, each body once, nothing
    after the outcome."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.seen: set[bytes] = set()

    def apply(self, raw: bytes) -> None:
        book = self.driver.book
        book.hear()  # an authentic delivery is a sign of life, even a repeated one
        digest = hashlib.sha256(raw).digest()
        if digest in self.seen:
            self.driver.log("a delivery seen before: not applied again")
            return
        self.seen.add(digest)
        if book.settled:
            self.driver.log("a delivery after the call was over: ignored")
            return
        try:
            kind, obj = parse_frame(raw.decode("utf-8", errors="replace"))
        except WireError as exc:
            self.driver.log(f"an unreadable delivery: {exc}")
            return
        claimed = obj.get("id") if kind == "task" else obj.get("taskId")
        if book.task_id is not None and isinstance(claimed, str) and claimed != book.task_id:
            self.driver.log(f"a delivery for task {claimed!r}, not ours: ignored")
            return
        book.take(kind, obj)


async def follow_by_push(driver: Driver, left: Callable[[], float]) -> None:
    """Send once with the webhook registered; then deliveries, or GetTask on silence."""
    book, turn, agent = driver.book, driver.turn, driver.agent
    inbox = Inbox(driver.log)
    url = await inbox.open()
    driver.log(f"webhook at {url}")
    applier = Applier(driver)
    try:
        body = {
            "message": driver.message(),
            "configuration": {
                "acceptedOutputModes": ["text/plain", "application/json"],
                "returnImmediately": True,
                "taskPushNotificationConfig": {
                    "url": url,
                    "token": inbox.secret,
                    "authentication": {"scheme": "Bearer", "credentials": inbox.secret},
                },
            },
        }
        try:
            answer = await agent.call(
                "POST", "/message:send", body, timeout=max(1.0, min(turn.idle_s, left()))
            )
        except Exception as exc:
            # No answer: if we know no task, a resend would risk a second one.
            driver.log(f"message:send failed: {type(exc).__name__}: {exc}")
            if book.task_id is None:
                book.settle("error", f"message:send: {type(exc).__name__}: {exc}")
                return
            answer = {}
        if isinstance(answer.get("message"), dict):
            book.take("message", answer["message"])
        elif isinstance(answer.get("task"), dict):
            book.take_snapshot(answer["task"], from_get=False)
        if book.task_id is None and not book.settled:
            book.settle("error", "message:send answered neither a task nor a message")
            return
        book.hear()
        by_delivery = False
        while not book.settled:
            wait = turn.idle_s - book.silent_for()
            if wait <= 0:
                driver.log(f"no delivery for {turn.idle_s:.2f}s: reading the task")
                await driver.snapshot()
                book.hear()
                continue
            try:
                raw = await asyncio.wait_for(inbox.deliveries.get(), timeout=wait)
            except TimeoutError:
                continue
            applier.apply(raw)
            by_delivery = book.settled
        if by_delivery:
            await final_look(driver)
        while not inbox.deliveries.empty():
            applier.apply(inbox.deliveries.get_nowait())
    finally:
        await inbox.close()


async def final_look(driver: Driver) -> None:
    """Once a delivery ended the call, GetTask once (the spec's way to fetch a task's final
    state after a notification): its artifacts, when it has any, replace what deliveries
    assembled, which covers a delivery lost or reordered on the way. Without artifacts the
    deliveries' own assembly stands."""
    try:
        task = await driver.agent.call(
            "GET", f"/tasks/{driver.book.task_id}", None, timeout=max(1.0, driver.turn.idle_s)
        )
    except Exception as exc:  # the outcome stands; this was only a second look
        driver.log(f"final GetTask failed: {type(exc).__name__}: {exc}")
        return
    driver.book.refresh_artifacts(task, absent_is_gap=False)
