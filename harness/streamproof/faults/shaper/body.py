"""The :class:`Shaper`: the fault logic for one response body (see
:mod:`streamproof.faults.shaper`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Final, Literal

from streamproof.core.durations import TimeScale
from streamproof.faults.actions import CrOnly, corrupt_event, split_pieces
from streamproof.faults.plan import CorruptKind, Fault, Trigger
from streamproof.faults.shaper.damage import Damage
from streamproof.faults.shaper.ops import Finish, Fired, Forwarded, Op, Sleep, Write
from streamproof.protocol.sse import Block, Decoder

__all__ = ["Shaper"]

_EARLY: Final = 0.001
"""Seconds by which a timer may wake early and still count as due."""


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
        self._down: Damage | None = None
        self._down_soon = False  # start tracking at the next block boundary
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
            self._down.sent(block, index, corrupted)
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
        self._down = Damage(
            self._records, mid_stream=self.offset > 0, after_cr=self._block_start_cr
        )

    def _downstream(self, data: bytes) -> None:
        """``data`` went (is going) downstream: the client's decoder reads it."""
        if self._down is not None:
            self._down.written(data)

    def _settle(self, why: str) -> None:
        """No more bytes will reach the client: what its decoder has not dispatched never
        will be."""
        if self._down is not None:
            self._down.settle(why)

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
        self._just_corrupted = tuple(self._corrupt_next)
        data, dangling_cr = corrupt_event(data, self._corrupt_next, after_cr)
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
