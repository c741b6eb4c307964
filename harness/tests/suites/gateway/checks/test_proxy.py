"""GW-PROXY-HONOURED: on a corporate-proxy path every model call goes through the proxy, whose
CA the gateway trusts; tool calls through the proxy are not model calls."""

from __future__ import annotations

from typing import Any

from harness.tests.suites.gateway.observations import (
    assert_fails,
    assert_not_applicable,
    assert_passes,
    worked_example,
)
from streamproof.fakes.records import TlsRefusal
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.checks.proxy import proxy_honoured_across, proxy_honoured_verdicts

RID = "GW-PROXY-HONOURED"
MODEL_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"


def _event(kind: str, request: int | None = None, **kw: Any) -> LinkEvent:
    return LinkEvent(t=0.1, link="model", connection=0, request=request, kind=kind, **kw)  # type: ignore[arg-type]


def _through(*paths: str) -> tuple[LinkEvent, ...]:
    events = [_event("connect")]
    for i, path in enumerate(paths):
        events.append(_event("request", i, method="POST", path=path))
    return tuple(events)


def _proxied(events: tuple[LinkEvent, ...], **kw: Any) -> Any:
    return worked_example(model_path="forward-proxy", link_events={"model": events}, **kw)


def test_not_judged_on_the_direct_path() -> None:
    assert_not_applicable(proxy_honoured_verdicts(worked_example()), RID, "model_path: direct")


def test_every_model_call_through_the_proxy_passes_and_tool_calls_may_go_through_too() -> None:
    obs = _proxied(_through(MODEL_PATH, "/lookupOrder", MODEL_PATH))
    verdict = assert_passes(proxy_honoured_verdicts(obs), RID)
    assert "2 model call(s) went through the proxy" in verdict.message


def test_a_model_call_past_the_proxy_fails_naming_it() -> None:
    assert_fails(
        proxy_honoured_verdicts(_proxied(_through(MODEL_PATH))),
        RID,
        "model call #1",
        "reached the model without going through the proxy named by HTTPS_PROXY",
    )


def _refused(
    peer: str, reason: str = "the client closed the connection during the handshake"
) -> TlsRefusal:
    return TlsRefusal(t=0.2, peer=peer, reason=reason)


def test_a_gateway_that_ignores_the_proxy_gives_up_tls_at_the_model_and_fails() -> None:
    obs = _proxied((), model_calls=(), model_tls_refusals=(_refused("127.0.0.1:51000"),))
    assert_fails(
        proxy_honoured_verdicts(obs),
        RID,
        "1 connection(s) went straight to the model's HTTPS address (GOOGLE_GEMINI_BASE_URL), "
        "past the proxy, and gave up the TLS handshake there (first from 127.0.0.1:51000 at "
        "0.20s: the client closed the connection during the handshake)",
        "the gateway ignores HTTPS_PROXY",
    )


def test_a_refusal_counts_against_the_gateway_even_when_other_calls_took_the_proxy() -> None:
    obs = _proxied(
        _through(MODEL_PATH, MODEL_PATH),
        model_tls_refusals=(_refused("127.0.0.1:51000", "TLS error: TLSV1_ALERT_UNKNOWN_CA"),),
    )
    assert_fails(proxy_honoured_verdicts(obs), RID, "TLSV1_ALERT_UNKNOWN_CA")


def test_a_handshake_the_proxy_itself_gave_up_is_not_the_gateways() -> None:
    """The proxy lets go of its connection to the model mid-handshake when the gateway drops
    the request it carried: that refusal comes from one of the proxy's own addresses."""
    obs = _proxied(
        _through(MODEL_PATH, MODEL_PATH),
        model_tls_refusals=(_refused("127.0.0.1:52000"),),
        proxy_upstream=("127.0.0.1:51999", "127.0.0.1:52000"),
    )
    assert_passes(proxy_honoured_verdicts(obs), RID)


def test_nothing_through_the_proxy_and_nothing_past_it_is_not_judged() -> None:
    """A correct gateway under load that had not yet called the model when its run bound
    ended the scenario: no evidence either way, so no verdict (and never a pass)."""
    obs = _proxied((_event("connect"),), model_calls=())
    assert_not_applicable(
        proxy_honoured_verdicts(obs),
        RID,
        "no model call reached the proxy or the model, and none was seen going past the proxy",
    )


def test_a_gateway_that_does_not_trust_the_proxys_ca_fails_saying_so() -> None:
    failed = _event("tls_error", detail="Client TLS handshake failed: unknown ca")
    obs = _proxied((_event("connect"), failed), model_calls=())
    assert_fails(
        proxy_honoured_verdicts(obs),
        RID,
        "the gateway's TLS handshake with the proxy failed 1 time(s) (Client TLS handshake "
        "failed: unknown ca): it does not trust the proxy's CA in SSL_CERT_FILE",
    )


def test_a_browser_that_left_before_any_model_call_leaves_nothing_to_judge() -> None:
    obs = _proxied((), model_calls=(), disconnected_at=0.05)
    assert_not_applicable(proxy_honoured_verdicts(obs), RID, "before the gateway called")


def test_under_concurrency_a_session_alone_is_not_judged() -> None:
    """Its model link is every session's: its requests name no session."""
    obs = _proxied((), model_link_shared=True)
    assert_not_applicable(proxy_honoured_verdicts(obs), RID, "not judged per session")


def _sessions(k: int) -> list[Any]:
    """``k`` sessions of the worked example, each holding its own two model calls and none of
    the shared link's records."""
    return [_proxied((), model_link_shared=True) for _ in range(k)]


def test_under_concurrency_the_shared_proxy_carrying_every_sessions_calls_passes() -> None:
    sessions = _sessions(4)
    calls = sum(len(s.model_calls) for s in sessions)
    verdict = assert_passes(proxy_honoured_across(sessions, _through(*[MODEL_PATH] * calls)), RID)
    assert f"{calls} model call(s) went through the proxy" in verdict.message


def test_under_concurrency_calls_the_proxy_never_carried_fail() -> None:
    sessions = _sessions(3)
    calls = sum(len(s.model_calls) for s in sessions)
    short = _through(*[MODEL_PATH] * (calls - 1))
    # numbered across the sessions: the one the proxy never carried is the run's last call
    assert_fails(
        proxy_honoured_across(sessions, short),
        RID,
        f"model call #{calls - 1} (",
        "reached the model without going",
    )
    nothing = [s.model_copy(update={"model_calls": ()}) for s in sessions]
    assert_not_applicable(proxy_honoured_across(nothing, ()), RID, "no model call reached")
    refused = (_refused("127.0.0.1:51000"), _refused("127.0.0.1:51001"))
    assert_fails(
        proxy_honoured_across(nothing, (), refused, ("127.0.0.1:40000",)),
        RID,
        "2 connection(s) went straight to the model's HTTPS address",
    )
