"""Sans-IO Server-Sent Events decoder and encoder, exact to the WHATWG HTML spec.

This module is the oracle that judges other people's servers, so it implements the
"event stream interpretation" algorithm of the HTML Living Standard
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
literally and strictly; it never guesses what a sloppy server meant.

Theory of operation
-------------------
The decoder works on *bytes* and only decodes complete lines to text:

* The line terminators CR (0x0D) and LF (0x0A) are ASCII, and in UTF-8 they can never be part
  of a multi-byte sequence, nor part of an invalid sequence's "maximal subpart". So splitting the
  raw bytes at CR/LF and decoding each line with ``errors="replace"`` gives exactly the same
  text as decoding the whole stream with the spec's UTF-8 decode (U+FFFD replacement) and then
  splitting. Because an incomplete line is kept as bytes until its terminator arrives, a
  multi-byte character split across chunks is decoded correctly without a stateful codec,
  and every line has an exact byte offset in the raw stream (needed by ``feed_blocks``).
* Lines are found with ``bytes.splitlines`` (which for *bytes* splits on exactly CRLF, LF and
  CR), so there is no per-byte Python loop; the per-line work is one ``decode`` and one
  ``partition``.
* A CR that ends a chunk terminates its line immediately (the decoder never waits for more
  input to dispatch). If the next chunk then starts with LF, that LF is the second half of the
  same CRLF and is skipped. Consequently, for a blank line whose CRLF is split across two
  chunks, ``Block.end`` points just after the CR (the LF is counted in ``bytes_seen`` and
  belongs to the gap before the next block); when CR and LF arrive in the same chunk, ``end``
  points after the LF. This is the only way block offsets depend on chunking; events never do.
* One leading UTF-8 BOM (EF BB BF) is dropped. While fewer than three bytes have arrived and
  they are a prefix of the BOM, the decoder waits; a BOM anywhere later is ordinary data
  (e.g. it becomes part of a field name, which is then an unknown field and ignored).

Spec decisions worth knowing
----------------------------
* ``id`` persists across events (the last event ID buffer is never reset), and the event
  source's last event ID (``Decoder.last_event_id``) only changes when a block is dispatched,
  even if the block carries no data. An ``id:`` in a block cut off by end of stream therefore
  does not change ``last_event_id``.
* ``retry`` takes effect as soon as the field is processed (as in the spec), even if its block
  is never terminated. An empty ``retry:`` value is not "only ASCII digits" and is ignored.
* ``close()`` sets ``discarded`` when the stream ends inside a block: a partial (unterminated)
  line, or field lines not yet followed by a blank line. Complete comment lines alone carry
  nothing to discard and do not set it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Block", "Decoder", "Event", "decode", "encode", "encode_comment"]

_BOM = b"\xef\xbb\xbf"
_LINE_ENDS = ("\n", "\r\n", "\r")
# Splits text into lines exactly the way the event stream grammar does (CRLF, lone LF, lone CR);
# str.splitlines would also split on VT, FF, U+2028 and friends, which SSE treats as data.
_TEXT_LINE_SPLIT = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event."""

    type: str = "message"  # event type
    data: str = ""
    id: str = ""  # the last event id in force (persists across events, per spec)
    id_line: bool = False  # whether THIS event's own block carried an accepted `id:` field
    retry: int | None = None  # a retry value set in this event's block, if any


@dataclass(frozen=True, slots=True)
class Block:
    """One blank-line-terminated block of the stream."""

    end: int  # byte offset in the whole stream just after the blank line that ended the block
    event: Event | None  # what was dispatched, or None (empty data: nothing dispatched)
    comments: tuple[str, ...]  # comment lines in the block, without the leading ':'


