# Docs example (docs/how-to/pytest.md): the checks as a library. (A test keeps the page's copy.)
from streamproof import ChatResponse, Frame, GatewayObservation, Outcome, check_gateway


def frames_from(raw: list[tuple[str, str]]) -> tuple[Frame, ...]:
    return tuple(
        Frame(index=i, t=0.1 * i, event=event, id=str(i + 1), data=data)
        for i, (event, data) in enumerate(raw)
    )


def test_my_gateway_frames_follow_the_seed() -> None:
    obs = GatewayObservation(
        scenario="my-own-test",
        target="my-gateway",
        marker="SECRET-42",  # put this string in your tool's answer; it must never leak
        request_text="Where is order 1042?",
        streaming=True,
        response=ChatResponse(status=200, content_type="text/event-stream", end="clean"),
        frames=frames_from(
            [
                ("tool_call", '{"names":["lookupOrder"]}'),
                ("tool_result", '{"count":1}'),
                ("delta", '{"author":"support","text":"Order 1042 "}'),
                ("delta", '{"author":"support","text":"shipped."}'),
                ("message", '{"author":"support","text":"Order 1042 shipped.","final":true}'),
                ("done", "{}"),
            ]
        ),
    )
    failures = [v for v in check_gateway(obs) if v.outcome is Outcome.FAIL]
    assert not failures, "\n".join(v.render() for v in failures)
