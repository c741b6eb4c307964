"""``streamproof.plugin`` holds no hook: the modules it lists in ``pytest_plugins`` do, each
registered once, in the order listed."""

from __future__ import annotations

import pytest

import streamproof.plugin


def test_every_listed_module_is_registered_once_and_the_package_holds_no_hook(
    pytestconfig: pytest.Config,
) -> None:
    manager = pytestconfig.pluginmanager
    names = [
        name
        for name, _ in manager.list_name_plugin()
        if name == "streamproof" or name.startswith("streamproof.")
        # make test-profile adds its timing plugin (streamproof.bench), not the product's
        if not name.startswith("streamproof.bench.")
    ]
    assert names == ["streamproof", *streamproof.plugin.pytest_plugins]
    assert not [
        name
        for name in vars(streamproof.plugin)
        if name.startswith("pytest_") and name != "pytest_plugins"
    ]
    for module in streamproof.plugin.pytest_plugins:
        assert manager.get_plugin(module) is not None
