"""What the two data-only wires share (AG-UI, the AI SDK UI message stream): events typed by a
JSON ``type`` in ``data:`` lines, text that streams into a message (or part) by id and is
settled when it ends, no SSE ids and no ``final`` flag.

Here: the rules that read alike on both (the seed's id rules judged only if a gateway sends ids,
the stored text compared with a message built from its deltas), how a wire's rule table is made
from the seed's, and the screens of a client that keeps one text per id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from streamproof.suites.gateway.checks import (
    frame_id_counter_verdicts,
    frame_id_fresh_verdicts,
)
from streamproof.suites.gateway.checks.persistence import persist_matches_message_loosely
from streamproof.suites.gateway.checks.screen import Screen, Shown
from streamproof.suites.gateway.profiles.base import (
    Rule,
    ids_only_if_sent,
    judged,
    on_view,
    on_wire,
)
from streamproof.suites.gateway.profiles.typed_frames import SEED_RULES, WIRE_CHECKED

__all__ = ["SHARED", "Texts", "wire_rules"]

SHARED: Mapping[str, Rule] = {
    "GW-FRAME-ID-COUNTER": ids_only_if_sent(
        on_view(frame_id_counter_verdicts), "GW-FRAME-ID-COUNTER"
    ),
    "GW-FRAME-ID-FRESH": ids_only_if_sent(on_view(frame_id_fresh_verdicts), "GW-FRAME-ID-FRESH"),
    "GW-PERSIST-MATCHES-MESSAGE": judged(
        "the stored text is the settled message's text, up to whitespace (the message is built "
        "from its deltas, which the seed allows to differ from the aggregate there)",
        on_view(persist_matches_message_loosely),
    ),
}
"""The rules that read alike on both data-only wires."""


def wire_rules(own: Mapping[str, Rule], protocol: Mapping[str, Rule]) -> dict[str, Rule]:
    """A data-only wire's rule table: every GW- rule, as the wire reads it where it says so
    (``own``, then :data:`SHARED`), else the seed's check on the seed view; then the wire's own
    protocol rules, in report order."""
    rules: dict[str, Rule] = {}
    for rid, meaning, check in SEED_RULES:
        rules[rid] = (
            own.get(rid)
            or SHARED.get(rid)
            or judged(meaning, on_wire(check) if rid in WIRE_CHECKED else on_view(check))
        )
    return {**rules, **protocol}


@dataclass
class Texts:
    """The texts a client keeps by id (an AG-UI message, an AI SDK text part): in the order they
    opened, each growing as its deltas come, a draft until it is settled."""

    order: list[str] = field(default_factory=list)
    shown: dict[str, Shown] = field(default_factory=dict)
    settled: set[str] = field(default_factory=set)

    def open(self, key: str, author: str | None, at: int) -> None:
        if key not in self.shown:
            self.order.append(key)
            self.shown[key] = Shown(author, "", at)

    def append(self, key: str, delta: str, at: int) -> None:
        self.open(key, None, at)
        old = self.shown[key]
        self.shown[key] = Shown(old.author, old.text + delta, at)

    def settle(self, key: str) -> None:
        self.settled.add(key)

    def replace(self, texts: list[tuple[str, str | None, str]], at: int) -> None:
        """All texts at once, settled (AG-UI's ``MESSAGES_SNAPSHOT``): (key, author, text)."""
        self.order = [key for key, _, _ in texts]
        self.shown = {key: Shown(author, text, at) for key, author, text in texts}
        self.settled = set(self.order)

    def screen(self, frame: int, t: float, label: str, status: str | None) -> Screen:
        on_screen = [k for k in self.order if self.shown[k].text]
        return Screen(
            frame=frame,
            t=t,
            label=label,
            messages=tuple(self.shown[k] for k in on_screen if k in self.settled),
            drafts=tuple(self.shown[k] for k in on_screen if k not in self.settled),
            status=status,
        )
