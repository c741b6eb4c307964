"""``python -m streamproof.cli``: the command, as ``streamproof``."""

from streamproof.cli import entry

entry()
