"""Kept for one release: ``python -m harness.reference.client`` runs
:mod:`harness.suites.a2a_client.reference.client`."""

from __future__ import annotations

import sys

from harness.suites.a2a_client.reference.client import main

if __name__ == "__main__":
    sys.exit(main())
