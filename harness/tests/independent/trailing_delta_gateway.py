"""A broken gateway: the minimal gateway (``gateway.py``) that sends a final answer once more
as a ``delta`` after its ``message``. The seed's reducer then shows the message and a new draft
of the same answer until ``done``: a double render, which GW-NO-DOUBLE-RENDER must catch.
``python -m harness.tests.independent.trailing_delta_gateway``.
"""

from __future__ import annotations

from harness.tests.independent.gateway import main

if __name__ == "__main__":
    main(trailing_delta=True, name="trailing-delta-gateway")
