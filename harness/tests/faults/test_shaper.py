"""The sans-IO shaper, driven by a fake clock: exact cut points, pacing, swallowing, timers."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamproof.core.durations import TimeScale
from streamproof.faults.plan import parse_plan
from streamproof.faults.shaper import Finish, Fired, Forwarded, Op, Shaper, Sleep, Write
from streamproof.protocol import sse


def event(n: int, end: str = "\n") -> bytes:
    return sse.encode(json.dumps({"n": n}), line_end=end)


TEN = b"".join(event(n) for n in range(1, 11))


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class _Stop(Exception):
    pass


@dataclass
class Driver:
    """Performs the shaper's operations the way the proxy does, on a fake clock."""

    shaper: Shaper
    clock: Clock
    writes: list[tuple[float, bytes]] = field(default_factory=list)
    records: list[Forwarded] = field(default_factory=list)
    fired: list[Fired] = field(default_factory=list)
    finished: Finish | None = None

    @property
    def body(self) -> bytes:
        return b"".join(data for _, data in self.writes)

    def run(self, ops: Iterable[Op]) -> None:
        for op in ops:
            if isinstance(op, Write):
                self.writes.append((self.clock.t, op.data))
                self.shaper.forwarded()
            elif isinstance(op, Sleep):
                self.sleep(op.seconds)
            elif isinstance(op, Forwarded):
                self.records.append(op)
            elif isinstance(op, Fired):
                self.fired.append(op)
            else:
                self.finished = op
                raise _Stop

    def sleep(self, seconds: float) -> None:
        end = self.clock.t + seconds
        while self.shaper.finished is None:
            deadline = self.shaper.next_deadline()
            if deadline is None or deadline >= end:
                self.clock.t = end
                return
            self.clock.t = max(self.clock.t, deadline)
            self.run(self.shaper.on_timer())

    def step(self, *steps: bytes | float | None) -> Driver:
        """Chunks (bytes), waits (seconds, with timers) and ``None`` for the upstream end."""
        try:
            for s in steps:
                if isinstance(s, bytes):
                    self.run(self.shaper.feed(s))
                elif s is None:
                    self.run(self.shaper.eof())
                else:
                    self.sleep(s)
        except _Stop:
            pass
        return self


def shaper_for(*faults: dict[str, Any], sse: bool = True, scale: float = 1.0) -> Driver:
    clock = Clock()
    plan = parse_plan(list(faults))
    shaper = Shaper(list(enumerate(plan)), sse=sse, scale=TimeScale(scale), clock=clock)
    driver = Driver(shaper, clock)
    try:
        driver.run(shaper.start())
    except _Stop:
        pass
    return driver


def datas(body: bytes) -> list[Any]:
    return [json.loads(e.data) for e in sse.decode(body)]


def test_no_fault_forwards_each_chunk_unchanged_in_one_write() -> None:
    chunks = [TEN[:7], TEN[7:40], TEN[40:]]
    d = shaper_for().step(*chunks, None)
    assert [w for _, w in d.writes] == chunks
    assert [r.event_index for r in d.records] == list(range(1, 11))
    assert d.shaper.events == 10 and d.shaper.offset == len(TEN)


def test_after_event_cuts_exactly_after_the_nth_event_inside_one_chunk() -> None:
    d = shaper_for({"when": {"after_event": 3}, "do": "rst"}).step(TEN)
    assert d.body == event(1) + event(2) + event(3)
    assert d.finished == Finish("rst", 0)
    assert [r.event_index for r in d.records] == [1, 2, 3]


@given(st.lists(st.integers(min_value=1, max_value=len(TEN) * 2 - 1), max_size=8))
def test_after_event_cut_is_independent_of_chunking(cuts: list[int]) -> None:
    stream = TEN.replace(b"\n", b"\r\n")
    bounds = [0, *sorted(set(cuts)), len(stream)]
    chunks = [stream[a:b] for a, b in itertools.pairwise(bounds) if b > a]
    d = shaper_for({"when": {"after_event": 4}, "do": "fin"}).step(*chunks)
    assert d.finished is not None
    assert datas(d.body) == [{"n": n} for n in range(1, 5)]
    # The cut is at the block end: at most the LF of a CRLF split across chunks is missing.
    assert stream.startswith(d.body)
    assert len(stream[: stream.index(b"\r\n\r\n", len(d.body) - 4) + 4]) - len(d.body) in (0, 1)


