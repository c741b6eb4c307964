"""The A2A client suite: is an A2A client right (seed ``001_a4aab3267c38e4f0``)?"""
