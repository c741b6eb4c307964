"""Kept for one release: the references moved into their suites, the gateway's to
:mod:`harness.suites.gateway.reference` and the client's to
:mod:`harness.suites.a2a_client.reference`. ``python -m harness.reference.gateway`` and
``python -m harness.reference.client`` still start them."""

from __future__ import annotations

from harness.suites.a2a_client.reference.mutants import BUGS as CLIENT_BUGS
from harness.suites.a2a_client.reference.mutants import INTENDED as CLIENT_INTENDED
from harness.suites.gateway.reference.mutants import BUGS, INTENDED


def bug_names() -> list[str]:
    """Every mutant name, gateway ones first."""
    return [*BUGS, *CLIENT_BUGS]


__all__ = ["BUGS", "CLIENT_BUGS", "CLIENT_INTENDED", "INTENDED", "bug_names"]
