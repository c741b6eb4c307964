"""The old import paths kept for one release (README "Layout": ``harness/checks/`` and
``harness/reference/``; the inline proxy's old home ``harness.faults.proxy``) still give the
same objects as their new homes, and the old entry points still start the references."""

from __future__ import annotations

import harness.checks.a2a_client as old_client_checks
import harness.faults.proxy as old_proxy
import harness.reference as old_reference
import harness.suites.a2a_client.checks as client_checks
from harness.faults.engines.inline import InlineProxy
from harness.suites.a2a_client.reference import mutants as client_mutants
from harness.suites.gateway.reference import mutants as gateway_mutants


def test_the_old_client_checks_are_the_suites() -> None:
    assert old_client_checks.__all__ == client_checks.__all__
    assert old_client_checks.__all__
    for name in client_checks.__all__:
        assert getattr(old_client_checks, name) is getattr(client_checks, name), name


def test_the_old_inline_proxy_path() -> None:
    assert old_proxy.InlineProxy is InlineProxy


def test_the_old_reference_package_lists_both_references_mutants() -> None:
    assert old_reference.BUGS is gateway_mutants.BUGS
    assert old_reference.CLIENT_BUGS is client_mutants.BUGS
    assert old_reference.INTENDED is gateway_mutants.INTENDED
    assert old_reference.CLIENT_INTENDED is client_mutants.INTENDED
    assert old_reference.bug_names() == [*gateway_mutants.BUGS, *client_mutants.BUGS]


def test_the_old_entry_points_run_the_references_mains() -> None:
    from harness.reference import client, gateway
    from harness.suites.a2a_client.reference.client import main as client_main
    from harness.suites.gateway.reference.server import main as gateway_main

    assert gateway.main is gateway_main
    assert client.main is client_main
