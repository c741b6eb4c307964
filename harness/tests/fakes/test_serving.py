"""Every fake and the inline proxy listen with a queue of LISTEN_BACKLOG connections, so a
burst of clients opening streams at once is queued by the kernel, not dropped (a dropped SYN
costs its client a second or more: ``python -m streamproof.bench.a2a_fanout`` counted 2,501 such
drops for 1,000 streams through the inline proxy, with asyncio's default queue of 100)."""

from __future__ import annotations

import subprocess
from urllib.parse import urlsplit

import pytest

from harness.tests.conftest import require_executable
from streamproof.fakes.a2a import FakeA2AServer
from streamproof.fakes.model import FakeModel
from streamproof.fakes.serving import LISTEN_BACKLOG
from streamproof.faults.engines.inline import InlineProxy


def _somaxconn() -> int:
    with open("/proc/sys/net/core/somaxconn", encoding="ascii") as f:
        return int(f.read())


def listen_queue(url: str) -> int:
    """The accept queue the kernel gives the listening socket behind ``url`` (``ss`` shows it
    as the Send-Q of a LISTEN socket)."""
    ss = require_executable("ss")
    port = urlsplit(url).port
    out = subprocess.run(
        [str(ss), "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out and out[0] == "LISTEN", out
    return int(out[2])


@pytest.fixture
def expected() -> int:
    try:
        cap = _somaxconn()
    except OSError:
        pytest.skip("no /proc/sys/net/core/somaxconn: not Linux")
    assert LISTEN_BACKLOG > 128  # above aiohttp's and asyncio's defaults
    return min(LISTEN_BACKLOG, cap)


async def test_the_fakes_listen_with_the_long_queue(expected: int) -> None:
    fake, model = FakeA2AServer(), FakeModel()
    try:
        assert listen_queue(await fake.start()) == expected
        assert listen_queue(await model.start()) == expected
        assert listen_queue(await model.serve_tls()) == expected
    finally:
        await fake.close()
        await model.close()


async def test_the_inline_proxy_listens_with_the_long_queue(expected: int) -> None:
    proxy = InlineProxy("a2a", "http://127.0.0.1:9")
    try:
        assert listen_queue(await proxy.start()) == expected
    finally:
        await proxy.close()
