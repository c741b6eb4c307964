"""The bundled references: a correct gateway on google-adk (and its mutants)."""

from __future__ import annotations

from harness.reference.mutants import BUGS, INTENDED, bug_names

__all__ = ["BUGS", "INTENDED", "bug_names"]
