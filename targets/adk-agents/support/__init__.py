"""The contract's agent for ``adk api_server``: the app folder ``support`` (ADK's app name is the
folder's name), whose ``agent`` module defines ``root_agent``."""

from . import agent as agent
