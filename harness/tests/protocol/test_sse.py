"""Tests for streamproof.protocol.sse: one vector per spec rule, offsets, encode, and property
tests."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamproof.protocol.sse import Block, Decoder, Event, decode, encode, encode_comment

# ---------------------------------------------------------------------------------------------
# helpers


def feed_chunks(chunks: Iterable[bytes]) -> tuple[list[Event], Decoder]:
    decoder = Decoder()
    events: list[Event] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    assert decoder.close() == []
    return events, decoder


def blocks_of(chunks: Iterable[bytes]) -> tuple[list[Block], Decoder]:
    decoder = Decoder()
    blocks: list[Block] = []
    for chunk in chunks:
        blocks.extend(decoder.feed_blocks(chunk))
    decoder.close()
    return blocks, decoder


def bytewise(stream: bytes) -> list[bytes]:
    return [stream[i : i + 1] for i in range(len(stream))]


def datas(events: list[Event]) -> list[str]:
    return [e.data for e in events]


# ---------------------------------------------------------------------------------------------
# line ends


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_each_line_end_style(eol: bytes) -> None:
    stream = b"event: e" + eol + b"data: a" + eol + b"data: b" + eol + eol + b"data: c" + eol + eol
    assert decode(stream) == [Event(type="e", data="a\nb"), Event(data="c")]
    assert feed_chunks(bytewise(stream))[0] == decode(stream)


def test_mixed_line_ends() -> None:
    assert datas(decode(b"data: a\rdata: b\r\ndata: c\n\r\n")) == ["a\nb\nc"]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    # If the LF were a second line end it would be a blank line, dispatching "a" alone.
    events, _ = feed_chunks([b"data: a\r", b"\ndata: b\n\n"])
    assert datas(events) == ["a\nb"]
    # An empty chunk in between does not break the pairing.
    events, _ = feed_chunks([b"data: a\r", b"", b"\ndata: b\n\n"])
    assert datas(events) == ["a\nb"]


def test_cr_cr_is_two_line_ends_and_lf_cr_too() -> None:
    assert datas(decode(b"data: a\r\rdata: b\n\r")) == ["a", "b"]
    events, _ = feed_chunks([b"data: a\r", b"\r", b"\n", b"data: b\n", b"\r"])
    assert datas(events) == ["a", "b"]


def test_cr_inside_chunk_followed_by_partial_line_does_not_swallow_next_lf() -> None:
    # Regression (found by the chunking property): a CR mid-chunk is not a pending CRLF half.
    events, decoder = feed_chunks([b"data: a\r:c", b"\ndata: b\n\n"])
    assert datas(events) == ["a\nb"]
    assert decoder.comments == 1
    _, decoder = feed_chunks([b"data: a\r:c", b"\n"])
    assert decoder.discarded


def test_cr_dispatches_without_waiting_for_next_byte() -> None:
    decoder = Decoder()
    assert datas(decoder.feed(b"data: x\r\r")) == ["x"]


# ---------------------------------------------------------------------------------------------
# BOM


def test_leading_bom_ignored() -> None:
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == [Event(data="x")]


def test_leading_bom_split_across_chunks() -> None:
    events, decoder = feed_chunks([b"\xef", b"\xbb", b"\xbfdata: x\n\n"])
    assert datas(events) == ["x"]
    assert decoder.bytes_seen == 12


def test_only_one_bom_is_stripped() -> None:
    # The second BOM makes the field name "\ufeffdata": an unknown field, ignored.
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n") == []


def test_bom_not_at_start_is_data() -> None:
    assert decode(b"data: x\n\n\xef\xbb\xbfdata: y\n\n") == [Event(data="x")]
    assert decode(b"data: \xef\xbb\xbfy\n\n") == [Event(data="\ufeffy")]


def test_bom_prefix_that_is_not_a_bom() -> None:
    assert decode(b"\xef\xbbdata: x\n\n") == []  # field "\ufffddata" is unknown
    assert feed_chunks([b"\xef", b"\n", b"data: x\n\n"])[0] == [Event(data="x")]
    _, decoder = feed_chunks([b"\xef\xbb"])
    assert decoder.discarded  # an unterminated partial line


# ---------------------------------------------------------------------------------------------
# line parsing


def test_comments_recorded_not_dispatched() -> None:
    stream = b":hello\n: ping\n\n:x\ndata: a\n\n"
    blocks, decoder = blocks_of([stream])
    assert blocks == [
        Block(end=15, event=None, comments=("hello", " ping")),
        Block(end=len(stream), event=Event(data="a"), comments=("x",)),
    ]
    assert decoder.comments == 3
    assert decode(b":\n\n") == []


def test_multi_line_data() -> None:
    assert datas(decode(b"data: a\ndata:\ndata: c\n\n")) == ["a\n\nc"]


def test_exactly_one_leading_space_stripped() -> None:
    assert datas(decode(b"data:x\n\n")) == ["x"]
    assert datas(decode(b"data: x\n\n")) == ["x"]
    assert datas(decode(b"data:  x\n\n")) == [" x"]
    assert datas(decode(b"data:\tx\n\n")) == ["\tx"]
    assert datas(decode(b"data: x \n\n")) == ["x "]
    assert decode(b"event:  e\ndata\n\n")[0].type == " e"


def test_value_split_on_first_colon_only() -> None:
    assert datas(decode(b"data: a:b: c\n\n")) == ["a:b: c"]


def test_field_without_colon_has_empty_value() -> None:
    assert decode(b"data\n\n") == [Event(data="")]
    assert datas(decode(b"data\ndata\n\n")) == ["\n"]
    assert decode(b"event\ndata: x\n\n") == [Event(type="message", data="x")]


def test_data_with_no_value_dispatches_empty_string() -> None:
    assert decode(b"data:\n\n") == [Event(data="")]
    assert decode(b"data: \n\n") == [Event(data="")]


def test_field_names_are_case_sensitive_and_not_trimmed() -> None:
    assert decode(b"Data: x\n\n") == []
    assert decode(b" data: x\n\n") == []
    assert decode(b"data : x\n\n") == []


def test_unknown_field_ignored() -> None:
    assert decode(b"foo: bar\ndata: x\nbaz\n\n") == [Event(data="x")]


# ---------------------------------------------------------------------------------------------
# fields and dispatch


def test_retry_only_block_dispatches_nothing() -> None:
    blocks, decoder = blocks_of([b"retry: 1500\n\n"])
    assert blocks == [Block(end=13, event=None, comments=())]
    assert decoder.retry == 1500


def test_event_only_block_dispatches_nothing_and_type_does_not_leak() -> None:
    assert decode(b"event: e\n\ndata: x\n\n") == [Event(type="message", data="x")]


def test_id_only_block_dispatches_nothing_but_sets_last_event_id() -> None:
    decoder = Decoder()
    assert decoder.feed_blocks(b"id: 7\n\n") == [Block(end=7, event=None, comments=())]
    assert decoder.last_event_id == "7"
    assert decoder.feed(b"data: x\n\n") == [Event(data="x", id="7", id_line=False)]


def test_id_with_nul_ignored() -> None:
    events, decoder = feed_chunks([b"id: 1\n\nid: a\x00b\ndata: x\n\n"])
    assert events == [Event(data="x", id="1", id_line=False)]
    assert decoder.last_event_id == "1"


def test_id_persists_across_events_and_empty_id_resets() -> None:
    events = decode(b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\ndata: d\n\n")
    assert events == [
        Event(data="a", id="1", id_line=True),
        Event(data="b", id="1", id_line=False),
        Event(data="c", id="", id_line=True),
        Event(data="d", id="2", id_line=True),
    ]


def test_id_in_unterminated_block_does_not_become_last_event_id() -> None:
    _, decoder = feed_chunks([b"id: 1\ndata: a\n\nid: 2\ndata: b\n"])
    assert decoder.last_event_id == "1"
    assert decoder.discarded


def test_id_value_keeps_spaces_and_is_not_trimmed() -> None:
    assert decode(b"id:  x \ndata\n\n")[0].id == " x "


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"retry: 1000", 1000),
        (b"retry:0", 0),
        (b"retry: 007", 7),
        (b"retry: 1a", None),
        (b"retry: -1", None),
        (b"retry: 1.5", None),
        (b"retry:  5", None),  # the second space is part of the value
        (b"retry: 5 ", None),
        (b"retry:", None),
        (b"retry", None),
        ("retry: \uff15".encode(), None),  # FULLWIDTH DIGIT FIVE: not ASCII
        ("retry: \u00b2".encode(), None),  # SUPERSCRIPT TWO
    ],
)
def test_retry_only_ascii_digits(line: bytes, expected: int | None) -> None:
    decoder = Decoder()
    events = decoder.feed(line + b"\ndata: x\n\n")
    assert decoder.retry == expected
    assert events == [Event(data="x", retry=expected)]


def test_invalid_retry_keeps_previous_value() -> None:
    _, decoder = feed_chunks([b"retry: 10\n\nretry: x\n\n"])
    assert decoder.retry == 10


def test_retry_applies_immediately_even_if_block_discarded() -> None:
    _, decoder = feed_chunks([b"retry: 99\n"])
    assert decoder.retry == 99
    assert decoder.discarded


def test_event_type_reset_after_dispatch() -> None:
    events = decode(
        b"event: a\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\nevent: b\nevent: c\ndata\n\n"
    )
    assert [(e.type, e.data) for e in events] == [
        ("a", "1"),
        ("message", "2"),
        ("message", "3"),
        ("c", ""),
    ]


def test_event_retry_is_block_local() -> None:
    events = decode(b"retry: 5\ndata: a\n\ndata: b\n\n")
    assert [e.retry for e in events] == [5, None]


# ---------------------------------------------------------------------------------------------
# end of stream


def test_incomplete_event_at_eof_discarded() -> None:
    events, decoder = feed_chunks([b"data: a\n\ndata: b\n"])
    assert datas(events) == ["a"]
    assert decoder.discarded


def test_partial_line_at_eof_discarded() -> None:
    events, decoder = feed_chunks([b"data: a\n\ndata: b"])
    assert datas(events) == ["a"]
    assert decoder.discarded


def test_clean_end_not_discarded() -> None:
    _, decoder = feed_chunks([b"data: a\n\n"])
    assert not decoder.discarded
    _, decoder = feed_chunks([b""])
    assert not decoder.discarded
    # Trailing complete comment lines carry nothing to discard.
    _, decoder = feed_chunks([b"data: a\n\n: bye\n"])
    assert not decoder.discarded
    # An unterminated comment line is a partial line.
    _, decoder = feed_chunks([b"data: a\n\n: bye"])
    assert decoder.discarded


def test_close_is_idempotent_and_feed_after_close_fails() -> None:
    decoder = Decoder()
    decoder.feed(b"data: a")
    assert decoder.close() == []
    assert decoder.close() == []
    assert decoder.discarded
    with pytest.raises(RuntimeError):
        decoder.feed(b"\n\n")


# ---------------------------------------------------------------------------------------------
# UTF-8


def test_utf8_multibyte_split_at_every_point() -> None:
    stream = "data: é€😀\n\n".encode()
    for cut in range(len(stream) + 1):
        events, _ = feed_chunks([stream[:cut], stream[cut:]])
        assert datas(events) == ["é€😀"], cut
    assert datas(feed_chunks(bytewise(stream))[0]) == ["é€😀"]


def test_invalid_utf8_replaced() -> None:
    assert datas(decode(b"data: a\xffb\n\n")) == ["a\ufffdb"]
    # Truncated sequence before a line end: one U+FFFD, and the line end still counts.
    assert datas(decode(b"data: \xe2\x82\ndata: \xf0\x9f\x98\r\n\r\n")) == ["\ufffd\n\ufffd"]
    # Surrogate encodings are invalid: one U+FFFD per byte (maximal subparts).
    assert datas(decode(b"data: \xed\xa0\x80\n\n")) == ["\ufffd\ufffd\ufffd"]
    assert datas(feed_chunks(bytewise(b"data: \xe2\x82x\xe2\x82\xac\n\n"))[0]) == ["\ufffdx€"]


def test_nul_in_data_is_data() -> None:
    assert datas(decode(b"data: a\x00b\n\n")) == ["a\x00b"]


# ---------------------------------------------------------------------------------------------
# feed_blocks offsets


OFFSET_STREAM = (
    b"\xef\xbb\xbf"  # BOM: offsets count it
    b": hi\n"
    b"id: 1\r\ndata: a\r\n\r\n"
    b"data: b\rretry: 5\r\r"
    b"event: x\ndata: c\ndata: d\n\n"
    b"\n"  # a bare blank line is a block with nothing dispatched
    b"data: \xc3\xa9\r\n\n"
)


def check_offsets(stream: bytes, blocks: list[Block]) -> None:
    prev = 0
    decoder = Decoder()
    for block in blocks:
        piece = stream[prev : block.end]
        assert stream[: block.end] == stream[:prev] + piece
        # Decoding the slices in sequence reproduces each block exactly...
        assert decoder.feed_blocks(piece)[-1:] == [block]
        # ...and each slice alone re-decodes to the same event (up to the persistent id). A
        # slice from mid-stream gets a BOM prepended, so that a BOM of its own stays data.
        alone = decode(piece if prev == 0 else b"\xef\xbb\xbf" + piece)
        if block.event is None:
            assert alone == []
        else:
            assert len(alone) == 1
            assert (alone[0].type, alone[0].data, alone[0].retry) == (
                block.event.type,
                block.event.data,
                block.event.retry,
            )
        prev = block.end


def test_feed_blocks_offsets_whole() -> None:
    blocks, decoder = blocks_of([OFFSET_STREAM])
    ends = [b.end for b in blocks]
    assert [OFFSET_STREAM[e - 2 : e] for e in ends] == [b"\r\n", b"\r\r", b"\n\n", b"\n\n", b"\n\n"]
    assert [b.event.data if b.event else None for b in blocks] == ["a", "b", "c\nd", None, "é"]
    assert blocks[0].comments == (" hi",)
    assert blocks[0].event == Event(data="a", id="1", id_line=True)
    assert blocks[1].event == Event(data="b", id="1", retry=5)
    assert ends[-1] == len(OFFSET_STREAM)
    assert decoder.bytes_seen == len(OFFSET_STREAM)
    check_offsets(OFFSET_STREAM, blocks)


def assert_same_blocks(stream: bytes, got: list[Block], want: list[Block]) -> None:
    """Blocks from a re-chunked stream equal those from the whole stream, except that a blank
    line's CRLF split across chunks ends the block after its CR."""
    assert [(b.event, b.comments) for b in got] == [(b.event, b.comments) for b in want]
    for g, w in zip(got, want, strict=True):
        assert g.end == w.end or (g.end == w.end - 1 and stream[g.end - 1 : w.end] == b"\r\n")


