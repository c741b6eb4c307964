"""The pure parts of ``streamproof proxy``: its live lines (long runs of events collapsed), its
summary, its inputs, its look at an agent card, and the scenario it writes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from streamproof.faults.plan import parse_plan
from streamproof.faults.records import FaultRef, LinkEvent
from streamproof.standalone.card import card_advice
from streamproof.standalone.inputs import (
    BadInput,
    Listen,
    engine_verdict,
    faults_from_texts,
    load_plan_file,
    parse_listen,
    parse_upstream,
)
from streamproof.standalone.live import PROGRESS_EVERY, SHOWN_FIRST, LiveLog, summary_line
from streamproof.standalone.skeleton import scenario_skeleton
from streamproof.suites.loading import parse_scenarios

# --- records -----------------------------------------------------------------------------------


def rec(kind: str, t: float, request: int | None = 0, **fields: Any) -> LinkEvent:
    return LinkEvent(t=t, link="proxy", connection=0, request=request, kind=kind, **fields)  # type: ignore[arg-type]


def stream(
    request: int,
    start: float,
    gaps: list[float],
    *,
    rpc: str | None = None,
    path: str = "/",
    end: tuple[str, str] = ("clean", "upstream"),
) -> list[LinkEvent]:
    """A request, its response and one event after each gap, then its end."""
    common = {"method": "POST", "path": path, "rpc": rpc}
    out = [rec("request", start, request, **common)]
    out.append(rec("response_headers", start + 0.001, request, status=200, **common))
    out.append(rec("first_byte", start + 0.001, request, status=200, **common))
    t = start + 0.001
    for i, gap in enumerate(gaps, 1):
        t += gap
        out.append(rec("event", t, request, event_index=i, detail="message", **common))
    how, by = end
    out.append(
        rec("end", t + 0.001, request, how=how, by=by, detail=f"{len(gaps)} events", **common)
    )
    return out


_KIND = re.compile(r"^\s*\S+s\s+conn \d+(?: req \d+)?\s+(\S+)")


def kinds_shown(lines: list[str]) -> list[str]:
    """The record kind of each line (``request``, ``event``, ``events``...)."""
    kinds = []
    for line in lines:
        match = _KIND.match(line)
        assert match is not None, line
        kinds.append(match[1])
    return kinds


# --- live lines --------------------------------------------------------------------------------


def test_a_20000_event_stream_takes_a_handful_of_lines() -> None:
    records = stream(0, 1.0, [0.00002] * 20_000)
    lines = LiveLog().feed(records)
    assert len(lines) <= 8, "\n".join(lines)
    assert kinds_shown(lines) == ["request", "response", *["event"] * SHOWN_FIRST, "events", "end"]
    run = lines[-2]
    assert f"#{SHOWN_FIRST + 1}-#20000 ({20_000 - SHOWN_FIRST} events in 0." in run
    assert run.lstrip().startswith("1.4")  # the time of the run's last event


def test_a_slow_stream_is_shown_event_by_event_as_it_happens() -> None:
    lines = LiveLog().feed(stream(0, 0.0, [1.0] * 8))
    assert kinds_shown(lines).count("event") == 8
    assert "events" not in kinds_shown(lines)


def test_a_run_is_printed_before_the_fault_that_ends_it() -> None:
    records = stream(0, 0.0, [0.001] * 10)
    end = records.pop()
    records.append(
        rec("fault", 0.02, detail="after_event: 10 -> rst", fault=FaultRef(index=1, action="rst"))
    )
    records.append(end)
    lines = LiveLog().feed(records)
    assert kinds_shown(lines)[-3:] == ["events", "fault", "end"]
    assert "#4-#10 (7 events in" in lines[-3]
    assert "fault    [1] after_event: 10 -> rst" in lines[-2]


def test_a_damaged_event_is_shown_on_its_own_line_with_its_damage() -> None:
    records = stream(0, 0.0, [0.001] * 10)
    records[8] = records[8].model_copy(update={"damage": "altered (truncate_json): other data"})
    lines = LiveLog().feed(records)
    damaged = [line for line in lines if "damaged" in line]
    assert len(damaged) == 1 and "#6 message (damaged: altered (truncate_json)" in damaged[0]
    assert kinds_shown(lines).count("events") == 2  # the run is broken around it


def test_a_long_run_reports_progress_and_goes_on() -> None:
    log = LiveLog()
    records = stream(0, 0.0, [0.01] * 500)[:-1]  # still going
    first, rest = records[:300], records[300:]
    assert log.tick(1.0) == []
    log.feed(first)
    progress = log.tick(first[-1].t + PROGRESS_EVERY)
    assert len(progress) == 1 and "#4-#297 (294 events" in progress[0]
    log.feed(rest)
    assert "#298-#500 (203 events" in log.flush()[0]


def test_comments_and_the_proxys_own_answer() -> None:
    log = LiveLog()
    lines = log.feed(
        [
            rec("connect", 0.1, None, detail="127.0.0.1:4000"),
            rec("request", 0.2, 0, method="GET", path="/x"),
            rec(
                "fault",
                0.2,
                0,
                detail="on_request -> status: 502",
                fault=FaultRef(index=0, action="status"),
            ),
            rec("first_byte", 0.2, 0, status=502),
            rec("end", 0.2, 0, how="clean", by="proxy", detail="status 502"),
            rec("request", 1.0, 1, method="GET", path="/sse"),
            rec("response_headers", 1.0, 1, status=200),
            rec("first_byte", 3.0, 1, status=200),
            *[rec("comment", 3.0 + i * 0.01, 1, detail="ping") for i in range(6)],
        ]
    )
    assert lines[0].endswith("conn 0        connect  from 127.0.0.1:4000")
    assert "response 502 from the proxy" in lines[3]
    assert "end      clean by proxy: status 502" in lines[4]
    assert "1st byte 2.000s after the response headers" in lines[7]
    assert kinds_shown(lines).count("comment") == SHOWN_FIRST
    assert "3 comments in 0.020s" in log.flush()[0]


def test_the_summary_counts_what_the_proxy_saw() -> None:
    faults = parse_plan([{"when": {"rpc": "message/stream", "after": "4s"}, "do": "stall"}])
    records = [
        rec("connect", 0.0, None),
        *stream(0, 0.1, [], rpc=None, path="/.well-known/agent-card.json"),
        *stream(1, 0.2, [0.5, 0.5], rpc="message/stream", end=("fin", "client")),
        rec("fault", 4.2, 1, detail="after: 4s -> stall", fault=FaultRef(index=0, action="stall")),
        *stream(2, 6.0, [], rpc="tasks/get"),
        *stream(3, 6.1, [0.1], rpc="tasks/resubscribe"),
        rec("request", 9.0, 4, method="GET", path="/.well-known/agent-card.json"),
    ]
    line = summary_line(records, faults, seconds=12.04, why="SIGINT")
    assert line == (
        "streamproof proxy: stopped after 12.0s (SIGINT): 1 connection; 5 requests "
        "(POST /.well-known/agent-card.json, message/stream, tasks/get, tasks/resubscribe, "
        "GET /.well-known/agent-card.json); 1 fault fired ([0] rpc message/stream after 4s: "
        "stall); responses ended: 3 clean by upstream, 1 fin by client, 1 unfinished"
    )


# --- inputs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "listen"),
    [
        ("127.0.0.1:8099", Listen("127.0.0.1", 8099)),
        ("localhost:0", Listen("localhost", 0)),
        ("[::1]:8099", Listen("::1", 8099)),
        ("8099", Listen("127.0.0.1", 8099)),
        (":8099", Listen("127.0.0.1", 8099)),
        ("127.0.0.1", Listen("127.0.0.1", 0)),
    ],
)
def test_listen_takes_loopback_addresses(text: str, listen: Listen) -> None:
    assert parse_listen(text) == listen


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0.0.0.0:8080", "loopback only"),
        ("192.168.1.5:8080", "loopback only"),
        ("[::]:8080", "loopback only"),
        ("127.0.0.1:99999", "the port must be a number from 0"),
        ("127.0.0.1:http", "the port must be a number from 0"),
    ],
)
def test_listen_refuses_anything_else(text: str, problem: str) -> None:
    with pytest.raises(BadInput, match=re.escape(f"--listen {text}: ")) as caught:
        parse_listen(text)
    assert problem in str(caught.value)


def test_upstream_is_an_http_base_url() -> None:
    assert parse_upstream("http://127.0.0.1:9000/") == "http://127.0.0.1:9000"
    assert parse_upstream("https://staging.example.com/a2a") == "https://staging.example.com/a2a"
    for bad in ("127.0.0.1:9000", "ftp://x", "http://x/?q=1"):
        with pytest.raises(BadInput, match="--upstream"):
            parse_upstream(bad)


def test_a_plan_file_is_a_list_of_faults_and_its_errors_name_file_and_line(
    tmp_path: Path,
) -> None:
    good = tmp_path / "plan.yaml"
    good.write_text("- {when: {after: 40s}, do: stall}\n- when: {after_event: 3}\n  do: rst\n")
    planned = load_plan_file(str(good))
    assert [p.label for p in planned] == [f"{good}:1 [0]", f"{good}:2 [1]"]
    assert [p.fault.action for p in planned] == ["stall", "rst"]
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    assert load_plan_file(str(empty)) == []

    typo = tmp_path / "typo.yaml"
    typo.write_text("- {when: {after: 40s}, do: stall}\n- when: {after_evnt: 3}\n  do: rst\n")
    with pytest.raises(BadInput) as caught:
        load_plan_file(str(typo))
    assert str(caught.value).startswith(f"{typo}:2: [1].when: unknown key 'after_evnt' in when")
    assert "(did you mean 'after_event'?)" in str(caught.value)

    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("id: x\nlinks:\n  a2a:\n    - {do: rst}\n")
    with pytest.raises(BadInput, match=re.escape("copy its links.a2a list into a file of its own")):
        load_plan_file(str(scenario))
    with pytest.raises(BadInput, match="cannot read it"):
        load_plan_file(str(tmp_path / "missing.yaml"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("- {when: {after: 40s}, do: stall\n")
    with pytest.raises(BadInput, match="malformed YAML"):
        load_plan_file(str(broken))


def test_the_engine_judges_the_plan_naming_each_fault() -> None:
    planned = faults_from_texts(["rpc message/stream after 4s: stall", "after 1s: drip 100ms"])
    rejected, approximated = engine_verdict("toxiproxy", planned)
    assert rejected == [
        "--fault 'rpc message/stream after 4s: stall': engine toxiproxy cannot do when.rpc: "
        "toxiproxy applies a toxic to every connection of a proxy and cannot tell one HTTP "
        "request from another"
    ]
    assert any(
        a.startswith("--fault 'after 1s: drip 100ms': engine toxiproxy approximates")
        for a in approximated
    )
    assert engine_verdict("inline", planned) == ([], [])


# --- the agent card ----------------------------------------------------------------------------

PROXY = "http://127.0.0.1:8099"


def test_a_card_that_sends_clients_around_the_proxy_is_told_apart() -> None:
    card = {
        "url": "http://127.0.0.1:9000/rpc",
        "supportedInterfaces": [{"url": "https://agent.example.com/a2a", "protocolVersion": "1.0"}],
    }
    advice = card_advice(card, proxy=PROXY)
    assert advice is not None
    assert "advertises http://127.0.0.1:9000/rpc, https://agent.example.com/a2a" in advice
    assert f"make the server advertise {PROXY}/rpc, {PROXY}/a2a" in advice
    assert card_advice({"url": "http://localhost:8099/"}, proxy=PROXY) is None
    assert card_advice({"supportedInterfaces": [{"url": PROXY + "/a2a"}]}, proxy=PROXY) is None
    assert card_advice(["not", "a", "card"], proxy=PROXY) is None
    assert card_advice({"error": "not found"}, proxy=PROXY) is None


# --- the scenario it writes --------------------------------------------------------------------


def skeleton(plan: list[Any], records: list[LinkEvent], engine: str = "inline") -> str:
    return scenario_skeleton(
        plan=plan,
        records=records,
        upstream="http://127.0.0.1:9000",
        engine=engine,
        time_scale=0.1,
        written_at="2026-12-01T10:00:00Z",
        scenario_id="captured-20261201-100000",
    )


A2A_SEEN = [
    *stream(0, 0.1, [], path="/.well-known/agent-card.json"),
    *stream(1, 0.2, [0.2, 1.0, 1.3], rpc="message/stream", end=("fin", "client")),
    rec("fault", 4.2, 1, detail="after: 4s -> stall", fault=FaultRef(index=0, action="stall")),
    *stream(2, 6.0, [], rpc="tasks/get"),
    *stream(3, 6.1, [0.1, 0.7], rpc="tasks/resubscribe"),
]


def fill(text: str, **keys: Any) -> str:
    """The written file with its placeholders filled in, as a user would."""
    data = yaml.safe_load(text)
    data.update(keys)
    return yaml.safe_dump(data, sort_keys=False)


def test_a2a_traffic_gives_an_a2a_client_scenario_to_finish() -> None:
    plan = [{"when": {"rpc": "message/stream", "after": "40s"}, "do": "stall"}]
    text = skeleton(plan, A2A_SEEN)
    data = yaml.safe_load(text)
    assert data["kind"] == "a2a-client"
    assert data["links"] == {"a2a": plan}
    assert data["expect"] == {"ledger": ["message/stream", "tasks/get", "tasks/resubscribe"]}
    assert "# client:" in text and "# task:" in text and "# result:" in text
    # what the proxy saw, in scenario time (time scale 0.1)
    assert "req 1 at 2.00s (conn 0): POST / rpc=message/stream; status 200; 3 events at" in text
    assert "fault [0] after: 4s -> stall at +40.00s" in text
    finished = fill(
        text,
        client={"deadline": "90s", "idle": "20s"},
        task=[{"at": "0s", "status": "submitted"}, {"at": "78s", "status": "completed"}],
    )
    (loaded,) = parse_scenarios(finished, "captured.yaml")
    assert loaded.scenario.id == "a2a_client/captured-20261201-100000"


def test_the_engine_is_kept_when_it_is_not_the_default() -> None:
    text = skeleton([{"when": {"after": "40s"}, "do": "stall"}], A2A_SEEN, engine="toxiproxy")
    assert yaml.safe_load(text)["links"]["engine"] == {"a2a": "toxiproxy"}


def test_other_traffic_gives_a_gateway_scenario_on_the_link_it_was_seen_on() -> None:
    chat = stream(0, 0.5, [0.1] * 4, path="/chat/s1")
    text = skeleton([{"when": {"after_event": 2}, "do": "rst"}], chat)
    data = yaml.safe_load(text)
    assert data["kind"] == "gateway" and list(data["links"]) == ["browser"]
    finished = fill(text, request="Where is order 1042?", model=[{"chunks": ["Shipped."]}])
    (loaded,) = parse_scenarios(finished, "captured.yaml")
    assert loaded.scenario.links.browser[0].action == "rst"

    gemini = stream(0, 0.5, [0.1] * 4, path="/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    assert list(yaml.safe_load(skeleton([], gemini))["links"]) == ["model"]


def test_no_faults_and_no_traffic_still_give_a_file_that_loads_once_filled() -> None:
    text = skeleton([], [])
    assert "#   (no requests)" in text
    data = yaml.safe_load(text)
    assert data["links"] == {"browser": []}
    finished = fill(text, request="hello", model=[{"chunks": ["hi"]}])
    assert parse_scenarios(finished, "captured.yaml")


def test_a_period_option_is_a_positive_duration_or_one_problem() -> None:
    from streamproof.standalone.inputs import parse_period

    problems: list[str] = []
    assert parse_period("--for", "2m", problems) == 120.0
    assert parse_period("--for", None, problems) is None
    assert problems == []
    assert parse_period("--for", "0s", problems) is None
    assert parse_period("--max-duration", "soon", problems) is None
    assert problems[0] == "--for 0s: must be longer than 0s"
    assert problems[1].startswith("--max-duration soon: ")
