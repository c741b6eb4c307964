"""What a fault link saw: one flat, frozen record per thing that happened on the hop.

Checks judge a client by what reached it, so a link records the downstream side of the hop
(what the proxy forwarded, when, and how each response ended) rather than what upstream sent.
Records are plain data (serialisable with ``model_dump``), ordered by time, and carry the
proxy's own numbering:

* ``connection``: a 0-based id per accepted TCP connection of the link (it keeps counting
  across scenarios, because keep-alive connections outlive them);
* ``request``: the 0-based index of the request on the link since the plan was loaded;
* ``event_index``: the 1-based count of SSE events forwarded on that response, so the record of
  the event that ``after_event: 3`` cuts after has ``event_index == 3``.

``t`` is in seconds since the epoch given to ``set_epoch`` (a ``time.monotonic()`` value).

``tls_error`` is recorded by a link that intercepts TLS (mitmproxy as a forward proxy) when a
client's handshake with it fails, usually because the client does not trust the proxy's CA;
``detail`` holds mitmproxy's reason. It belongs to no request.

``damage`` (on ``event`` records) says how a ``corrupt`` fault changed that event as a spec
decoder reads it (``altered``, ``retyped``, ``merged``, ``lost``, ``unfinished``, then the
corruption's name: see :mod:`streamproof.faults.shaper`); ``None`` means it reached the client as
sent. Every engine that records agrees, because the inline and mitmproxy engines both take it
from the same shaper; the toxiproxy engine rejects ``corrupt`` plans (it forwards bytes
unchanged), so its records never carry damage. An event whose blank line a corruption removed is
recorded when the client's decoder could dispatch it (when the next block ends), not when its
own bytes went out.

How a response ended (``kind == "end"``):

============== ======== ==============================================================
how            by       meaning ============== ========
==============================================================
clean          upstream the upstream body ended and the chunked terminator was sent
clean          proxy    a ``status`` answer, or ``end_clean`` (terminator sent early)
fin            proxy    ``fin``: the socket closed without the chunked terminator
rst            proxy    ``rst``: SO_LINGER 0 and abort, the client gets a TCP reset
refused        proxy    ``refuse``: the connection closed with no response at all
fin / rst      client   the client went away (FIN, or a reset) before the end
upstream_error upstream upstream failed (refused, reset, truncated); the client got a FIN
fin            proxy    the proxy was closed while the response was in progress
============== ======== ==============================================================
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from streamproof.faults.when import same_rpc

__all__ = ["EndBy", "EndHow", "FaultRef", "LinkEvent", "LinkEventKind", "count_requests"]

LinkEventKind = Literal[
    "connect",
    "tls_error",
    "request",
    "response_headers",
    "first_byte",
    "event",
    "comment",
    "fault",
    "end",
]
EndHow = Literal["clean", "fin", "rst", "refused", "upstream_error"]
EndBy = Literal["client", "upstream", "proxy"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FaultRef(_Record):
    """Which fault of the link's plan fired."""

    index: int
    """0-based position in the plan given to ``load``."""
    action: str
    """The action's name (``rst``, ``stall``, ``corrupt``...)."""


class LinkEvent(_Record):
    """One thing that happened on a link."""

    t: float
    """Seconds since the link's epoch."""
    link: str
    connection: int
    request: int | None = None
    """``None`` for ``connect``, which belongs to no request."""
    kind: LinkEventKind
    detail: str = ""
    """Free text: the event type for ``event``, the comment text for ``comment``, the trigger
    for ``fault``, the reason for ``end``."""
    method: str | None = None
    path: str | None = None
    rpc: str | None = None
    """The A2A method the request asks for, when it names one: its JSON-RPC body's ``method``,
    or the 1.0 method of its REST route (:func:`~streamproof.faults.when.request_rpc`)."""
    status: int | None = None
    """The upstream status (``response_headers``) or the status sent (``end`` of a ``status``)."""
    event_index: int | None = None
    damage: str | None = None
    """On an ``event``: how a corruption changed it for the client's decoder, if one did."""
    fault: FaultRef | None = None
    how: EndHow | None = None
    by: EndBy | None = None


def count_requests(
    events: Iterable[LinkEvent],
    method: str | None = None,
    path: str | None = None,
    rpc: str | None = None,
) -> int:
    """How many ``request`` records there are, optionally only those matching (``method``
    case-insensitive, ``path`` a glob, ``rpc`` the JSON-RPC method)."""
    count = 0
    for e in events:
        if e.kind != "request":
            continue
        if method is not None and (e.method or "").upper() != method.upper():
            continue
        if path is not None and not fnmatch.fnmatchcase(e.path or "", path):
            continue
        if rpc is not None and not same_rpc(e.rpc, rpc):
            continue
        count += 1
    return count