def test_feed_blocks_offsets_any_chunking() -> None:
    whole, _ = blocks_of([OFFSET_STREAM])
    # No CRLF blank line is split here, so the blocks are identical.
    blocks, _ = blocks_of([OFFSET_STREAM[:1], OFFSET_STREAM[1:20], OFFSET_STREAM[20:]])
    assert blocks == whole
    check_offsets(OFFSET_STREAM, blocks)
    # Byte at a time splits the first block's CRLF blank line: that block ends after the CR.
    blocks, _ = blocks_of(bytewise(OFFSET_STREAM))
    assert [b.end for b in blocks] == [whole[0].end - 1] + [b.end for b in whole[1:]]
    assert_same_blocks(OFFSET_STREAM, blocks, whole)
    check_offsets(OFFSET_STREAM, blocks)


def test_feed_blocks_bom_at_block_boundary_is_data() -> None:
    stream = b"data: a\n\n\xef\xbb\xbfdata: b\n\n\xef\xbb\xbf\n"
    blocks, _ = blocks_of([stream])
    assert blocks == [
        Block(end=9, event=Event(data="a"), comments=()),
        Block(end=21, event=None, comments=()),  # field "\ufeffdata" is unknown
    ]
    check_offsets(stream, blocks)
    # The trailing line is the unknown field "\ufeff", left unterminated by a blank line.
    assert blocks_of([stream])[1].discarded


