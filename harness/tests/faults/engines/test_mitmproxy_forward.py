"""The mitmproxy engine as a forward proxy that intercepts TLS (the corporate-proxy path): a
client that trusts only the engine's CA reaches the fake Gemini served over HTTPS through it,
the link records each call as on a reverse link, a buffering link holds an SSE response until
it ends, and an idle cut or a stall works on the intercepted stream.

The fake model answers in 200 ms steps; the assertions compare arrival times with wide margins
(hundreds of milliseconds), so a loaded machine does not flip them.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

from harness.tests.conftest import require_module
from streamproof.fakes.model import FakeModel
from streamproof.faults.engines import open_engine
from streamproof.faults.plan import parse_plan
from streamproof.protocol.gemini import ModelTurn

if TYPE_CHECKING:
    from streamproof.faults.engines.mitmproxy import MitmproxyEngine

PATH = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


@pytest.fixture
async def fake() -> AsyncIterator[FakeModel]:
    model = FakeModel()
    await model.start()
    await model.serve_tls()
    model.load([ModelTurn.model_validate({"chunks": ["a ", "b ", "c"], "chunk_delay": "200ms"})])
    yield model
    await model.close()


@pytest.fixture
async def engine() -> AsyncIterator[MitmproxyEngine]:
    require_module("mitmproxy")
    from streamproof.faults.engines.mitmproxy import MitmproxyEngine

    started = open_engine("mitmproxy")
    assert isinstance(started, MitmproxyEngine)
    await started.start()
    yield started
    await started.close()


async def stream(
    url: str, proxy: str, ca: Path, *, timeout: float = 5.0
) -> tuple[list[tuple[float, bytes]], str | None]:
    """POST a streaming call through ``proxy``; (arrival time, bytes) per read, and the error
    that ended it (``None``: a clean end)."""
    context = ssl.create_default_context(cafile=str(ca))
    got: list[tuple[float, bytes]] = []
    t0 = time.monotonic()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                url + PATH,
                json=BODY,
                proxy=proxy,
                ssl=context,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as resp,
        ):
            assert resp.status == 200
            async for chunk in resp.content.iter_any():
                got.append((time.monotonic() - t0, chunk))
    except (aiohttp.ClientError, TimeoutError) as exc:
        return got, type(exc).__name__
    return got, None


def kinds(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


async def test_a_client_that_does_not_trust_the_proxys_ca_is_recorded_as_a_tls_error(
    fake: FakeModel, engine: MitmproxyEngine
) -> None:
    """The handshake with the proxy fails (the client trusts the fake's own certificate, not
    the proxy's CA): the link records it, and no request (GW-PROXY-HONOURED reads that)."""
    link = engine.forward_link("model")
    proxy = await link.start()
    link.set_epoch(time.monotonic())
    assert fake.tls_url is not None and fake._tls is not None
    got, error = await stream(fake.tls_url, proxy, fake._tls.cert_path)
    assert error is not None and not got
    for _ in range(50):  # mitmproxy reports the failed handshake from its own task
        if kinds(link.events, "tls_error"):
            break
        await asyncio.sleep(0.02)
    (failed,) = kinds(link.events, "tls_error")
    assert failed.request is None and failed.detail
    assert not kinds(link.events, "request")
    await link.close()


async def test_the_fake_serves_https_with_a_certificate_made_now_and_removed_on_close() -> None:
    model = FakeModel()
    await model.start()
    url = await model.serve_tls()
    assert url.startswith("https://127.0.0.1:") and model.tls_url == url
    assert await model.serve_tls() == url
    folder = model._tls.folder if model._tls is not None else None
    assert folder is not None and (folder / "key.pem").is_file()
    async with aiohttp.ClientSession() as http:
        # Nobody trusts it: only a client that does not verify (the proxy) gets through, and
        # the fake records the handshake every other client gives up.
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await http.post(url + PATH, json=BODY)
    for _ in range(100):
        if model.tls_refusals:
            break
        await asyncio.sleep(0.02)
    (refusal,) = model.tls_refusals
    assert refusal.peer.startswith("127.0.0.1:") and not model.calls
    await model.close()
    assert not folder.exists() and model.tls_url is None


async def test_a_forward_link_intercepts_tls_and_records_every_call(
    fake: FakeModel, engine: MitmproxyEngine
) -> None:
    link = engine.forward_link("model")
    proxy = await link.start()
    assert proxy.startswith("http://127.0.0.1:")
    link.set_epoch(time.monotonic())
    assert fake.tls_url is not None
    for _ in range(2):
        fake.load([ModelTurn.model_validate({"chunks": ["a ", "b ", "c"], "chunk_delay": "10ms"})])
        got, error = await stream(fake.tls_url, proxy, engine.ca_cert)
        assert error is None and b"".join(c for _, c in got).count(b"data: ") == 3
    requests = kinds(link.events, "request")
    assert [r.path for r in requests] == [PATH.split("?")[0]] * 2
    assert [(e.how, e.by) for e in kinds(link.events, "end")] == [("clean", "upstream")] * 2
    assert len(kinds(link.events, "event")) == 6
    # The proxy's connections to the model: named by their local address, and none of their
    # handshakes refused (the proxy does not verify the fake's certificate).
    assert link.upstream_addresses
    assert all(a.startswith("127.0.0.1:") for a in link.upstream_addresses)
    assert not fake.tls_refusals
    await link.close()


async def test_a_buffering_link_sends_the_sse_response_whole_once_it_ended(
    fake: FakeModel, engine: MitmproxyEngine
) -> None:
    assert fake.tls_url is not None
    streaming = engine.forward_link("model")
    buffering = engine.forward_link("model", buffer_sse=True)
    arrivals: dict[str, list[float]] = {}
    for name, link in (("streaming", streaming), ("buffering", buffering)):
        proxy = await link.start()
        link.set_epoch(time.monotonic())
        fake.load([ModelTurn.model_validate({"chunks": ["a ", "b ", "c"], "chunk_delay": "200ms"})])
        got, error = await stream(fake.tls_url, proxy, engine.ca_cert)
        assert error is None
        assert b"".join(c for _, c in got).count(b"data: ") == 3
        arrivals[name] = [t for t, _ in got]
        assert len(kinds(link.events, "event")) == 3, link.events
        await link.close()
    # streamed: the first event ~0.2 s, the last ~0.6 s; buffered: everything after ~0.6 s
    assert arrivals["streaming"][-1] - arrivals["streaming"][0] > 0.25
    assert arrivals["buffering"][0] > 0.5
    # together: within one 0.2 s chunk gap (streamed, they spread over two)
    assert arrivals["buffering"][-1] - arrivals["buffering"][0] < 0.2
    with pytest.raises(ValueError, match="buffers SSE"):
        buffering.load(parse_plan([{"when": {"idle": "1s"}, "do": "fin"}]))


@pytest.mark.parametrize("how", ["fin", "rst"])
async def test_an_idle_cut_on_the_intercepted_stream(
    fake: FakeModel, engine: MitmproxyEngine, how: str
) -> None:
    assert fake.tls_url is not None
    fake.load([ModelTurn.model_validate({"chunks": ["a ", {"text": "b", "delay": "3s"}]})])
    link = engine.forward_link("model")
    proxy = await link.start()
    link.load(parse_plan([{"when": {"idle": "300ms"}, "do": how}]))
    link.set_epoch(time.monotonic())
    t0 = time.monotonic()
    got, error = await stream(fake.tls_url, proxy, engine.ca_cert)
    assert error is not None and time.monotonic() - t0 < 2.5
    assert b"".join(c for _, c in got).count(b"data: ") == 1
    (end,) = kinds(link.events, "end")
    assert (end.how, end.by) == (how, "proxy")
    await link.close()


async def test_a_stall_is_a_black_hole_nothing_arrives_and_nothing_closes(
    fake: FakeModel, engine: MitmproxyEngine
) -> None:
    assert fake.tls_url is not None
    link = engine.forward_link("model")
    proxy = await link.start()
    link.load(parse_plan([{"when": {"after_event": 1}, "do": "stall"}]))
    link.set_epoch(time.monotonic())
    got, error = await stream(fake.tls_url, proxy, engine.ca_cert, timeout=1.5)
    assert error == "TimeoutError"  # the client's own bound ended it, nothing else
    assert b"".join(c for _, c in got).count(b"data: ") == 1
    assert not kinds(link.events, "end") or kinds(link.events, "end")[0].by == "client"
    await link.close()


@pytest.mark.parametrize(
    "fault",
    [
        {"when": {"after": "1s"}, "do": "end_clean"},
        {"when": {"after_event": 1}, "do": {"stall": {"for": "1s"}}},
    ],
)
async def test_a_forward_link_rejects_what_would_write_outside_the_body(
    engine: MitmproxyEngine, fault: dict[str, Any]
) -> None:
    link = engine.forward_link("model")
    with pytest.raises(ValueError, match="intercepts TLS"):
        link.load(parse_plan([fault]))
    # the same plan is fine on a reverse link, and cuts are fine on a forward one
    engine.link("model", "http://127.0.0.1:9").load(parse_plan([fault]))
    link.load(
        parse_plan(
            [{"when": {"idle": "1s"}, "do": "rst"}, {"when": {"after_event": 2}, "do": "end_clean"}]
        )
    )
