"""GW-PROXY-HONOURED: on a corporate-proxy path, the gateway's model calls go through the proxy.

On ``model_path: forward-proxy`` (or ``buffering-proxy``) the harness gives the gateway the
fake model's ``https`` URL, the proxy in ``HTTPS_PROXY`` (and its spellings) and the proxy's CA
in ``SSL_CERT_FILE`` (docs/reference/gateway-contract.md#through-a-corporate-proxy). The model link
*is* the proxy, so its records say which model calls took it; the fake model's records say which
calls reached the model at all. A gateway that ignores the proxy either reaches the model past it
(a call the fake answered that the proxy never carried) or, as the fake's certificate is trusted
by no one but the proxy, gives up its TLS handshake at the model's address (a refusal the fake
records with the connection's address, which is none of the proxy's own connections); a
gateway that takes the proxy but does not trust its CA fails the handshake with it (a
``tls_error`` record). The rule fails only on such evidence: when nothing took the proxy and
nothing was seen going past it (a gateway under load that had not called the model before its
run bound), there is nothing to judge.

The tool service is plain ``http`` on loopback: a gateway may send its tool calls through the
proxy too, and those requests (no ``/models/`` in their path) are not model calls.

Under ``--concurrency`` the sessions share the proxy, and its requests name no session: one
session's records cannot say which of the model calls were its own. The rule is then judged
once over every session (:func:`proxy_honoured_across`): as many model requests through the
proxy, path by path, as model calls reached the model from all the sessions together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from streamproof.core.requirements import from_violations, not_applicable
from streamproof.core.verdicts import Verdict
from streamproof.fakes.records import TlsRefusal
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.checks.stream import no_stream
from streamproof.suites.gateway.observation import GatewayObservation

__all__ = ["RID", "proxy_honoured_across", "proxy_honoured_verdicts"]

RID = "GW-PROXY-HONOURED"
MODEL_API = "/models/"
"""What every Gemini API path holds (``/v1beta/models/{model}:streamGenerateContent``): the
requests on the link that are model calls, not tool calls."""


def proxy_honoured_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """Every model call through the proxy, its CA trusted; judged on what was seen to take
    the proxy or go past it, and not judged when neither was seen."""
    if obs.model_path == "direct":
        return [
            not_applicable(RID, "not judged: the model is reached directly (model_path: direct)")
        ]
    if obs.model_link_shared:
        return [
            not_applicable(
                RID,
                "not judged per session: the sessions share the proxy, whose requests name no "
                "session; judged over every session",
            )
        ]
    if (skipped := no_stream(obs, RID)) is not None:
        return skipped
    events = obs.link_events.get("model", ())
    carried = Counter(
        e.path for e in events if e.kind == "request" and e.path and MODEL_API in e.path
    )
    through = sum(carried.values())
    problems: list[str] = []
    left = Counter(carried)
    for call in obs.model_calls:
        if left[call.path] > 0:
            left[call.path] -= 1
            continue
        problems.append(
            f"model call #{call.index} ({call.path}) reached the model without going through "
            "the proxy named by HTTPS_PROXY"
        )
    past = obs.refusals_past_proxy
    if past:
        problems.append(
            f"{len(past)} connection(s) went straight to the model's HTTPS address "
            f"(GOOGLE_GEMINI_BASE_URL), past the proxy, and gave up the TLS handshake there "
            f"(first from {past[0].peer} at {past[0].t:.2f}s: {past[0].reason}): the gateway "
            "ignores HTTPS_PROXY, and only the proxy trusts the model's certificate"
        )
    failed_tls = [e for e in events if e.kind == "tls_error"]
    if failed_tls:
        problems.append(
            f"the gateway's TLS handshake with the proxy failed {len(failed_tls)} time(s) "
            f"({failed_tls[0].detail}): it does not trust the proxy's CA in SSL_CERT_FILE"
        )
    if not problems and through == 0:
        # Nothing seen either way: no verdict without evidence (a gateway under load may not
        # have called the model before its run bound, and one that skips the proxy is seen
        # at the model's address).
        why = (
            "the browser went away before the gateway called the model"
            if obs.disconnected_at is not None
            else "no model call reached the proxy or the model, and none was seen going past "
            "the proxy"
        )
        return [not_applicable(RID, f"not judged: {why}")]
    return [
        from_violations(
            RID,
            problems,
            rule="on a corporate-proxy path every model call must go through the proxy named by "
            "HTTPS_PROXY, with the proxy's CA in SSL_CERT_FILE trusted",
            ok=f"{through} model call(s) went through the proxy, none past it",
            expected="every model call through the proxy",
            observed=f"{through} model request(s) through the proxy, {len(obs.model_calls)} "
            f"call(s) reached the model, {len(past)} handshake(s) refused at the model past "
            f"the proxy, {len(failed_tls)} TLS failure(s) with the proxy",
        )
    ]


def proxy_honoured_across(
    sessions: Sequence[GatewayObservation],
    model_link: Sequence[LinkEvent],
    refusals: Sequence[TlsRefusal] = (),
    proxy_upstream: Sequence[str] = (),
) -> list[Verdict]:
    """GW-PROXY-HONOURED over the sessions of one ``--concurrency`` run: the shared model
    link's records, and the handshakes refused at the model, against every session's model
    calls, as one run of them all (the first session's stream and disconnect stand for
    whether there was anything to judge). The calls are numbered across the sessions, in
    session order, so a message names each once."""
    calls = (c for s in sessions for c in s.model_calls)
    together = sessions[0].model_copy(
        update={
            "model_link_shared": False,
            "link_events": {"model": tuple(model_link)},
            "model_tls_refusals": tuple(refusals),
            "proxy_upstream": tuple(proxy_upstream),
            "model_calls": tuple(c.model_copy(update={"index": n}) for n, c in enumerate(calls)),
        }
    )
    return proxy_honoured_verdicts(together)
