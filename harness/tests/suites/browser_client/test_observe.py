"""What a run recorded becomes an observation: frames matched in what the page received, each
screen state placed after the frames it had, requests as the link saw them, the stream's end."""

from __future__ import annotations

from streamproof.fakes.gateway import GatewayFrame, GatewayRequest
from streamproof.faults.records import LinkEvent
from streamproof.suites.browser_client.observe import (
    module_observation,
    page_observation,
    reducer_screen,
    stream_end,
)
from streamproof.suites.browser_client.scenario import BrowserClientScenario

SCENARIO = BrowserClientScenario.model_validate(
    {
        "id": "browser_client/t",
        "title": "t",
        "kind": "browser-client",
        "requirements": ["BR-RENDER-ONCE"],
        "frames": [
            {"delta": {"author": "support", "text": "Hi "}},
            {"message": {"author": "support", "text": "Hi there.", "final": True}},
            {"done": {}},
        ],
    }
)
FRAMES = [GatewayFrame(f.type, f.payload) for f in SCENARIO.frames]


def _event(kind: str, request: int | None = 0, **extra: object) -> LinkEvent:
    return LinkEvent(t=0.5, link="browser", connection=0, request=request, kind=kind, **extra)  # type: ignore[arg-type]


def test_how_the_stream_ended_comes_from_the_links_records() -> None:
    chat = _event("request", method="POST", path="/chat/s")
    assert stream_end([], False) == ("none", None)
    assert stream_end([chat], False) == ("open", None)
    assert stream_end([chat, _event("end", how="rst", by="proxy")], False) == ("broken", 0.5)
    assert stream_end([chat, _event("end", how="clean", by="upstream")], False)[0] == "clean"
    assert stream_end([chat, _event("end", how="clean", by="upstream")], True)[0] == "terminal"
    assert stream_end([chat, _event("end", how="fin", by="client")], False)[0] == "left"
    status = _event("end", how="clean", by="proxy", status=502)
    assert stream_end([chat, status], False)[0] == "status"


def test_screen_states_are_placed_after_the_frames_the_page_had() -> None:
    received = FRAMES[0].block(1) + FRAMES[1].block(2)
    half = len(FRAMES[0].block(1)) + 3
    states = [
        {"t": 0.1, "recv": 0, "settled": True, "messages": [], "drafts": []},
        {"t": 0.2, "recv": half, "drafts": [{"author": "support", "text": "Hi"}]},
        {"t": 0.3, "recv": len(received), "settled": True, "messages": [{"text": "Hi there."}]},
    ]
    link = (
        _event("request", method="POST", path="/chat/s"),
        _event("request", request=1, method="GET", path="/history/s"),
        _event("response_headers", status=200),
        _event("end", how="rst", by="proxy"),
    )
    requests = [GatewayRequest(t=0.1, method="GET", path="/history/s", role="history", status=200)]
    obs = page_observation(
        SCENARIO,
        target="t",
        time_scale=0.1,
        frames=FRAMES,
        blocks=[f.block(i) for i, f in enumerate(FRAMES, start=1)],
        profile="typed-frames",
        sent={1: 0.1, 2: 0.2},
        received=received,
        states=states,
        requests=requests,
        link_events=link,
        reconnect_s=1.0,
        screen=None,
        hidden_at=(),
        console_errors=(),
    )
    assert [s.frames for s in obs.states] == [0, 1, 2]
    assert [f.reached_page for f in obs.frames] == [True, True, False]
    assert obs.frames[2].t_sent is None
    assert [(r.role, r.status) for r in obs.requests] == [("chat", 200), ("history", 0)]
    assert obs.stream_end == "broken" and obs.t_stream_end == 0.5
    assert obs.states[2].messages[0].author is None
    assert [i.text for i in obs.history] == ["Where is order 1042?", "Hi there."]


def test_a_reducers_draft_may_be_one_a_list_or_a_map_by_author() -> None:
    one = {"messages": [{"author": "a", "text": "x"}], "draft": {"author": "a", "text": "y"}}
    assert [i.text for i in reducer_screen(one)[1]] == ["y"]
    many = {"draft": [{"author": "a", "text": "y"}, {"author": "b", "text": "z"}]}
    assert len(reducer_screen(many)[1]) == 2
    mapped = {"drafts": {"a": "y", "b": ""}, "status": "done"}
    assert reducer_screen(mapped)[1][0].author == "a" and reducer_screen(mapped)[2] == "done"
    assert reducer_screen({"messages": "nonsense"}) == ((), (), None)


def test_a_module_run_sees_every_frame_and_one_state_after_each() -> None:
    states = [{"messages": [], "draft": None}] * 4
    obs = module_observation(SCENARIO, "r", states, 0.1)
    assert obs.mode == "module" and obs.stream_end == "terminal"
    assert [s.frames for s in obs.states] == [0, 1, 2, 3]
    assert all(f.reached_page for f in obs.frames) and not obs.requests
