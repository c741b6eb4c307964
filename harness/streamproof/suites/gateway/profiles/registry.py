"""The profiles by name, and the one entry point that judges an observation by its profile."""

from __future__ import annotations

from collections.abc import Mapping

from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.checks import browser_link_verdicts
from streamproof.suites.gateway.observation import GatewayObservation
from streamproof.suites.gateway.profiles.adk_events import ADK_EVENTS
from streamproof.suites.gateway.profiles.ag_ui import AG_UI
from streamproof.suites.gateway.profiles.ai_sdk_ui import AI_SDK_UI
from streamproof.suites.gateway.profiles.base import Profile, Reading
from streamproof.suites.gateway.profiles.typed_frames import TYPED_FRAMES

__all__ = ["PROFILES", "check_gateway", "profile"]

PROFILES: Mapping[str, Profile] = {p.name: p for p in (TYPED_FRAMES, ADK_EVENTS, AG_UI, AI_SDK_UI)}


def profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown gateway profile {name!r} (known: {', '.join(PROFILES)})") from None


def check_gateway(obs: GatewayObservation) -> list[Verdict]:
    """Every gateway verdict for ``obs``, judged by its profile: each requirement as it reads
    on that wire (or not applicable there, with the reason), then the scenario's own
    expectations; what a fault on the browser link leaves unjudgeable is said so."""
    wire = profile(obs.profile)
    reading = Reading(obs=wire.wire(obs), view=wire.view(obs))
    verdicts = [v for rid, rule in wire.rules.items() for v in rule.verdicts(rid, reading)]
    verdicts += wire.expectations(reading)
    return browser_link_verdicts(reading.view, verdicts)