def test_comments_are_forwarded_but_not_counted() -> None:
    stream = event(1) + b": ping\n\n" + event(2) + b": a\n: b\n\n" + event(3)
    d = shaper_for({"when": {"after_event": 2}, "do": "end_clean"}).step(stream)
    assert d.body == event(1) + b": ping\n\n" + event(2)
    assert [(r.kind, r.detail) for r in d.records] == [
        ("event", "message"),
        ("comment", " ping"),
        ("event", "message"),
    ]


def test_after_bytes_cuts_at_the_byte() -> None:
    d = shaper_for({"when": {"after_bytes": 25}, "do": "fin"}).step(TEN[:10], TEN[10:])
    assert d.body == TEN[:25]
    d = shaper_for({"when": {"after_bytes": 0}, "do": "fin"})
    assert d.finished == Finish("fin", 0) and d.body == b""


def test_after_bytes_on_a_plain_body() -> None:
    d = shaper_for({"when": {"after_bytes": 1000}, "do": "rst"}, sse=False)
    d.step(b"x" * 600, b"y" * 600)
    assert d.body == b"x" * 600 + b"y" * 400 and d.finished is not None


def test_after_fires_with_no_upstream_data_and_is_scaled() -> None:
    d = shaper_for({"when": {"after": "10s"}, "do": "fin"}, scale=0.1)
    assert d.shaper.next_deadline() == pytest.approx(1.0)
    d.step(0.5)
    assert d.finished is None
    d.step(event(1), 0.6)
    assert d.finished == Finish("fin", 0)
    assert d.clock.t == pytest.approx(1.0)
    assert d.body == event(1)


def test_idle_is_rearmed_by_every_write() -> None:
    d = shaper_for({"when": {"idle": "100ms"}, "do": "end_clean"})
    for n in range(1, 6):
        d.step(0.08, event(n))
    assert d.finished is None
    d.step(0.5)
    assert d.finished == Finish("clean", 0)
    assert d.clock.t == pytest.approx(0.4 + 0.1)
    assert len(datas(d.body)) == 5


def test_stall_swallows_everything_and_holds_at_the_end() -> None:
    d = shaper_for({"when": {"after_event": 2}, "do": "stall"})
    d.step(TEN[:30], TEN[30:], b": ping\n\n", None)
    assert datas(d.body) == [{"n": 1}, {"n": 2}]
    assert d.shaper.stalled and d.finished is None
    assert d.shaper.swallowed_events == 8
    assert d.shaper.next_deadline() is None  # stalled forever


def test_stall_then_idle_cut_like_a_load_balancer() -> None:
    d = shaper_for(
        {"when": {"after_event": 2}, "do": "stall"},
        {"when": {"idle": "20s"}, "do": "fin"},
        scale=0.01,
    )
    d.step(event(1), 0.05, event(2), 0.05, event(3), 0.05, event(4), 1.0)
    assert d.finished == Finish("fin", 1)
    assert d.clock.t == pytest.approx(0.05 + 0.2)
    assert len(datas(d.body)) == 2


def test_stall_for_resumes_at_the_next_block_boundary() -> None:
    d = shaper_for({"when": {"after_event": 1}, "do": {"stall": {"for": "1s"}}})
    e2, e3 = event(2), event(3)
    d.step(event(1), 0.5, e2, e3[:4], 0.6)  # the stall ends while event 3 is half-way in
    assert d.shaper.stalled and d.shaper.swallowed_events == 1
    d.step(e3[4:], event(4), None)
    assert datas(d.body) == [{"n": 1}, {"n": 4}]  # 2 and 3 lost, 4 intact
    assert d.shaper.swallowed_events == 2


