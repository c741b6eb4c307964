"""Mutants: the seeded defects of the references (:mod:`.catalog`, data the references and
their targets read) and the matrix that runs the suite against each (:mod:`.matrix`, behind
``streamproof mutants``)."""
