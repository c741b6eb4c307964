"""The gateway suite: is an ADK SSE gateway right (seed ``000_08c89244bc50b181``)?"""
