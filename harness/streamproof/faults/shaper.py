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

Damaged events
--------------
Once a corruption has fired on an event stream, the shaper also decodes what it writes
downstream (the same spec decoder, from the next block boundary on) and records each upstream
event when the client's decoder has dispatched it, saying in :attr:`Forwarded.damage` whether
it arrived as sent: ``None`` when a spec decoder reads the same event type and data (a lone
CR, a BOM that only spoils an ``id:`` line), else one of

* ``altered (…)``: dispatched with other data (``truncate_json``: not valid JSON any more);
* ``retyped (…)``: the same data under another event type (a BOM on an ``event:`` line);
* ``merged (…)``: run into its neighbour(s) as one event (``drop_blank_line``): every event
  of the merge is damaged, the one whose blank line was dropped and the one it ran into;
* ``lost (…)``: nothing dispatched for it (a BOM on its only ``data:`` line): the client's
  decoder skips it without an error;
* ``unfinished (…)``: the response ended (or stalled for good) inside it, so it was never
  dispatched;

the parenthesis naming the corruption(s) applied to it. An event whose blank line was dropped
is recorded when the client's decoder dispatches it, which is when the next block ends.

Delegated actions: an engine that carries out some actions on the wire itself (toxiproxy holds
a stalled stream and slices a dripped one in its own process) names them in ``delegated``. The
shaper still decides *when* they fire and yields their :class:`Fired` at exactly that point of
the byte stream, but leaves the bytes alone: it neither swallows, paces nor splits them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from streamproof.core.durations import TimeScale
from streamproof.faults.actions import (
    CrOnly,
    drop_blank_line,
    insert_bom,
    split_pieces,
    truncate_json,
)
from streamproof.faults.plan import CorruptKind, Fault, Trigger
from streamproof.protocol.sse import Block, Decoder

__all__ = ["Finish", "Fired", "Forwarded", "Op", "Shaper", "Sleep", "Write"]

_EARLY: Final = 0.001
"""Seconds by which a timer may wake early and still count as due."""


@dataclass(frozen=True, slots=True)
class Write:
    data: bytes


@dataclass(frozen=True, slots=True)
class Sleep:
    seconds: float


@dataclass(frozen=True, slots=True)
class Fired:
    index: int
    fault: Fault
    trigger: Trigger
    note: str = ""


@dataclass(frozen=True, slots=True)
class Forwarded:
    """An event or a comment line went downstream (recorded after its bytes were written)."""

    kind: Literal["event", "comment"]
    event_index: int | None
    detail: str
    damage: str | None = None
    """How a corruption changed this event as a spec decoder reads it (see the module
    docstring); ``None``: it arrived as sent."""


@dataclass(slots=True)
class _Sent:
    """An upstream block written downstream, waiting for the client's decoder to dispatch it
    (only once a corruption has fired)."""

    block: Block
    event_index: int | None
    end: int
    """Bytes written downstream (since tracking began) when its last byte went out."""
    corrupted: tuple[str, ...]
    """The corruptions applied to its bytes."""


@dataclass(frozen=True, slots=True)
class Finish:
    how: Literal["clean", "fin", "rst"]
    index: int


Op = Write | Sleep | Fired | Forwarded | Finish


