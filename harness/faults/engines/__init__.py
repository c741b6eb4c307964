"""Fault engines: what carries out a link's fault plan (:mod:`harness.faults.plan`) on the wire.

:mod:`~harness.faults.engines.inline` is the default and only engine so far: an in-process
aiohttp reverse proxy that knows about SSE events and implements the whole plan vocabulary.
"""
