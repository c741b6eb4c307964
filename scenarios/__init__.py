"""The bundled conformance suites, one folder per suite, installed as ``streamproof.scenarios``.

This file only makes the folder a package, so that setuptools can map it into ``harness``
(see setup.py) and an editable install finds it; the suites are the YAML files.
"""
