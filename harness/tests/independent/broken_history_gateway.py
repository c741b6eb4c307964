"""A broken gateway: the minimal gateway (``gateway.py``) whose history endpoint answers 500.

Its frames are correct, but the stored session can never be read back, so the persistence
requirements (GW-PERSIST-*) must fail.
``python -m harness.tests.independent.broken_history_gateway``.
"""

from __future__ import annotations

from harness.tests.independent.gateway import main

if __name__ == "__main__":
    main(broken_history=True, name="broken-history-gateway")
