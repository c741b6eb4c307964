"""The byte transformations behind ``split`` and ``corrupt``: small pure functions, no I/O.

Each ``corrupt`` kind reproduces one way a real stream goes wrong, chosen for what the WHATWG
event-stream rules (and the lenient parsers of docs/explanation/wire-facts/proxies.md §4) do with
it:

* ``drop_blank_line``: the event's terminating blank line is removed, so its fields run into
  the next event's and a spec decoder dispatches the two as one event whose data lines are
  joined with ``\\n`` (docs/explanation/wire-facts/proxies.md §2.6, "malformed": 10 events became
  9).
* ``truncate_json``: the event's last ``data`` line keeps only its first half (cut on a UTF-8
  character boundary) and the blank line stays, so the event is dispatched with data that is
  not valid JSON: what a client sees when a producer is cut off mid-serialisation.
* ``cr_only``: from then on every line end is a lone CR. That is valid SSE (a spec decoder sees
  the same events) but a parser that splits on LF only sees nothing (aiohttp-sse-client2 in
  docs/explanation/wire-facts/proxies.md §4).
* ``bom``: the bytes EF BB BF go in front of the next event. Only a BOM at the very start of
  the stream is stripped; mid-stream it becomes part of the first field name
  (``\\ufeffdata``), an unknown field, so a one-line event is lost. At the very start it is the
  legal BOM a spec decoder skips, and which httpx-sse, sseclient-py and aiohttp-sse-client2
  wrongly let eat the first event (docs/explanation/wire-facts/proxies.md §4).

A CRLF whose CR and LF arrive in different upstream chunks makes a block end just after the CR
(see :mod:`streamproof.protocol.sse`); the functions below therefore report when they leave a
dangling CR so the caller can drop the LF that would otherwise complete it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = [
    "BOM",
    "CrOnly",
    "corrupt_event",
    "drop_blank_line",
    "insert_bom",
    "split_pieces",
    "truncate_json",
]

BOM: Final = "\ufeff".encode()


def split_pieces(data: bytes, pieces: int) -> list[bytes]:
    """``data`` cut into ``pieces`` non-empty parts of near-equal size (fewer if it is short)."""
    if not data:
        return []
    count = max(1, min(pieces, len(data)))
    size, extra = divmod(len(data), count)
    out: list[bytes] = []
    pos = 0
    for i in range(count):
        step = size + (1 if i < extra else 0)
        out.append(data[pos : pos + step])
        pos += step
    return out


def drop_blank_line(block: bytes) -> tuple[bytes, bool]:
    """Remove the final line terminator of an event block (its blank line).

    Returns the shortened block and whether the removed terminator was a lone CR: then an LF
    arriving next would be the second half of a split CRLF, and the caller must drop it too.
    """
    if block.endswith(b"\r\n"):
        return block[:-2], False
    if block.endswith(b"\n"):
        return block[:-1], False
    if block.endswith(b"\r"):
        return block[:-1], True
    return block, False


def _is_data_line(content: bytes) -> bool:
    return content == b"data" or content.startswith(b"data:")


def truncate_json(block: bytes) -> bytes:
    """Cut the value of the block's last ``data`` line in half, keeping every line end."""
    lines = block.splitlines(keepends=True)  # bytes.splitlines: exactly CRLF, LF, CR
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        content = line.rstrip(b"\r\n")
        if not _is_data_line(content):
            continue
        ending = line[len(content) :]
        prefix_len = 6 if content.startswith(b"data: ") else 5
        prefix, value = content[:prefix_len], content[prefix_len:]
        cut = len(value) // 2
        while 0 < cut < len(value) and value[cut] & 0xC0 == 0x80:
            cut -= 1  # never split a UTF-8 sequence: the data stays valid text, invalid JSON
        lines[i] = prefix + value[:cut] + ending
        return b"".join(lines)
    return block


def insert_bom(block: bytes, after_cr: bool) -> bytes:
    """Put a BOM in front of ``block``; after the LF that completes a split CRLF, if any."""
    if after_cr and block.startswith(b"\n"):
        return b"\n" + BOM + block[1:]
    return BOM + block


def corrupt_event(block: bytes, kinds: Sequence[str], after_cr: bool) -> tuple[bytes, bool]:
    """A whole held event with the corruptions ``kinds`` applied in order; and whether it now
    ends in a CR whose LF (still to come) must be dropped. ``after_cr``: the event's bytes start
    with the LF of a CRLF split from the previous block, and a BOM must go after it."""
    dangling_cr = False
    for kind in kinds:
        if kind == "drop_blank_line":
            block, dangling_cr = drop_blank_line(block)
        elif kind == "truncate_json":
            block = truncate_json(block)
        elif kind == "bom":
            block = insert_bom(block, after_cr)
    return block, dangling_cr


class CrOnly:
    """Stateful rewrite of every line end (CRLF, LF, CR) to a lone CR, across chunks."""

    __slots__ = ("_after_cr",)

    def __init__(self, after_cr: bool = False) -> None:
        self._after_cr = after_cr
        """The previous byte was a CR: an LF now is the second half of that CRLF."""

    def feed(self, data: bytes) -> bytes:
        if not data:
            return data
        if self._after_cr and data[0] == 0x0A:
            data = data[1:]
            if not data:
                self._after_cr = False
                return data
        self._after_cr = data[-1] == 0x0D
        return data.replace(b"\r\n", b"\r").replace(b"\n", b"\r")
