"""The fake A2A server on the HTTP+JSON (REST) binding: routes in, the same calls, REST out.

A request whose path is one of A2A 1.0's REST routes (``POST /message:stream``,
``GET /tasks/{id}``...: :func:`streamproof.protocol.a2a.match_route`) is decoded into the same
:class:`~streamproof.protocol.a2a.RpcRequest` a JSON-RPC call makes and answered by the same
method families (:mod:`~streamproof.fakes.a2a.messages`, :mod:`~streamproof.fakes.a2a.tasks`),
on the same task clock; only the writing differs (:class:`_RestCall`): a result is the bare
1.0 object as ``application/a2a+json``, each stream event a bare ``StreamResponse``, an error an
HTTP status with a ``google.rpc.Status``-shaped body, always JSON (a2a-sdk 1.3 reads a stream's
first event before it answers, so an error found while handling a stream is never an SSE
frame). The request is recorded with the 1.0 method its route stands for and ``binding:
rest``, so every client check reads a REST client's ledger as it reads a JSON-RPC one.

REST is served beside JSON-RPC whenever the loaded script's wire has 1.0 (``1.0`` or
``both``); the card advertises the run's binding (:meth:`FakeA2AServer.load`). A 0.3 script
has no REST routes: A2A 0.3's own HTTP+JSON routes (``/v1/...``, another JSON grammar) are not
served (docs/reference/a2a-client-contract.md#bindings).
"""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web

from streamproof.fakes.a2a.call import _Fake
from streamproof.fakes.a2a.dispatch import _RpcCall
from streamproof.fakes.a2a.state import _Event, _RequestState, _Run
from streamproof.protocol import a2a

__all__ = ["answer_rest", "serves_rest"]

_EXCERPT: Final = 500
_TEXT: Final = "text/plain; charset=utf-8"


def serves_rest(run: _Run) -> bool:
    """Whether this load serves the REST routes: a script whose wire has 1.0."""
    return run.script is not None and run.script.server.wire != "0.3"


async def answer_rest(
    fake: _Fake, run: _Run, request: web.Request, state: _RequestState, path: str
) -> web.StreamResponse:
    """Answer a request on a REST path (``path``: without the ``--concurrency`` prefix)."""
    route = a2a.match_route(request.method, path)
    if isinstance(route, a2a.RestMiss):
        return await fake._send_json(
            run, request, state, route.text, status=route.status, content_type=_TEXT
        )
    state.binding = "rest"
    state.rpc_method = route.method
    state.wire = "1.0"
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        error = a2a.rpc_error(a2a.INVALID_REQUEST, "Payload too large", method=route.method)
        return await _error(fake, run, request, state, error)
    if body:
        try:
            state.params = a2a.loads(body)
        except ValueError:
            state.body_excerpt = body[:_EXCERPT].decode("utf-8", errors="replace")
    elif request.query:
        state.params = dict(request.query)
    decoded = a2a.decode_rest_request(
        route, body=body, query=request.query.items(), a2a_version=state.a2a_version
    )
    if isinstance(decoded, a2a.RpcError):
        return await _error(fake, run, request, state, decoded)
    assert run.script is not None
    server = run.script.server
    if decoded.streaming and not server.streaming:
        error = a2a.rpc_error(
            a2a.UNSUPPORTED_OPERATION,
            "Streaming is not supported by the agent",
            method=decoded.method,
        )
        return await _error(fake, run, request, state, error)
    call = _RestCall(fake, run, request, state, decoded, "1.0", server)
    return await call.answer()


async def _error(
    fake: _Fake,
    run: _Run,
    request: web.Request,
    state: _RequestState,
    error: a2a.RpcError,
) -> web.StreamResponse:
    state.error_code = error.code
    status, payload = a2a.encode_rest_error(error)
    return await fake._send_json(
        run, request, state, payload, status=status, content_type=a2a.REST_ERROR_CONTENT_TYPE
    )


class _RestCall(_RpcCall):
    """A call that came on the REST binding: the same answers, written the REST way."""

    async def _json_error(self, error: a2a.RpcError) -> web.StreamResponse:
        return await _error(self.fake, self.run, self.request, self.state, error)

    async def _fail(self, error: a2a.RpcError) -> web.StreamResponse:
        # a2a-sdk 1.3 reads a stream's first event before it answers: an error found while
        # handling any REST call, a stream included, is a JSON error with its HTTP status
        return await self._json_error(error)

    async def _result(self, result: object) -> web.StreamResponse:
        return await self.fake._send_json(
            self.run, self.request, self.state, result, content_type=a2a.REST_CONTENT_TYPE
        )

    def _error_block(self, error: a2a.RpcError) -> tuple[Any, str | None]:
        """An error in a REST stream: the REST error body, ``event: error``."""
        _, payload = a2a.encode_rest_error(error)
        return payload, "error"

    def _event_payload(self, item: _Event, history_length: int | None) -> Any:
        """An event in a REST stream: the bare ``StreamResponse``, no JSON-RPC envelope."""
        return a2a.encode_stream_event(item, "1.0", history_length=history_length)
