"""``root_agent`` for ``adk api_server``: the bundled reference gateway's agent, unchanged.

The same ``support`` agent, ``lookupOrder`` tool (POSTing to ``$STREAMPROOF_TOOL_URL``) and
sub-agents (``billing`` by transfer, ``courier`` as a tool) that the reference gateway runs
(:func:`streamproof.suites.gateway.reference.agent.build_agent`), so a verdict that differs between
the two targets comes from the server in front of the agent, not from the agent. The model is
Gemini reached through ``GOOGLE_GEMINI_BASE_URL``, which streamproof points at its fake.
"""

from __future__ import annotations

import os

from streamproof.suites.gateway.reference.agent import build_agent

root_agent = build_agent(os.environ["STREAMPROOF_TOOL_URL"])
