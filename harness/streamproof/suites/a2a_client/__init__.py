"""The A2A client suite: is an A2A client right (``docs/explanation/a2a-client-rules.md``)?"""