def test_drip_waits_before_each_event_and_holds_partial_ones() -> None:
    d = shaper_for({"do": {"drip": "100ms"}})
    d.step(TEN[:20], TEN[20:])  # all ten at t=0
    assert [round(t, 3) for t, _ in d.writes] == [round(0.1 * n, 3) for n in range(1, 11)]
    assert [w for _, w in d.writes] == [event(n) for n in range(1, 11)]


def test_drip_on_a_plain_body_paces_chunks() -> None:
    d = shaper_for({"do": {"drip": "50ms"}}, sse=False).step(b"a", b"b", b"c", None)
    assert [(round(t, 3), w) for t, w in d.writes] == [(0.05, b"a"), (0.1, b"b"), (0.15, b"c")]


def test_a_timer_during_a_drip_takes_effect_on_the_next_event() -> None:
    d = shaper_for({"do": {"drip": "100ms"}}, {"when": {"after": "250ms"}, "do": "stall"})
    d.step(TEN)
    assert datas(d.body) == [{"n": 1}, {"n": 2}]
    assert d.shaper.stalled


def test_split_writes_each_event_in_pieces_with_gaps() -> None:
    d = shaper_for({"do": {"split": {"pieces": 3, "gap": "5ms"}}}).step(event(1) + event(2))
    assert len(d.writes) == 6
    assert d.body == event(1) + event(2)
    assert [round(t, 3) for t, _ in d.writes] == [0, 0.005, 0.01, 0.01, 0.015, 0.02]


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_corrupt_drop_blank_line_merges_the_next_two_events(end: str) -> None:
    stream = b"".join(event(n, end) for n in range(1, 6))
    d = shaper_for({"when": {"after_event": 2}, "do": {"corrupt": "drop_blank_line"}})
    d.step(stream[:33], stream[33:], None)
    events = sse.decode(d.body)
    assert [e.data for e in events] == ['{"n": 1}', '{"n": 2}', '{"n": 3}\n{"n": 4}', '{"n": 5}']


def test_drop_blank_line_with_a_crlf_split_across_chunks() -> None:
    e1, e2, e3 = event(1, "\r\n"), event(2, "\r\n"), event(3, "\r\n")
    d = shaper_for({"do": {"corrupt": "drop_blank_line"}})
    d.step(e1[:-1], e1[-1:] + e2 + e3, None)  # e1's final LF arrives with the next chunk
    assert [e.data for e in sse.decode(d.body)] == ['{"n": 1}\n{"n": 2}', '{"n": 3}']


def test_corrupt_fired_mid_event_applies_to_the_next_one() -> None:
    d = shaper_for({"when": {"after_bytes": 3}, "do": {"corrupt": "truncate_json"}})
    d.step(TEN[:30], TEN[30:], None)
    events = sse.decode(d.body)
    assert events[0].data == '{"n": 1}' and events[1].data == '{"n"'
    assert events[2].data == '{"n": 3}'


def test_corrupt_bom_loses_the_next_event_mid_stream_only() -> None:
    mid = shaper_for({"when": {"after_event": 2}, "do": {"corrupt": "bom"}}).step(TEN, None)
    assert [x["n"] for x in datas(mid.body)] == [1, 2, 4, 5, 6, 7, 8, 9, 10]
    start = shaper_for({"do": {"corrupt": "bom"}}).step(TEN, None)
    assert start.body.startswith(b"\xef\xbb\xbf") and len(datas(start.body)) == 10


def test_corrupt_cr_only_from_then_on() -> None:
    d = shaper_for({"when": {"after_event": 2}, "do": {"corrupt": "cr_only"}}).step(TEN, None)
    head = event(1) + event(2)
    assert d.body.startswith(head) and b"\n" not in d.body[len(head) :]
    assert len(datas(d.body)) == 10


