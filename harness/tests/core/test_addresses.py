"""One way a connection's address is written: what links and fakes match records on."""

from __future__ import annotations

from streamproof.core.addresses import address


def test_a_socket_address_is_host_colon_port() -> None:
    assert address(("127.0.0.1", 51000)) == "127.0.0.1:51000"
    assert address(("::1", 51000, 0, 0)) == "::1:51000"  # as a link has always written it


def test_no_address_is_empty() -> None:
    assert address(None) == ""
    assert address("/tmp/socket") == ""
