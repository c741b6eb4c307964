"""The drivers: what the harness sends a gateway and reads back, the I/O the pure profiles
(:mod:`streamproof.suites.gateway.profiles`) and checks never do.

One module per concern: the chat turn on the wire (:mod:`.chat`), the session's set-up and
history reads (:mod:`.history`), the auth probes (:mod:`.auth`), and one whole turn as the
browser takes it, with the waits around it (:mod:`.turn`). Every profile's wire is Server-Sent
Events over HTTP, so one driver speaks them all; what differs per wire (the request a turn
sends, which events count as the seed's frames) it takes from the target's profile.
"""
