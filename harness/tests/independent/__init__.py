"""Independent systems under test, written from the rules and the contracts in docs/ only.

They keep the conformance suites honest: the minimal gateway and the 0.3 client are correct
and must pass every MUST; the broken ones must fail. None of them is derived from
the bundled references (``streamproof.suites.*.reference``).
"""