def test_event_level_corruption_on_a_plain_body_is_recorded_as_not_applied() -> None:
    d = shaper_for({"do": {"corrupt": "drop_blank_line"}}, sse=False).step(TEN, None)
    assert d.body == TEN
    assert "not applied" in d.fired[0].note


def test_an_unfired_fault_is_reported() -> None:
    d = shaper_for({"when": {"after_event": 50}, "do": "rst"}).step(TEN, None)
    assert d.finished is None and d.shaper.unfired == [0]


@pytest.mark.parametrize(
    "do", ["stall", {"drip": "10ms"}, {"split": {"pieces": 3, "gap": "1ms"}}], ids=str
)
def test_a_delegated_action_fires_at_its_point_but_leaves_the_bytes_alone(do: Any) -> None:
    """An engine that stalls, drips or splits on its own wire (toxiproxy) still learns from the
    shaper exactly where the fault fires, and gets every byte unchanged and unpaced."""
    clock = Clock()
    plan = parse_plan([{"when": {"after_event": 2}, "do": do}])
    shaper = Shaper(
        list(enumerate(plan)),
        sse=True,
        scale=TimeScale(1),
        clock=clock,
        delegated={"stall", "drip", "split"},
    )
    d = Driver(shaper, clock)
    fired_after: list[int] = []
    ops = list(shaper.feed(TEN))
    for k, op in enumerate(ops):
        if isinstance(op, Fired):
            fired_after.append(sum(len(w.data) for w in ops[:k] if isinstance(w, Write)))
    d.run(ops)
    d.run(shaper.eof())
    assert d.body == TEN and d.clock.t == 0
    assert fired_after == [len(event(1) + event(2))]
    assert [r.event_index for r in d.records] == list(range(1, 11))


# --- damaged events: what the client's decoder got, recorded per event ------------------------


def damage(d: Driver) -> dict[int, str | None]:
    """Each event record's damage, by event index (the word before the corruption's name)."""
    out: dict[int, str | None] = {}
    for r in d.records:
        if r.kind == "event":
            assert r.event_index is not None and r.event_index not in out
            out[r.event_index] = r.damage.split(" ", 1)[0] if r.damage else None
    return out


def test_without_corruption_no_event_is_damaged() -> None:
    d = shaper_for({"when": {"after_event": 3}, "do": {"drip": "10ms"}}).step(TEN, None)
    assert damage(d) == dict.fromkeys(range(1, 11))


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_drop_blank_line_damages_both_events_it_merges(end: str) -> None:
    stream = b"".join(event(n, end) for n in range(1, 6))
    d = shaper_for({"when": {"after_event": 2}, "do": {"corrupt": "drop_blank_line"}})
    d.step(stream[:33], stream[33:], None)
    assert damage(d) == {1: None, 2: None, 3: "merged", 4: "merged", 5: None}
    merged = next(r for r in d.records if r.event_index == 3)
    assert merged.damage is not None and "drop_blank_line" in merged.damage
    assert [r.event_index for r in d.records] == [1, 2, 3, 4, 5]  # one record each, in order


def test_a_dropped_blank_line_before_a_comment_damages_nothing() -> None:
    # The comment's blank line ends the event: a spec decoder dispatches it as sent, later.
    stream = event(1) + event(2) + b": ping\n\n" + event(3)
    d = shaper_for({"when": {"after_event": 1}, "do": {"corrupt": "drop_blank_line"}})
    d.step(stream, None)
    assert damage(d) == {1: None, 2: None, 3: None}
    assert [(r.kind, r.event_index) for r in d.records] == [
        ("event", 1),
        ("event", 2),
        ("comment", None),
        ("event", 3),
    ]


def test_a_dropped_blank_line_on_the_last_event_leaves_it_unfinished() -> None:
    d = shaper_for({"when": {"after_event": 9}, "do": {"corrupt": "drop_blank_line"}})
    d.step(TEN, None)
    assert damage(d)[10] == "unfinished" and damage(d)[9] is None


