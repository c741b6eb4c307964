"""The byte transformations of ``split`` and ``corrupt``, judged by the strict SSE decoder."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamproof.faults.actions import (
    BOM,
    CrOnly,
    drop_blank_line,
    insert_bom,
    split_pieces,
    truncate_json,
)
from streamproof.protocol import sse

EVENTS = b"".join(sse.encode(json.dumps({"n": i})) for i in range(1, 6))


@given(st.binary(max_size=200), st.integers(min_value=1, max_value=50))
def test_split_pieces_reassemble(data: bytes, pieces: int) -> None:
    parts = split_pieces(data, pieces)
    assert b"".join(parts) == data
    assert all(parts)
    assert len(parts) == min(pieces, len(data))
    if parts:
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_drop_blank_line_merges_with_the_next_event(end: bytes) -> None:
    first = b"data: a" + end + end
    second = b"data: b" + end + end
    cut, dangling_cr = drop_blank_line(first)
    assert cut == b"data: a" + end
    assert dangling_cr == (end == b"\r")
    assert [e.data for e in sse.decode(cut + second)] == ["a\nb"]


def test_drop_blank_line_reports_a_cr_whose_lf_comes_later() -> None:
    # "data: a\r\n\r" + "\n": the block ends after the last CR; its LF must go too.
    cut, dangling_cr = drop_blank_line(b"data: a\r\n\r")
    assert (cut, dangling_cr) == (b"data: a\r\n", True)
    assert drop_blank_line(b"no terminator") == (b"no terminator", False)


def test_truncate_json_cuts_the_last_data_line_in_half() -> None:
    block = sse.encode('{"n": 4, "text": "hello"}', id="4", event="delta")
    cut = truncate_json(block)
    (event,) = sse.decode(cut)
    assert event.type == "delta" and event.id == "4"
    assert event.data == '{"n": 4, "te'
    with pytest.raises(ValueError):
        json.loads(event.data)


def test_truncate_json_keeps_line_ends_and_utf8() -> None:
    block = 'data: {"t": "ééééé"}\r\n\r\n'.encode()
    cut = truncate_json(block)
    assert cut.endswith(b"\r\n\r\n")
    (event,) = sse.decode(cut)
    assert "\ufffd" not in event.data  # never cut inside a character
    assert '{"t": "ééééé"}'.startswith(event.data)
    assert truncate_json(b": just a comment\n\n") == b": just a comment\n\n"
    multi = b"data: first\ndata: second line\n\n"
    assert sse.decode(truncate_json(multi))[0].data == "first\nsecon"


def test_bom_mid_stream_loses_a_one_line_event_but_not_at_the_start() -> None:
    one, two = sse.encode("1"), sse.encode("2")
    assert [e.data for e in sse.decode(one + insert_bom(two, after_cr=False))] == ["1"]
    assert [e.data for e in sse.decode(insert_bom(one, after_cr=False) + two)] == ["1", "2"]
    # With an id line first, only the id is lost (the BOM renames that field).
    with_id = sse.encode("2", id="7")
    (_, second) = sse.decode(one + insert_bom(with_id, after_cr=False))
    assert second.data == "2" and second.id == ""


def test_bom_goes_after_the_lf_of_a_split_crlf() -> None:
    assert insert_bom(b"\ndata: x\r\n\r\n", after_cr=True) == b"\n" + BOM + b"data: x\r\n\r\n"
    assert insert_bom(b"\ndata: x\n\n", after_cr=False) == BOM + b"\ndata: x\n\n"


@given(st.lists(st.integers(min_value=0, max_value=len(EVENTS)), max_size=6))
def test_cr_only_keeps_every_event_across_any_chunking(cuts: list[int]) -> None:
    stream = EVENTS.replace(b"\n", b"\r\n")
    bounds = [0, *sorted(cuts), len(stream)]
    rewriter = CrOnly()
    out = b"".join(rewriter.feed(stream[a:b]) for a, b in itertools.pairwise(bounds))
    assert b"\n" not in out
    assert sse.decode(out) == sse.decode(stream)


def test_cr_only_drops_the_lf_of_a_crlf_begun_before_it_started() -> None:
    assert CrOnly(after_cr=True).feed(b"\ndata: x\n\n") == b"data: x\r\r"
    assert CrOnly(after_cr=False).feed(b"\ndata: x\n\n") == b"\rdata: x\r\r"
    rewriter = CrOnly()
    assert rewriter.feed(b"a\r") == b"a\r"
    assert rewriter.feed(b"\n") == b""
    assert rewriter.feed(b"\nb") == b"\rb"
    assert rewriter.feed(b"") == b""
