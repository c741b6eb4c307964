"""Kept for one release: ``python -m harness.reference.gateway`` runs
:mod:`harness.suites.gateway.reference.server`."""

from __future__ import annotations

import sys

from harness.suites.gateway.reference.server import main

if __name__ == "__main__":
    sys.exit(main())
