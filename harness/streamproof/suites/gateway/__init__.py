"""The gateway suite: is an ADK SSE gateway right (``docs/explanation/gateway-rules.md``)?"""
