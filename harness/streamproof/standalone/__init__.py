"""``streamproof proxy`` and ``streamproof serve``: the fault proxy and the fakes on their own.

``streamproof proxy`` is the fault proxy on its own, in front of a user's real stack.

The suites put a link in front of streamproof's own fakes; this command puts one in front of
whatever the user points it at (their staging A2A server, their gateway), so a team can watch
their real client meet "our proxy cuts the stream at 60 s" on a laptop. It reuses the plan
(:mod:`streamproof.faults.plan`, or the ``--fault`` words of :mod:`streamproof.faults.shorthand`),
the engines (:mod:`streamproof.faults.engines`) and their link records, and adds what a person at a
terminal needs:

* :mod:`~streamproof.standalone.live`: the link records as live lines, long event runs collapsed,
  and the closing summary (pure);
* :mod:`~streamproof.standalone.inputs`: ``--listen``, ``--plan FILE`` / ``--fault`` and the
  engine's verdict on the plan, each problem worded for the command line;
* :mod:`~streamproof.standalone.card`: whether the upstream's A2A agent card sends clients around
  the proxy (pure);
* :mod:`~streamproof.standalone.skeleton`: what the proxy saw as a scenario to finish (pure);
* :mod:`~streamproof.standalone.command`: the command itself (the link on a background loop, the
  terminal, signals and ``--for``).

``streamproof serve`` runs one of the fakes on its own, from a scenario, for the same kind of
hands-on work against a team's own client (or the A2A TCK against the fake A2A server):

* :mod:`~streamproof.standalone.ledger_lines`: one line per request a fake receives (pure);
* :mod:`~streamproof.standalone.serve`: the command (the fakes on a background loop, the terminal,
  signals).

``streamproof record`` is the same link with no plan, keeping the bytes it forwards, so a real
model or A2A server's streams become fixtures and a scenario that replays them:

* :mod:`~streamproof.standalone.recorded`: fixtures from timed writes, the redaction rules and the
  scenario (pure);
* :mod:`~streamproof.standalone.record`: the command (the recording link, signals,
  ``--max-duration``, the files).
"""
