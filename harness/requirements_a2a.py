"""The A2A client requirements (``A2A-C-…``), from the client seed (001_a4aab3267c38e4f0)."""

from __future__ import annotations

from harness.requirements import CLIENT_SEED, Requirement
from harness.verdicts import Level


def _c(id: str, level: Level, statement: str, section: str) -> Requirement:
    return Requirement(
        id=id, level=level, statement=statement, seed=CLIENT_SEED, section=section,
        kind="a2a-client",
    )


A2A_CLIENT: list[Requirement] = []
