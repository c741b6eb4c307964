"""Warm starts: a Python target started many times in one run pays its imports once.

A target file that declares ``warm_start: true`` and whose command is ``["{python}", "-m",
MODULE, ...]`` is not started by a fresh interpreter each time: the first start launches a
*zygote* (:mod:`.zygote`), an interpreter that imports ``MODULE`` once and then forks a child
per start, which becomes the command (``python -m MODULE args``) with the start's own
environment, output pipes and process group. The harness side (:mod:`.pool`) keeps one zygote
per interpreter, module, working folder and interpreter-shaping environment, and falls back to
an ordinary start, saying why, whenever a warm one is not exact; inside :func:`sharing` (a
process that runs many ``streamproof run`` commands) the processes it starts share them.
:mod:`.request` holds what the two sides say to each other and when a command can be started
warm at all; :mod:`.command` runs a whole command (a ``streamproof run``) to its end from a
zygote that imported what it will import, for the processes that run hundreds of them.

Why (docs/explanation/performance.md#warm-starts): the reference gateway spends about 1.3 CPU-s
importing google-adk at each start and the reference A2A client 0.5 s importing a2a-sdk at
each turn; a run starts them dozens of times.
"""

from streamproof.targets.warm.pool import WarmChild, sharing, start_warm
from streamproof.targets.warm.request import WarmCommand, warm_command

__all__ = ["WarmChild", "WarmCommand", "sharing", "start_warm", "warm_command"]
