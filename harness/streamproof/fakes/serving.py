"""The one way a fake serves HTTP: aiohttp on loopback, handler cancellation on.

Handler cancellation matters to every fake: it is how a fake learns at once that its caller
went away (``closed_early``, a client's dropped stream), even when nothing is being written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

MAX_BODY = 64 * 1024 * 1024
"""aiohttp's 1 MiB default is too small for long agent histories."""

LISTEN_BACKLOG = 1024
"""Connections the kernel may queue on a listening socket before the server accepts them
(the kernel caps it at ``net.core.somaxconn``). aiohttp's default (128) and asyncio's (100)
drop the SYNs of a burst of clients opening streams at once: each dropped one is retried by
the client's kernel a second or more later, a delay no scenario asked for
(``python -m streamproof.bench.a2a_fanout`` counts them as listen queue overflows)."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def serve(
    handler: Handler, host: str, port: int, *, route: str = "/{tail:.*}", method: str = "*"
) -> tuple[web.AppRunner, str]:
    """Serve every request on ``route`` with ``handler``; the runner and the base URL."""
    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_route(method, route, handler)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port, backlog=LISTEN_BACKLOG).start()
    except BaseException:
        await runner.cleanup()  # a port already taken must not leave the runner behind
        raise
    return runner, f"http://{host}:{runner.addresses[0][1]}"
