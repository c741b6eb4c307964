"""Benchmarks of the harness's own machinery (run as modules: ``python -m streamproof.bench.X``)."""
