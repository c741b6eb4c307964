"""Sans-IO core of the inline engine: one response body in, write/sleep/record operations out.

The proxy (:mod:`streamproof.faults.engines.inline`) owns the sockets; this module owns every
decision about the bytes, so the cut points, the pacing and the corruptions are tested without a
network (the h11 model: bytes in, events out). A :class:`Shaper` is made per response with the
faults that apply to that request and fire once the response has begun (everything but
``on_request``, and but ``delay``, which the proxy applies before the first byte).

Operation
---------
The proxy calls ``start()`` once the status line and headers have gone out, ``feed(chunk)``
for each upstream chunk, ``eof()`` at the upstream end, and ``on_timer()`` whenever
``next_deadline()`` passes; each returns an iterator of operations that the proxy performs in
order: :class:`Write` (bytes downstream), :class:`Sleep` (pace: drip, split gaps),
:class:`Forwarded` and :class:`Fired` (records), :class:`Finish` (end the response: ``clean``
= the chunked terminator, ``fin``, ``rst``). The iterators are lazy generators and read the
shaper's state as they resume, so a timer that fires during a ``Sleep`` (a stall, an idle cut)
takes effect on the very next byte; after a ``Finish`` the proxy abandons them.

Counting and cutting
--------------------
On an event stream every chunk goes through :meth:`streamproof.protocol.sse.Decoder.feed_blocks`,
whose
block offsets let the shaper cut *exactly* after event N even when one upstream chunk holds
several events (docs/explanation/wire-facts/proxies.md §1.3: toxiproxy's ``limit_data`` can only
count bytes, headers and
chunk-size lines included). Only blocks that dispatched an event count as events; comment
blocks (heartbeats) are forwarded and recorded as comments. ``after_bytes`` counts upstream
body bytes. Bytes are forwarded unchanged and, when nothing paces them, in one write per
upstream chunk; the decoder only reads them.

Modes that fire mid-stream:

* ``stall``: everything from upstream is swallowed (heartbeats too) and the socket stays open,
  as a proxy that has gone quiet does (docs/explanation/wire-facts/proxies.md §3: "stalled streams
  that never error"). With
  ``for``, forwarding resumes at the next block boundary, so the client never sees half an
  event; what was swallowed is lost (as with toxiproxy's ``timeout`` toxic, §1.3).
* ``drip``: wait before forwarding each event (each chunk when not an event stream); an
  event's bytes are held until its block is complete and go out in one write.
* ``split``: every write is cut into ``pieces`` writes with ``gap`` between them; the gap is
  what keeps TCP from coalescing them again (§2.6, §5).
* ``corrupt``: see :mod:`streamproof.faults.actions`. ``drop_blank_line``, ``truncate_json`` and
  ``bom`` act on the next whole event (if they fire mid-block, on the one after that block);
  on a body that is not an event stream they have nothing to act on and are recorded as not
  applied. ``cr_only`` rewrites every byte from then on.

Delegated actions: an engine that carries out some actions on the wire itself (toxiproxy holds
a stalled stream and slices a dripped one in its own process) names them in ``delegated``. The
shaper still decides *when* they fire and yields their :class:`Fired` at exactly that point of
the byte stream, but leaves the bytes alone: it neither swallows, paces nor splits them.

Damaged events: once a corruption has fired, what the client's decoder reads of each event is
recorded (:mod:`streamproof.faults.shaper.damage`).

The package's modules: :mod:`~streamproof.faults.shaper.ops` (the operations),
:mod:`~streamproof.faults.shaper.body` (the :class:`Shaper`) and
:mod:`~streamproof.faults.shaper.damage` (what a corrupted stream's client reads).
"""

from streamproof.faults.shaper.body import Shaper
from streamproof.faults.shaper.ops import Finish, Fired, Forwarded, Op, Sleep, Write

__all__ = ["Finish", "Fired", "Forwarded", "Op", "Shaper", "Sleep", "Write"]
