"""The reference A2A client: the seed's recipe on the real a2a-sdk client, with its mutants.
``python -m streamproof.suites.a2a_client.reference.client`` runs it (``--list-bugs``)."""
