"""The bundled references: a correct gateway on google-adk and a correct A2A client on
a2a-sdk, each with its mutants (one seeded defect each)."""

from __future__ import annotations

from harness.reference.client_mutants import BUGS as CLIENT_BUGS
from harness.reference.client_mutants import INTENDED as CLIENT_INTENDED
from harness.reference.mutants import BUGS, INTENDED


def bug_names() -> list[str]:
    """Every mutant name, gateway ones first."""
    return [*BUGS, *CLIENT_BUGS]


__all__ = ["BUGS", "CLIENT_BUGS", "CLIENT_INTENDED", "INTENDED", "bug_names"]
