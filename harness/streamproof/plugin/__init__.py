"""The pytest plugin: scenario files become test items, one per scenario.

Registered through the ``pytest11`` entry point, so it is active in every pytest run of an
environment where streamproof is installed. It is cheap to import (only pytest and the
standard library at module level) and collects only scenario files: ``*.scenario.yaml``
anywhere, or any ``.yaml`` under a folder listed in the ``streamproof_dirs`` ini option.
Everything heavy (pydantic models, aiohttp, the fakes, the gateway) loads when a scenario
file is actually collected or run.

This module holds no hook itself: pytest registers each module of :data:`pytest_plugins` once,
after this one, in that order.
"""

pytest_plugins = (
    "streamproof.plugin.options",
    "streamproof.plugin.collect",
    "streamproof.plugin.finish",
    "streamproof.plugin.summary",
    "streamproof.plugin.fixtures",
    "streamproof.plugin.xdist",
)
"""The plugin's hooks, by what they do: its options (:mod:`~streamproof.plugin.options`),
collecting scenario files into items (:mod:`~streamproof.plugin.collect`), the session's end
and its report (:mod:`~streamproof.plugin.finish`), its lines in pytest's closing summary
(:mod:`~streamproof.plugin.summary`); the fixtures for a team's own tests (``fake_model``,
``fake_a2a``, ``fault_link``...: :mod:`~streamproof.plugin.fixtures`); and the hooks for
pytest-xdist workers and ``--streamproof-shard`` (:mod:`~streamproof.plugin.xdist`). Each as
cheap to import as this one."""