def test_a_cut_after_a_dropped_blank_line_leaves_the_event_unfinished() -> None:
    d = shaper_for(
        {"when": {"after_event": 1}, "do": {"corrupt": "drop_blank_line"}},
        {"when": {"after_event": 2}, "do": "rst"},
    ).step(TEN)
    assert d.finished == Finish("rst", 1)
    assert damage(d) == {1: None, 2: "unfinished"}
    assert d.records[-1].damage is not None and "ended inside it" in d.records[-1].damage


def test_truncate_json_at_the_start_damages_the_first_event() -> None:
    # The seed's first event carries the task id: a client that cannot read it never learns it.
    d = shaper_for({"when": {"after_event": 0}, "do": {"corrupt": "truncate_json"}})
    d.step(TEN, None)
    assert damage(d) == {1: "altered", **dict.fromkeys(range(2, 11))}


def test_a_corruption_fired_mid_block_damages_the_event_after_that_block() -> None:
    d = shaper_for({"when": {"after_bytes": 3}, "do": {"corrupt": "truncate_json"}})
    d.step(TEN[:30], TEN[30:], None)
    assert damage(d) == {1: None, 2: "altered", **dict.fromkeys(range(3, 11))}


def test_a_corruption_fired_inside_a_comment_hits_the_next_event() -> None:
    stream = event(1) + b": keep-alive\n\n" + event(2) + event(3)
    at = len(event(1)) + 4  # inside the comment block
    d = shaper_for({"when": {"after_bytes": at}, "do": {"corrupt": "truncate_json"}})
    d.step(stream, None)
    assert damage(d) == {1: None, 2: "altered", 3: None}
    assert [e.data for e in sse.decode(d.body)] == ['{"n": 1}', '{"n"', '{"n": 3}']


def test_a_bom_mid_stream_loses_the_event_silently_and_at_the_start_is_no_damage() -> None:
    mid = shaper_for({"when": {"after_event": 2}, "do": {"corrupt": "bom"}}).step(TEN, None)
    assert damage(mid) == {3: "lost", **{n: None for n in range(1, 11) if n != 3}}
    start = shaper_for({"do": {"corrupt": "bom"}}).step(TEN, None)
    assert damage(start) == dict.fromkeys(range(1, 11))


def test_a_bom_that_only_spoils_an_id_line_damages_nothing() -> None:
    stream = b"".join(sse.encode(json.dumps({"n": n}), id=str(n)) for n in range(1, 4))
    d = shaper_for({"when": {"after_event": 1}, "do": {"corrupt": "bom"}}).step(stream, None)
    assert damage(d) == {1: None, 2: None, 3: None}


def test_cr_only_damages_nothing() -> None:
    d = shaper_for({"when": {"after_event": 2}, "do": {"corrupt": "cr_only"}}).step(TEN, None)
    assert damage(d) == dict.fromkeys(range(1, 11))


@given(
    kind=st.sampled_from(["drop_blank_line", "truncate_json", "bom", "cr_only"]),
    after=st.integers(0, 10),
    end=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=1, max_value=200), max_size=6),
)
def test_the_damage_records_agree_with_a_spec_decoder(
    kind: str, after: int, end: str, cuts: list[int]
) -> None:
    stream = b"".join(event(n, end) for n in range(1, 11))
    bounds = [0, *sorted({c for c in cuts if c < len(stream)}), len(stream)]
    chunks = [stream[a:b] for a, b in itertools.pairwise(bounds) if b > a]
    d = shaper_for({"when": {"after_event": after}, "do": {"corrupt": kind}}).step(*chunks, None)
    got = damage(d)
    assert sorted(got) == list(range(1, 11))  # every event recorded once
    # The undamaged ones are exactly the events a spec decoder reads as sent, in order.
    read = [json.loads(e.data)["n"] for e in sse.decode(d.body) if _is_event_json(e.data)]
    assert read == [n for n, dmg in sorted(got.items()) if dmg is None]


def _is_event_json(data: str) -> bool:
    try:
        value = json.loads(data)
    except ValueError:
        return False
    return isinstance(value, dict) and set(value) == {"n"}
