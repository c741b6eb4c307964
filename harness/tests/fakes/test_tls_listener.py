"""The HTTPS listener that sees refused handshakes: a completed handshake reaches the
application, a refused one is reported with the client's address and reason, a handshake left
in progress does not hold up close, and a fake's load forgets the refusals."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from streamproof.fakes import tls_listener
from streamproof.fakes.model import FakeModel
from streamproof.fakes.tls import SelfSignedCert
from streamproof.fakes.tls_listener import TlsListener


class _Served:
    """An aiohttp app behind a :class:`TlsListener`, and the refusals it reported."""

    def __init__(self) -> None:
        self.refused: list[tuple[str, str]] = []
        self.cert = SelfSignedCert()

    async def start(self) -> int:
        async def hello(request: web.Request) -> web.Response:
            return web.Response(text=f"hello over {request.scheme}")

        app = web.Application()
        app.router.add_get("/", hello)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        assert self.runner.server is not None
        self.listener = TlsListener(
            self.runner.server, self.cert.server_context(), lambda *r: self.refused.append(r)
        )
        return await self.listener.start("127.0.0.1", 0)

    async def close(self) -> None:
        await asyncio.wait_for(self.listener.close(), 2.0)
        await self.runner.cleanup()
        self.cert.close()


@pytest.fixture
async def served() -> AsyncIterator[tuple[int, list[tuple[str, str]], SelfSignedCert]]:
    server = _Served()
    port = await server.start()
    yield port, server.refused, server.cert
    await server.close()


async def _refusals(refused: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    for _ in range(100):
        if len(refused) >= n:
            break
        await asyncio.sleep(0.02)
    return refused


async def test_a_client_that_trusts_the_certificate_is_served_over_tls(
    served: tuple[int, list[tuple[str, str]], SelfSignedCert],
) -> None:
    port, refused, cert = served
    trusting = ssl.create_default_context(cafile=str(cert.cert_path))
    async with aiohttp.ClientSession() as http:
        for _ in range(2):  # the second request on the same kept-alive connection
            async with http.get(f"https://127.0.0.1:{port}/", ssl=trusting) as resp:
                assert await resp.text() == "hello over https"
    assert refused == []


async def test_a_client_that_does_not_trust_it_is_reported_by_its_address(
    served: tuple[int, list[tuple[str, str]], SelfSignedCert],
) -> None:
    """Python's client leaves without a TLS alert: the refusal is heard all the same, from the
    connection's own local address."""
    port, refused, _ = served
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await http.get(f"https://127.0.0.1:{port}/")
    ((peer, reason),) = await _refusals(refused, 1)
    assert peer.startswith("127.0.0.1:") and peer != f"127.0.0.1:{port}"
    assert reason  # the client closed mid-handshake, or its alert


async def test_a_refusal_names_the_client_connections_own_address(
    served: tuple[int, list[tuple[str, str]], SelfSignedCert],
) -> None:
    port, refused, _ = served
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    local = writer.get_extra_info("sockname")
    writer.write(b"GET / HTTP/1.1\r\n\r\n")  # not TLS at all
    await writer.drain()
    await reader.read()
    writer.close()
    ((peer, reason),) = await _refusals(refused, 1)
    assert peer == f"{local[0]}:{local[1]}"
    assert reason.startswith("TLS error:")


async def test_close_does_not_wait_for_a_handshake_that_never_comes() -> None:
    server = _Served()
    port = await server.start()
    _, writer = await asyncio.open_connection("127.0.0.1", port)  # and says nothing
    await asyncio.sleep(0.05)
    await server.close()  # bounded: within 2 s
    writer.close()
    assert server.refused == []  # abandoned by the listener, not refused by the client


async def test_a_client_that_never_finishes_its_handshake_is_refused_at_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tls_listener, "HANDSHAKE_TIMEOUT", 0.2)
    server = _Served()
    port = await server.start()
    _, writer = await asyncio.open_connection("127.0.0.1", port)  # and says nothing
    try:
        ((_, reason),) = await _refusals(server.refused, 1)
        assert reason.startswith("the handshake was aborted: "), reason
    finally:
        writer.close()
        await server.close()


async def test_a_fakes_load_forgets_the_refusals() -> None:
    model = FakeModel()
    await model.start()
    try:
        url = await model.serve_tls()
        async with aiohttp.ClientSession() as http:
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await http.get(url + "/v1beta/models/m:generateContent")
        for _ in range(100):
            if model.tls_refusals:
                break
            await asyncio.sleep(0.02)
        assert len(model.tls_refusals) == 1 and model.tls_refusals[0].t >= 0
        model.load([])
        assert not model.tls_refusals
    finally:
        await model.close()
