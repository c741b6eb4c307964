"""Push notifications on the wire: what a server POSTs to a client's webhook (no I/O).

The body is the update as a 1.0 ``StreamResponse`` (spec 1.0 §4.3.3), the same object a 1.0
stream carries in each event (``{"statusUpdate": {...}}``, ``{"artifactUpdate": {...}}``,
``{"task": {...}}``), written as a2a-sdk 1.3's sender writes it: ``MessageToDict`` of the proto
(which our 1.0 encoding equals) serialised by httpx's ``json=`` (compact separators, UTF-8, no
ASCII escaping), ``Content-Type: application/json``. Authentication travels as a2a-sdk sends it:
the config's ``token`` as ``X-A2A-Notification-Token`` and ``authentication`` as
``Authorization: <scheme> <credentials>``.

Push is a 1.0 need here: a2a-sdk 1.3 posts this 1.0 shape whatever wire the task was created on,
and 0.3's payload (a bare Task snapshot) has no update to duplicate or replay
(docs/reference/a2a-client-contract.md#push-notifications).
"""

from __future__ import annotations

import json
from typing import Final

from streamproof.protocol.a2a.encode import encode_stream_event
from streamproof.protocol.a2a.model import ArtifactUpdate, PushConfig, StatusUpdate, Task

__all__ = [
    "PUSH_CONTENT_TYPE",
    "TOKEN_HEADER",
    "push_body",
    "push_headers",
]

TOKEN_HEADER: Final = "X-A2A-Notification-Token"
"""Where a2a-sdk's sender puts the config's ``token``."""
PUSH_CONTENT_TYPE: Final = "application/json"
"""What httpx's ``json=`` sets, and so what a2a-sdk 1.3's sender sends."""

PushEvent = Task | StatusUpdate | ArtifactUpdate


def push_body(event: PushEvent) -> bytes:
    """The webhook body of ``event``, byte for byte as a2a-sdk 1.3's sender writes it."""
    payload = encode_stream_event(event, "1.0")
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )


def push_headers(
    config: PushConfig, *, token: str | None = None, authorization: str | None = None
) -> dict[str, str]:
    """The headers of a delivery for ``config``. ``token`` / ``authorization`` override what the
    config says (a forged delivery); an empty string leaves the header out."""
    headers = {"Content-Type": PUSH_CONTENT_TYPE}
    sent_token = config.token if token is None else token
    if sent_token:
        headers[TOKEN_HEADER] = sent_token
    if authorization is None and config.scheme and config.credentials:
        authorization = f"{config.scheme} {config.credentials}"
    if authorization:
        headers["Authorization"] = authorization
    return headers
