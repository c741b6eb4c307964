"""The reference client's settings: the contract's environment, the binding included."""

from __future__ import annotations

import pytest

from streamproof.suites.a2a_client.reference.settings import ConfigError, Settings

BASE = {
    "STREAMPROOF_A2A_URL": "http://127.0.0.1:9",
    "STREAMPROOF_DEADLINE_S": "10",
    "STREAMPROOF_IDLE_S": "2",
}


def test_the_binding_picks_the_sdk_transport() -> None:
    assert Settings.from_env(BASE).protocol_binding == "JSONRPC"  # unset: JSON-RPC
    rest = Settings.from_env({**BASE, "STREAMPROOF_A2A_BINDING": "rest"})
    assert (rest.binding, rest.protocol_binding) == ("rest", "HTTP+JSON")


@pytest.mark.parametrize("value", ["grpc", "soap"])
def test_a_binding_it_does_not_speak_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match=f"STREAMPROOF_A2A_BINDING is '{value}'"):
        Settings.from_env({**BASE, "STREAMPROOF_A2A_BINDING": value})
