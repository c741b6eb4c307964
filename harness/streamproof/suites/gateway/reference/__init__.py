"""The reference gateway: the seed's typed-frame protocol (or AG-UI, or the AI SDK UI message
stream: ``--wire``) on a real google-adk Runner, with its mutants.
``python -m streamproof.suites.gateway.reference.server`` starts it (``--list-bugs``).

- ``agent.py``: the conformance agent ``support`` (tool ``lookupOrder``) and its sub-agents;
- ``frames.py``: ADK events to typed frames; ``ag_ui.py``: to AG-UI events; ``ai_sdk.py``: to
  AI SDK UI message chunks; ``stream.py``: what the wires share; ``app.py``: the endpoints;
- ``config.py``: settings from the environment; ``server.py``: the process;
- ``mutants.py``: the seeded defects.
"""