def test_feed_blocks_split_crlf_blank_line_ends_after_cr() -> None:
    stream = b"data: a\r\n\r\ndata: b\r\n\r\n"
    decoder = Decoder()
    first = decoder.feed_blocks(stream[:10])  # ends with the blank line's CR
    assert first == [Block(end=10, event=Event(data="a"), comments=())]
    # The LF completes that CRLF: it is skipped, counted in bytes_seen, and not a blank line.
    second = decoder.feed_blocks(stream[10:])
    assert second == [Block(end=len(stream), event=Event(data="b"), comments=())]
    assert decoder.bytes_seen == len(stream)
    # Unsplit, the same block ends after the LF.
    assert blocks_of([stream])[0][0].end == 11
    check_offsets(stream, first + second)


def test_feed_blocks_offsets_with_pending_partial_lines() -> None:
    decoder = Decoder()
    assert decoder.feed_blocks(b"data: a") == []
    assert decoder.feed_blocks(b"bc") == []
    assert decoder.feed_blocks(b"\n") == []
    assert decoder.feed_blocks(b"\ndata: z\n\n") == [
        Block(end=11, event=Event(data="abc"), comments=()),
        Block(end=20, event=Event(data="z"), comments=()),
    ]


def test_feed_and_feed_blocks_agree() -> None:
    blocks, _ = blocks_of([OFFSET_STREAM])
    assert decode(OFFSET_STREAM) == [b.event for b in blocks if b.event is not None]


