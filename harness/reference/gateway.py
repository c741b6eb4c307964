"""Kept for one release: ``python -m harness.reference.gateway`` runs
:mod:`harness.suites.gateway.reference.server`."""

from __future__ import annotations

from harness.suites.gateway.reference.server import exit_now, main

if __name__ == "__main__":
    exit_now(main())
