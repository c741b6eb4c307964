"""What the client's decoder reads once a corruption has fired on an event stream.

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
"""

from __future__ import annotations

from dataclasses import dataclass

from streamproof.faults.shaper.ops import Forwarded
from streamproof.protocol.sse import Block, Decoder

__all__ = ["Damage"]


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


class Damage:
    """Decodes what goes downstream from a block boundary on, as the client's decoder does,
    and records each upstream event (into ``records``) once that decoder has dispatched it."""

    def __init__(self, records: list[Forwarded], *, mid_stream: bool, after_cr: bool) -> None:
        self._records = records
        self._down = Decoder(mid_stream=mid_stream, after_cr=after_cr)
        self._written = 0
        self._blocks: list[Block] = []
        self._sent: list[_Sent] = []

    def written(self, data: bytes) -> None:
        """``data`` went (is going) downstream: the client's decoder reads it."""
        if data:
            self._written += len(data)
            self._blocks.extend(self._down.feed_blocks(data))

    def sent(self, block: Block, event_index: int | None, corrupted: tuple[str, ...]) -> None:
        """The upstream ``block`` has been written downstream (its corruptions applied)."""
        self._sent.append(_Sent(block, event_index, self._written, corrupted))
        self._resolve()

    def _resolve(self) -> None:
        """Record the written blocks the client's decoder has dispatched, in order."""
        while self._blocks and self._sent:
            down = self._blocks[0]
            if self._sent[-1].end < down.end:
                return  # the block that ends there is not recorded yet
            self._blocks.pop(0)
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

    def settle(self, why: str) -> None:
        """No more bytes will reach the client: what its decoder has not dispatched never
        will be."""
        self._resolve()
        if self._sent:
            matched, self._sent = self._sent, []
            self._emit(matched, None, why)