class Shaper:
    """The fault logic for one response body."""

    def __init__(
        self,
        faults: Sequence[tuple[int, Fault]],
        *,
        sse: bool,
        scale: TimeScale,
        clock: Callable[[], float],
        delegated: Collection[str] = (),
    ) -> None:
        self._delegated = frozenset(delegated)
        """Action names the engine carries out itself: fired here, not applied to the bytes."""
        self._unfired: list[tuple[int, Fault, Trigger]] = [
            (i, f, f.trigger)
            for i, f in faults
            if f.trigger.kind != "on_request" and f.do.delay is None
        ]
        self.sse = sse
        self._scale = scale
        self._clock = clock
        self._decoder = Decoder() if sse else None
        # Counters (public, read by the proxy for its records).
        self.offset = 0
        """Upstream body bytes processed (forwarded, held or swallowed)."""
        self.events = 0
        """Events forwarded downstream."""
        self.swallowed_events = 0
        self.swallowed_bytes = 0
        self.finished: Finish | None = None
        # Timing.
        self._response_start: float | None = None
        self._last_forward = 0.0
        # Output buffer: bytes and the records that follow them.
        self._out: list[bytes] = []
        self._records: list[Forwarded] = []
        # Modes.
        self._stalled = False
        self._stall_until: float | None = None
        self._resume_at_boundary = False
        self._drip: float | None = None
        self._split: tuple[int, float] | None = None
        self._cr: CrOnly | None = None
        self._corrupt_next: list[CorruptKind] = []
        self._corrupt_wait = False  # fired mid-block: corrupt the event after this one
        self._held: list[bytes] = []
        self._mid_block = False  # upstream bytes since the last block end
        self._prev_cr = False  # the last upstream byte processed was a CR
        self._block_start_cr = False  # the last block ended with a CR
        self._drop_lf = False  # drop an LF that would complete a CR removed by drop_blank_line
        # Damage tracking (after a corruption fired): what the client's decoder reads.
        self._down: Decoder | None = None
        self._down_soon = False  # start tracking at the next block boundary
        self._down_written = 0
        self._down_blocks: list[Block] = []
        self._sent: list[_Sent] = []
        self._just_corrupted: tuple[str, ...] = ()

    # --- state the proxy reads -----------------------------------------------------------------

    @property
    def stalled(self) -> bool:
        return self._stalled

    @property
    def unfired(self) -> list[int]:
        """Plan indexes of the faults that have not fired (yet)."""
        return [i for i, _, _ in self._unfired]

    def next_deadline(self) -> float | None:
        """When ``on_timer`` must next be called (clock time), or ``None``."""
        if self._response_start is None or self.finished is not None:
            return None
        deadline: float | None = None
        if self._stalled and self._stall_until is not None:
            deadline = self._stall_until
        for _, _, trigger in self._unfired:
            due = self._due(trigger)
            if due is not None and (deadline is None or due < deadline):
                deadline = due
        return deadline

    def _due(self, trigger: Trigger) -> float | None:
        if trigger.value is None or self._response_start is None:
            return None
        if trigger.kind == "after":
            return self._response_start + self._scale(trigger.value)
        if trigger.kind == "idle":
            return self._last_forward + self._scale(trigger.value)
        return None

    def forwarded(self) -> None:
        """The proxy wrote bytes downstream just now (re-arms ``idle``)."""
        self._last_forward = self._clock()

    # --- entry points --------------------------------------------------------------------------

    def start(self) -> Iterator[Op]:
        """The status line and headers went out: the response has begun."""
        self._response_start = self._last_forward = self._clock()
        for entry in list(self._unfired):
            if entry[2].at_response_start and entry in self._unfired:
                yield from self._fire(entry)
                if self.finished:
                    return

    def feed(self, chunk: bytes) -> Iterator[Op]:
        """One upstream body chunk."""
        if not chunk or self.finished:
            return
        base = self.offset
        end = base + len(chunk)
        blocks = self._decoder.feed_blocks(chunk) if self._decoder is not None else []
        if self._plain():
            yield from self._pass(chunk, blocks)
            return
        cuts: dict[int, Block | None] = {b.end: b for b in blocks}
        for _, _, trigger in self._unfired:
            if trigger.kind == "after_bytes" and trigger.value is not None:
                target = int(trigger.value)
                if base < target < end:
                    cuts.setdefault(target, None)
        cuts.setdefault(end, None)
        pos = base
        for cut in sorted(cuts):
            if cut <= pos:
                continue
            yield from self._segment(chunk[pos - base : cut - base], cuts[cut])
            pos = self.offset = cut
            if self.finished:
                return
            yield from self._positional()
            if self.finished:
                return
        yield from self._flush()

    def eof(self) -> Iterator[Op]:
        """Upstream ended its body: forward what is held (a partial event goes out as is)."""
        if self._decoder is not None:
            self._decoder.close()
        if self.finished:
            return
        if self._held and not self._stalled:
            data = b"".join(self._held)
            self._held.clear()
            yield from self._write(data)
        self._settle("the response ended inside it")
        yield from self._flush()

    def on_timer(self) -> Iterator[Op]:
        """``next_deadline()`` has passed: end a timed stall, fire ``after``/``idle`` faults."""
        if self.finished:
            return
        now = self._clock()
        if self._stalled and self._stall_until is not None and now + _EARLY >= self._stall_until:
            self._stall_until = None
            if self._mid_block and self.sse:
                self._resume_at_boundary = True
            else:
                self._stalled = False
        for entry in list(self._unfired):
            due = self._due(entry[2])
            if due is not None and now + _EARLY >= due and entry in self._unfired:
                yield from self._fire(entry)
                if self.finished:
                    return

    # --- internals -----------------------------------------------------------------------------

    def _plain(self) -> bool:
        """Nothing alters or paces the bytes and no byte or event trigger is pending."""
        return not (
            self._stalled
            or self._drip is not None
            or self._split is not None
            or self._cr is not None
            or self._corrupt_next
            or self._held
            or self._drop_lf
            or self._down is not None
            or self._down_soon
            or any(t.kind in ("after_event", "after_bytes") for _, _, t in self._unfired)
        )

    def _pass(self, chunk: bytes, blocks: list[Block]) -> Iterator[Op]:
        """The fast path: the chunk as one write, then the records of what it carried."""
        self._out.append(chunk)
        for block in blocks:
            self._record(block)
        self.offset += len(chunk)
        self._prev_cr = chunk[-1] == 0x0D
        if blocks:
            self._mid_block = blocks[-1].end != self.offset
            self._block_start_cr = chunk[blocks[-1].end - (self.offset - len(chunk)) - 1] == 0x0D
        elif self.sse:
            self._mid_block = True
        yield from self._flush()

    def _record(self, block: Block) -> None:
        corrupted, self._just_corrupted = self._just_corrupted, ()
        index: int | None = None
        if block.event is not None:
            self.events += 1
            index = self.events
        if self._down is not None:
            self._sent.append(_Sent(block, index, self._down_written, corrupted))
            self._resolve()
            return
        if index is not None:
            assert block.event is not None
            self._records.append(Forwarded("event", index, block.event.type))
        else:
            self._records.extend(Forwarded("comment", None, c) for c in block.comments)
        if self._down_soon:
            self._down_soon = False
            self._track()

    # --- damage tracking -----------------------------------------------------------------------

    def _track(self) -> None:
        """Decode what goes downstream from here (a block boundary) on."""
        self._down = Decoder(mid_stream=self.offset > 0, after_cr=self._block_start_cr)

    def _downstream(self, data: bytes) -> None:
        """``data`` went (is going) downstream: the client's decoder reads it."""
        if self._down is not None and data:
            self._down_written += len(data)
            self._down_blocks.extend(self._down.feed_blocks(data))

    def _resolve(self) -> None:
        """Record the written blocks the client's decoder has dispatched, in order."""
        while self._down_blocks and self._sent:
            down = self._down_blocks[0]
            if self._sent[-1].end < down.end:
                return  # the block that ends there is not recorded yet
            self._down_blocks.pop(0)
            count = 0
            while count < len(self._sent) and self._sent[count].end <= down.end:
                count += 1
            if count:
                matched, self._sent = self._sent[:count], self._sent[count:]
                self._emit(matched, down)

    def _emit(self, matched: list[_Sent], down: Block | None, why: str = "") -> None:
        events = [m for m in matched if m.block.event is not None]
        kinds = ", ".join(dict.fromkeys(k for m in matched for k in m.corrupted)) or "corrupt"
        for m in matched:
            event = m.block.event
            if event is None:
                self._records.extend(Forwarded("comment", None, c) for c in m.block.comments)
                continue
            got = down.event if down is not None else None
            damage: str | None
            if down is None:
                damage = f"unfinished ({kinds}): {why}, so it was never dispatched"
            elif len(events) > 1:
                others = ", ".join(str(e.event_index) for e in events if e is not m)
                damage = f"merged ({kinds}): dispatched as one event with event(s) {others}"
            elif got is None:
                damage = f"lost ({kinds}): the client's decoder dispatched nothing for it"
            elif got.data != event.data:
                damage = f"altered ({kinds}): dispatched with other data"
            elif got.type != event.type:
                damage = f"retyped ({kinds}): the same data as event type {got.type!r}"
            else:
                damage = None
            self._records.append(Forwarded("event", m.event_index, event.type, damage))

    def _settle(self, why: str) -> None:
        """No more bytes will reach the client: what its decoder has not dispatched never
        will be."""
        if self._down is None:
            return
        self._resolve()
        if self._sent:
            matched, self._sent = self._sent, []
            self._emit(matched, None, why)

    def _flush(self) -> Iterator[Op]:
        if self._out:
            data = b"".join(self._out) if len(self._out) > 1 else self._out[0]
            self._out.clear()
            yield Write(data)
        if self._records:
            records = self._records[:]
            self._records.clear()
            yield from records

    def _positional(self) -> Iterator[Op]:
        for entry in list(self._unfired):
            kind, value = entry[2].kind, entry[2].value
            if value is None or entry not in self._unfired:
                continue
            if (kind == "after_event" and self.events >= value) or (
                kind == "after_bytes" and self.offset >= value
            ):
                yield from self._fire(entry)
                if self.finished:
                    return

    def _segment(self, seg: bytes, block: Block | None) -> Iterator[Op]:
        """Bytes up to a cut point; ``block`` is the block that ends there, if one does."""
        boundary_before = not self._mid_block
        start_cr = self._block_start_cr  # the block this segment belongs to began after a CR
        if seg:
            self._prev_cr = seg[-1] == 0x0D
        if block is not None:
            self._mid_block = False
            self._block_start_cr = self._prev_cr
        elif seg and self.sse:
            self._mid_block = True
        if self._stalled:
            self._swallow(seg, block)
            return
        is_event = block is not None and block.event is not None
        if self.sse and (self._drip is not None or self._corrupt_next):
            self._held.append(seg)
            if block is None:
                return
            data = b"".join(self._held)
            self._held.clear()
            if not is_event:
                self._corrupt_wait = False  # the block it fired in has ended
                yield from self._write(data)
                self._record(block)
                return
            dangling_cr = False
            if self._corrupt_next and not self._corrupt_wait:
                data, dangling_cr = self._corrupt(data, start_cr)
            self._corrupt_wait = False
            if self._drip is not None:
                yield from self._flush()
                yield Sleep(self._drip)
                if self.finished:
                    return
                if self._stalled:
                    self._swallow(data, block)
                    return
            yield from self._write(data)
            self._drop_lf = dangling_cr
            self._record(block)
            return
        if block is not None:
            self._corrupt_wait = False
        if not self.sse and self._drip is not None and seg and boundary_before:
            yield from self._flush()
            yield Sleep(self._drip)
            if self.finished:
                return
            if self._stalled:
                self._swallow(seg, block)
                return
        yield from self._write(seg)
        if block is not None:
            self._record(block)

    def _swallow(self, seg: bytes, block: Block | None) -> None:
        self.swallowed_bytes += len(seg)
        if block is not None and block.event is not None:
            self.swallowed_events += 1
        if block is not None and self._resume_at_boundary:
            self._resume_at_boundary = False
            self._stalled = False

    def _corrupt(self, data: bytes, after_cr: bool) -> tuple[bytes, bool]:
        """The held event with the pending corruptions applied; and whether it now ends in a
        CR whose LF (still to come) must be dropped."""
        # Held bytes start at the previous block's end; when that block ended in a CR whose LF
        # came in a later chunk, they start with that LF, and a BOM must go after it.
        dangling_cr = False
        self._just_corrupted = tuple(self._corrupt_next)
        for kind in self._corrupt_next:
            if kind == "drop_blank_line":
                data, dangling_cr = drop_blank_line(data)
            elif kind == "truncate_json":
                data = truncate_json(data)
            elif kind == "bom":
                data = insert_bom(data, after_cr)
        self._corrupt_next.clear()
        return data, dangling_cr

    def _write(self, data: bytes) -> Iterator[Op]:
        if self._drop_lf and data:
            if data[0] == 0x0A:
                data = data[1:]
            self._drop_lf = False
        if self._cr is not None:
            data = self._cr.feed(data)
        if not data:
            return
        if self._split is None:
            self._downstream(data)
            self._out.append(data)
            return
        pieces, gap = self._split
        yield from self._flush()
        for k, piece in enumerate(split_pieces(data, pieces)):
            if k:
                yield Sleep(gap)
                if self.finished:
                    return
                if self._stalled:
                    self.swallowed_bytes += len(piece)
                    continue
            self._downstream(piece)
            yield Write(piece)

    def _fire(self, entry: tuple[int, Fault, Trigger]) -> Iterator[Op]:
        index, fault, trigger = entry
        self._unfired.remove(entry)
        do = fault.do
        if fault.action not in self._delegated and (
            do.end_clean or do.fin or do.rst or (do.stall is not None and do.stall.for_ is None)
        ):
            self._settle("the response ended inside it" if do.stall is None else "it stalled")
        yield from self._flush()
        note = ""
        if do.corrupt in ("drop_blank_line", "truncate_json", "bom") and not self.sse:
            note = "not applied: the body is not an event stream"
        yield Fired(index, fault, trigger, note)
        if fault.action in self._delegated:
            return
        if do.end_clean or do.fin or do.rst:
            how: Literal["clean", "fin", "rst"] = (
                "clean" if do.end_clean else "fin" if do.fin else "rst"
            )
            self.finished = Finish(how, index)
            yield self.finished
        elif do.stall is not None:
            self._stalled = True
            self._held.clear()
            self._resume_at_boundary = False
            self._stall_until = (
                None if do.stall.for_ is None else self._clock() + self._scale(do.stall.for_)
            )
        elif do.drip is not None:
            self._drip = self._scale(do.drip)
        elif do.split is not None:
            self._split = (do.split.pieces, self._scale(do.split.gap))
        elif do.corrupt is not None and self.sse:
            if do.corrupt == "cr_only":
                self._cr = CrOnly(after_cr=self._prev_cr)
            else:
                self._corrupt_next.append(do.corrupt)
                if self._mid_block:
                    self._corrupt_wait = True
            if self._down is None and not self._down_soon:
                if self._mid_block:
                    self._down_soon = True
                else:
                    self._track()
        elif do.corrupt == "cr_only":
            self._cr = CrOnly(after_cr=self._prev_cr)
