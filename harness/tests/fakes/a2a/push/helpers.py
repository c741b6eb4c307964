"""A tiny webhook of the tests' own, and a fake loaded with a push script, for the sender's and
the relay's tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import yaml
from aiohttp import web

from streamproof.fakes.a2a import FakeA2AServer
from streamproof.fakes.a2a.script import A2AScript
from streamproof.fakes.serving import serve
from streamproof.protocol.a2a.push import TOKEN_HEADER

TOKEN = "secret-token"

PUSHED = """
task:
  - {at: 0s,  status: submitted}
  - {at: 1s,  status: working, message: gathering sources}
  - {at: 2s,  artifact: {id: summary, text: "Section 1 "}}
  - {at: 3s,  artifact: {id: summary, append: true, text: "Section 2", last: true}}
  - {at: 4s,  status: completed}
server: {wire: "1.0"}
"""
"""Five deliveries: the Task, working, two chunks, completed (1 s apart, scale it down)."""


@dataclass
class Webhook:
    """Records every POST; answers 401 without the right token, else ``status``."""

    status: int = 200
    got: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        ok = request.headers.get(TOKEN_HEADER) == TOKEN
        self.got.append(
            {
                "headers": dict(request.headers),
                "body": body,
                "payload": json.loads(body),
                "authentic": ok,
            }
        )
        return web.Response(status=self.status if ok else 401)

    def kinds(self) -> list[str]:
        return [next(iter(g["payload"])) for g in self.got]


@asynccontextmanager
async def webhook(status: int = 200) -> AsyncIterator[Webhook]:
    hook = Webhook(status=status)
    runner, base = await serve(hook.handle, "127.0.0.1", 0)
    hook.url = base + "/hook"
    try:
        yield hook
    finally:
        await runner.cleanup()


def push_script(
    faults: list[dict[str, Any]] | None = None, text: str = PUSHED, *, timeout: str = "60s"
) -> A2AScript:
    """The pushed task with ``faults`` on its deliveries. The sender's bound on one POST is
    60 s scaled (3 s at the tests' 0.05): what a delivery ends as (acknowledged, refused,
    unreachable) must not turn into a timeout on a busy machine, and no test waits it out."""
    doc = yaml.safe_load(text)
    doc["push"] = {"timeout": timeout, "faults": faults or []}
    return A2AScript.model_validate(doc)


async def send_with_webhook(base_url: str, url: str, *, token: str | None = TOKEN) -> str:
    """A 1.0 SendMessage (not blocking) registering ``url``; the task id."""
    config: dict[str, Any] = {"url": url}
    if token is not None:
        config["token"] = token
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": {"returnImmediately": True, "taskPushNotificationConfig": config},
        },
    }
    async with httpx.AsyncClient(timeout=5) as http:
        answer = await http.post(base_url + "/", json=body, headers={"A2A-Version": "1.0"})
    result = answer.json()["result"]
    return str(result["task"]["id"])


@asynccontextmanager
async def loaded(
    script: A2AScript, *, scale: float = 0.05, via: str | None = None
) -> AsyncIterator[FakeA2AServer]:
    fake = FakeA2AServer()
    await fake.start()
    try:
        fake.load(script, time_scale=scale, push_via=via)
        yield fake
    finally:
        await fake.close()
