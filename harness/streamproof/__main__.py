"""``python -m streamproof``: the command, as ``streamproof``."""

from streamproof.cli import entry

entry()
