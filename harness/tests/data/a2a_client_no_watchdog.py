"""A naive A2A client on the real a2a-sdk 1.3: it consumes message/stream to the end and
prints the streamproof result line, and nothing more (no watchdog, no deadline, no recovery).

It reads timeouts off (``read=None``), the usual fix for httpx's 5 s ReadTimeout on long tasks,
so a proxy's silent idle cut leaves it waiting forever: exactly what A2A-C-RECOVERY catches.
"""

import asyncio
import json
import os

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest


async def main() -> dict[str, object]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None)) as http:
        client = await create_client(
            os.environ["STREAMPROOF_A2A_URL"], client_config=ClientConfig(httpx_client=http)
        )
        message = new_text_message(os.environ["STREAMPROOF_PROMPT"], role=Role.ROLE_USER)
        ids, state, texts = {}, "unknown", {}
        async for event in client.send_message(SendMessageRequest(message=message)):
            if event.HasField("task"):
                ids = {"taskId": event.task.id, "contextId": event.task.context_id}
            elif event.HasField("artifact_update"):
                art = event.artifact_update.artifact
                chunk = "".join(p.text for p in art.parts)
                old = texts.get(art.artifact_id, "") if event.artifact_update.append else ""
                texts[art.artifact_id] = old + chunk
            elif event.HasField("status_update"):
                state = {3: "completed", 4: "failed", 5: "canceled"}.get(
                    event.status_update.status.state, "unknown"
                )
        artifacts = [{"id": k, "text": v} for k, v in texts.items()]
        return {"status": state, **ids, "artifacts": artifacts, "incomplete": False}


print(json.dumps(asyncio.run(main())), flush=True)
