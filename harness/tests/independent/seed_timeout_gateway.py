"""The seed's controller on timeout: the minimal gateway (``gateway.py``) with the run bound of
the seed's ``new SseEmitter(120_000L)`` (``STREAMPROOF_RUN_TIMEOUT`` seconds) and its
``emitter.onTimeout(sub::dispose)``: at the bound the run is disposed and the stream closed,
with no frame at all. Correct by the seed: it must pass every MUST, the black hole's included
(where only the SHOULD GW-RUN-BOUND-ERROR, an error frame at the bound, is unmet).
``python -m harness.tests.independent.seed_timeout_gateway``.
"""

from __future__ import annotations

from harness.tests.independent.gateway import main

if __name__ == "__main__":
    main(run_bound=True, name="seed-timeout-gateway")
