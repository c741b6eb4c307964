"""Checks on authentication and session ownership, from the harness's probe requests.

``docs/explanation/gateway-rules.md``: "For production you usually want your own endpoint that
authenticates the user, owns the session ids and emits a small, typed protocol". The runner
sends probes (``obs.auth_probes``) only when the scenario asks for them; each probe is one
request with a missing, wrong or other user's token.
"""

from __future__ import annotations

from collections.abc import Mapping

from streamproof.core.requirements import from_violations, not_applicable, skip
from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.observation import AuthProbe, GatewayObservation

__all__ = ["auth_verdicts", "history_isolation_verdicts"]

AUTH_PROBES: Mapping[str, frozenset[int]] = {
    "chat-no-token": frozenset({401}),
    "chat-wrong-token": frozenset({401}),
    "history-no-token": frozenset({401}),
    "history-wrong-token": frozenset({401}),
}
ISOLATION_PROBES: Mapping[str, frozenset[int]] = {
    "history-other-user": frozenset({401, 403, 404}),
}


def _judge_probes(
    obs: GatewayObservation, rid: str, wanted: Mapping[str, frozenset[int]], rule: str
) -> list[Verdict]:
    if obs.auth_probes is None:
        return [not_applicable(rid, "not judged: the scenario sends no auth probes")]
    if not obs.auth_declared:
        return [skip(rid, "the target declares no users/tokens")]
    probes: list[AuthProbe] = [p for p in obs.auth_probes if p.name in wanted]
    if not probes:
        return [skip(rid, f"not judged: none of the probes {', '.join(wanted)} was run")]
    problems: list[str] = []
    owner_read = obs.history is not None and not obs.history_error
    for probe in probes:
        allowed = wanted[probe.name]
        if probe.status == 404 and 404 in allowed and not owner_read:
            problems.append(
                f"probe {probe.name}: {probe.method} {probe.url} got HTTP 404, but the owner's "
                "own read of that history failed too, so the 404 shows no isolation"
            )
            continue
        if probe.status in allowed:
            continue
        answer = f"HTTP {probe.status}" if probe.status is not None else "no answer"
        error = f" ({probe.error})" if probe.error else ""
        problems.append(
            f"probe {probe.name}: {probe.method} {probe.url} got {answer}{error}, expected "
            f"{' or '.join(str(s) for s in sorted(allowed))}"
        )
    return [
        from_violations(
            rid,
            problems,
            rule=rule,
            ok=f"{len(probes)} probe(s) refused as expected",
            expected=", ".join(
                f"{n}: {'/'.join(str(s) for s in sorted(wanted[n]))}" for n in wanted
            ),
            observed=", ".join(f"{p.name}: {p.status}" for p in probes),
        )
    ]


def auth_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """A chat or history request without a valid bearer token gets 401."""
    return _judge_probes(
        obs,
        "GW-AUTH",
        AUTH_PROBES,
        "the gateway authenticates the user: a chat or history request with no token or a "
        "wrong token must get 401",
    )


def history_isolation_verdicts(obs: GatewayObservation) -> list[Verdict]:
    """One user cannot read another user's history (401, 403 or 404 all refuse it)."""
    return _judge_probes(
        obs,
        "GW-HISTORY-ISOLATION",
        ISOLATION_PROBES,
        "the gateway owns the session ids: reading another user's history must be refused "
        "with 401, 403 or 404",
    )
