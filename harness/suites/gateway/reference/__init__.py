"""The reference gateway: the seed's typed-frame protocol on a real google-adk Runner, with its
mutants. ``python -m harness.suites.gateway.reference.server`` starts it (``--list-bugs``).

- ``agent.py``: the conformance agent ``support`` (tool ``lookupOrder``) and its sub-agents;
- ``frames.py``: ADK events to typed frames; ``app.py``: the aiohttp endpoints;
- ``config.py``: settings from the environment; ``server.py``: the process;
- ``mutants.py``: the seeded defects.
"""