class Decoder:
    """Incremental event stream decoder. Feed raw bytes; get events (or blocks) back."""

    __slots__ = (
        "_block_fields",
        "_closed",
        "_comments",
        "_data",
        "_event_type",
        "_id_buffer",
        "_id_line",
        "_offset",
        "_pending",
        "_retry_in_block",
        "_skip_lf",
        "_started",
        "bytes_seen",
        "comments",
        "discarded",
        "last_event_id",
        "retry",
    )

    def __init__(self, *, mid_stream: bool = False, after_cr: bool = False) -> None:
        """A decoder for a whole stream; ``mid_stream``: for one that begins after a block
        boundary of a stream already under way (no leading BOM is stripped: it would be
        ordinary data there), ``after_cr`` when that boundary was a CR whose LF may come next
        (the LF completes the CRLF and is skipped)."""
        # Public state.
        self.last_event_id: str = ""  # the event source's last event ID (set on dispatch)
        self.retry: int | None = None  # reconnection time in ms, if the stream ever set one
        self.discarded: bool = False  # set by close(): stream ended inside a block
        self.comments: int = 0  # comment lines seen
        self.bytes_seen: int = 0  # raw bytes fed, BOM included
        # Stream-level state.
        self._pending = bytearray()  # bytes of the incomplete line not yet terminated
        self._offset = 0  # stream byte offset where _pending starts
        self._started = mid_stream  # whether the leading-BOM decision has been made
        self._skip_lf = after_cr  # previous chunk ended with CR: a leading LF completes that CRLF
        self._closed = False
        self._id_buffer = ""  # the spec's "last event ID buffer": never reset
        # Block-level state, reset after every blank line.
        self._data: list[str] = []  # data buffer as lines; "\n".join == buffer minus final LF
        self._event_type = ""
        self._id_line = False
        self._retry_in_block: int | None = None
        self._comments: list[str] = []
        self._block_fields = False  # a non-comment line has been seen in this block

    def feed(self, data: bytes) -> list[Event]:
        """Consume a chunk; return the events it completed."""
        return [b.event for b in self.feed_blocks(data) if b.event is not None]

    def feed_blocks(self, data: bytes) -> list[Block]:
        """Consume a chunk; return every block it completed, dispatched or not, with offsets."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        size = len(data)
        if not size:
            return []
        self.bytes_seen += size
        if self._skip_lf:
            self._skip_lf = False
            if data[0] == 0x0A:  # second half of a CRLF split across chunks
                data = data[1:]
                self._offset += 1
                if not data:
                    return []
        if not self._started:
            buf = bytes(self._pending) + data
            self._pending.clear()
            if len(buf) < 3 and _BOM.startswith(buf):
                self._pending += buf  # could still become a BOM: wait for more bytes
                return []
            self._started = True
            if buf.startswith(_BOM):
                buf = buf[3:]
                self._offset += 3
        elif b"\n" not in data and b"\r" not in data:
            self._pending += data  # no line end: just accumulate (amortised O(1))
            return []
        elif self._pending:
            buf = bytes(self._pending) + data
            self._pending.clear()
        else:
            buf = data

        lines = buf.splitlines(keepends=True)
        if lines and lines[-1][-1] not in (0x0A, 0x0D):
            self._pending += lines.pop()
        if not lines:
            return []
        if buf[-1] == 0x0D:
            self._skip_lf = True  # a CR ends the chunk: an LF next would be its pair

        blocks: list[Block] = []
        offset = self._offset
        for raw in lines:
            offset += len(raw)
            # Each piece ends in exactly one terminator, so rstrip removes exactly that.
            line_bytes = raw.rstrip(b"\r\n")
            if not line_bytes:
                blocks.append(self._dispatch(offset))
            elif line_bytes[0] == 0x3A:  # ':' comment
                self._comments.append(line_bytes[1:].decode("utf-8", "replace"))
                self.comments += 1
            else:
                self._field(line_bytes.decode("utf-8", "replace"))
        self._offset = offset  # where the (new) pending partial line starts
        return blocks

    def _field(self, line: str) -> None:
        """Process one field line (the spec's "process the field")."""
        self._block_fields = True
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]  # exactly one leading space is syntax, not data
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\x00" not in value:
                self._id_buffer = value
                self._id_line = True
        elif name == "retry":
            if value.isascii() and value.isdigit():  # ASCII digits only; "" is rejected
                self.retry = self._retry_in_block = int(value)
        # Any other field name is ignored.

    def _dispatch(self, end: int) -> Block:
        """A blank line: the spec's "dispatch the event", returning the finished block."""
        self.last_event_id = self._id_buffer
        event: Event | None = None
        if self._data:
            event = Event(
                type=self._event_type or "message",
                data="\n".join(self._data),
                id=self._id_buffer,
                id_line=self._id_line,
                retry=self._retry_in_block,
            )
        block = Block(end=end, event=event, comments=tuple(self._comments))
        self._data = []
        self._event_type = ""
        self._id_line = False
        self._retry_in_block = None
        self._comments = []
        self._block_fields = False
        return block

    def close(self) -> list[Event]:
        """End of stream: any incomplete event is discarded (never dispatched); returns []."""
        if not self._closed:
            self._closed = True
            self.discarded = bool(self._pending) or self._block_fields
            self._pending.clear()
            self._data = []
            self._event_type = ""
            self._comments = []
        return []


def decode(data: bytes) -> list[Event]:
    """Decode a whole stream at once (feed + close)."""
    decoder = Decoder()
    events = decoder.feed(data)
    decoder.close()
    return events


def _check_line_end(line_end: str) -> None:
    if line_end not in _LINE_ENDS:
        raise ValueError(f"line_end must be one of {_LINE_ENDS!r}, got {line_end!r}")


def encode(
    data: str,
    *,
    event: str | None = None,
    id: str | None = None,
    retry: int | None = None,
    line_end: str = "\n",
) -> bytes:
    """Encode one well-formed event: id/event/retry lines, one data line per line, blank line.

    Every field is written as ``name: value`` with one space, so values that themselves start
    with a space round-trip. ``data`` is split on CRLF, CR and LF (only those).
    """
    _check_line_end(line_end)
    lines: list[str] = []
    if id is not None:
        if "\r" in id or "\n" in id or "\x00" in id:
            raise ValueError(f"id must not contain CR, LF or NUL: {id!r}")
        lines.append("id: " + id)
    if event is not None:
        if "\r" in event or "\n" in event:
            raise ValueError(f"event must not contain CR or LF: {event!r}")
        lines.append("event: " + event)
    if retry is not None:
        if isinstance(retry, bool) or not isinstance(retry, int) or retry < 0:
            raise ValueError(f"retry must be a non-negative int, got {retry!r}")
        lines.append(f"retry: {retry}")
    lines.extend("data: " + part for part in _TEXT_LINE_SPLIT.split(data))
    return (line_end.join(lines) + line_end + line_end).encode("utf-8")


def encode_comment(text: str = "", line_end: str = "\n") -> bytes:
    """Encode one comment line (``:`` + text), e.g. a heartbeat. Dispatches nothing."""
    _check_line_end(line_end)
    if "\r" in text or "\n" in text:
        raise ValueError(f"comment must not contain CR or LF: {text!r}")
    return (":" + text + line_end).encode("utf-8")