# ---------------------------------------------------------------------------------------------
# encode


def test_encode_format() -> None:
    assert encode("hi") == b"data: hi\n\n"
    assert encode("a\nb", event="e", id="7", retry=100) == (
        b"id: 7\nevent: e\nretry: 100\ndata: a\ndata: b\n\n"
    )
    assert encode("", line_end="\r\n") == b"data: \r\n\r\n"
    assert encode("x", line_end="\r") == b"data: x\r\r"
    assert encode("a\r\nb\rc\n") == b"data: a\ndata: b\ndata: c\ndata: \n\n"
    assert encode("é") == "data: é\n\n".encode()
    # Only CR/LF split data lines; other Unicode line breaks are plain data.
    assert encode("a\u2028b\x0bc") == "data: a\u2028b\x0bc\n\n".encode()


def test_encode_comment() -> None:
    assert encode_comment() == b":\n"
    assert encode_comment(" ping", line_end="\r\n") == b": ping\r\n"
    blocks, decoder = blocks_of([encode_comment("hb") + encode("x")])
    assert blocks[0].comments == ("hb",)
    assert decoder.comments == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"event": "a\nb"},
        {"event": "a\rb"},
        {"id": "a\nb"},
        {"id": "a\r"},
        {"id": "a\x00b"},
        {"retry": -1},
        {"retry": True},
        {"line_end": "\n\n"},
        {"line_end": ""},
        {"line_end": "\x85"},
    ],
)
def test_encode_rejects(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        encode("x", **kwargs)


@pytest.mark.parametrize("text", ["a\nb", "\r", "x\r\n"])
def test_encode_comment_rejects_line_breaks(text: str) -> None:
    with pytest.raises(ValueError):
        encode_comment(text)


def test_encode_comment_rejects_bad_line_end() -> None:
    with pytest.raises(ValueError):
        encode_comment("x", line_end="\n\r")


def test_encode_decode_round_trip_examples() -> None:
    cases = ["", " leading", "  two", "a\n\nb", "\n", "trailing\n", "é😀", ":colon", "x\x00y"]
    for data in cases:
        for eol in ("\n", "\r\n", "\r"):
            assert decode(encode(data, line_end=eol)) == [Event(data=data.replace("\r", ""))]
    assert decode(encode("x", event=" e", id=" 1 ")) == [
        Event(type=" e", data="x", id=" 1 ", id_line=True)
    ]
    assert decode(encode("x", event="", id="")) == [Event(data="x", id_line=True)]


# ---------------------------------------------------------------------------------------------
# a literal, character-at-a-time transcription of the spec, as a differential oracle


def reference_decode(stream: bytes) -> tuple[list[Event], str, int | None, bool]:
    text = stream.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\r" or char == "\n":
            lines.append("".join(current))
            current = []
            if char == "\r" and text[i + 1 : i + 2] == "\n":
                i += 1
        else:
            current.append(char)
        i += 1
    events: list[Event] = []
    data = event_type = id_buffer = last_id = ""
    retry: int | None = None
    block_retry: int | None = None
    id_line = in_block = False
    for line in lines:
        if line == "":
            last_id = id_buffer
            if data == "":
                event_type = ""
            else:
                if data.endswith("\n"):
                    data = data[:-1]
                events.append(Event(event_type or "message", data, last_id, id_line, block_retry))
                data = event_type = ""
            id_line = in_block = False
            block_retry = None
            continue
        if line.startswith(":"):
            continue
        in_block = True
        if ":" in line:
            field, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            field, value = line, ""
        if field == "event":
            event_type = value
        elif field == "data":
            data += value + "\n"
        elif field == "id":
            if "\x00" not in value:
                id_buffer = value
                id_line = True
        elif field == "retry":
            if value and all(c in "0123456789" for c in value):
                retry = block_retry = int(value)
    return events, last_id, retry, bool(current) or in_block


# ---------------------------------------------------------------------------------------------
# property tests

_NAMES = ["data", "event", "id", "retry", "Data", "foo", "", "\ufeffdata"]
_VALUE_CHARS = st.sampled_from(list("ab1 :\x00\t\ufeffé€😀0123456789"))
_EOLS = ["\n", "\r", "\r\n"]
_RAW = [b"\xef\xbb\xbf", b"\xe2\x82", b"\xff", b"\xc3", b"\r", b"\n", b"\r\n", b"\x00"]


@st.composite
def field_line(draw: st.DrawFn) -> bytes:
    name = draw(st.sampled_from(_NAMES))
    sep = draw(st.sampled_from(["", ":", ": ", ":  "]))
    value = draw(st.text(_VALUE_CHARS, max_size=6)) if sep else ""
    return (name + sep + value).encode()


@st.composite
def sse_streams(draw: st.DrawFn) -> bytes:
    comment = st.text(_VALUE_CHARS, max_size=5).map(lambda t: (":" + t).encode())
    line = st.one_of(field_line(), comment, st.just(b""))
    piece = st.one_of(
        st.tuples(line, st.sampled_from(_EOLS)).map(lambda p: p[0] + p[1].encode()),
        st.sampled_from(_RAW),
        st.binary(max_size=4),
    )
    bom = draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf", b"\xef\xbb"]))
    return bom + b"".join(draw(st.lists(piece, max_size=25)))


def split_at(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    return [stream[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=300, deadline=None)
@given(stream=sse_streams(), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_property_chunking_invariance(stream: bytes, cuts: list[int]) -> None:
    whole_blocks, whole = blocks_of([stream])
    for chunks in (split_at(stream, cuts), bytewise(stream)):
        blocks, decoder = blocks_of(chunks)
        assert_same_blocks(stream, blocks, whole_blocks)
        assert (decoder.discarded, decoder.last_event_id, decoder.retry) == (
            whole.discarded,
            whole.last_event_id,
            whole.retry,
        )
        assert (decoder.comments, decoder.bytes_seen) == (whole.comments, len(stream))
        check_offsets(stream, blocks)


@settings(max_examples=300, deadline=None)
@given(stream=sse_streams())
def test_property_matches_literal_spec_transcription(stream: bytes) -> None:
    events, decoder = feed_chunks([stream])
    assert (events, decoder.last_event_id, decoder.retry, decoder.discarded) == reference_decode(
        stream
    )


_NO_SURROGATES = st.characters(exclude_categories=["Cs"])


@settings(max_examples=200, deadline=None)
@given(
    data=st.text(_NO_SURROGATES, max_size=30),
    event=st.none() | st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n")),
    id_=st.none() | st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\0")),
    retry=st.none() | st.integers(min_value=0, max_value=10**12),
    eol=st.sampled_from(_EOLS),
    cut=st.integers(min_value=0),
)
def test_property_encode_decode_round_trip(
    data: str, event: str | None, id_: str | None, retry: int | None, eol: str, cut: int
) -> None:
    wire = encode(data, event=event, id=id_, retry=retry, line_end=eol)
    # CRLF and lone CR in data come back as LF: SSE data lines are joined with LF.
    expected = Event(
        type=event or "message",
        data=data.replace("\r\n", "\n").replace("\r", "\n"),
        id=id_ or "",
        id_line=id_ is not None,
        retry=retry,
    )
    assert decode(wire) == [expected]
    events, decoder = feed_chunks(split_at(wire, [cut]))
    assert events == [expected]
    assert not decoder.discarded
    # Two events back to back, with a heartbeat between, also round-trip.
    assert decode(wire + encode_comment("hb", eol) + wire) == [expected, expected]


def test_a_decoder_begun_mid_stream_keeps_a_bom_as_data_and_skips_a_pending_lf() -> None:
    bom_event = b"\xef\xbb\xbfdata: x\n\ndata: y\n\n"
    assert [e.data for e in Decoder().feed(bom_event)] == ["x", "y"]  # the stream's own BOM
    assert [e.data for e in Decoder(mid_stream=True).feed(bom_event)] == ["y"]  # "\ufeffdata"
    blocks = Decoder(mid_stream=True, after_cr=True).feed_blocks(b"\ndata: z\n\n")
    assert [b.event.data for b in blocks if b.event] == ["z"] and len(blocks) == 1
    assert len(Decoder(mid_stream=True).feed_blocks(b"\ndata: z\n\n")) == 2  # an empty block
