"""One decoded call answered by its method family, whichever binding carried it.

:class:`_RpcCall` is the JSON-RPC call; :class:`~streamproof.fakes.a2a.rest._RestCall` is the
same call on the REST binding, which only changes how results, errors and stream events are
written.
"""

from __future__ import annotations

from aiohttp import web

from streamproof.fakes.a2a.messages import _MessageMethods
from streamproof.fakes.a2a.tasks import _TaskMethods
from streamproof.protocol import a2a


class _RpcCall(_MessageMethods, _TaskMethods):
    """One decoded JSON-RPC call, answered by its method family."""

    async def answer(self) -> web.StreamResponse:
        params = self.rpc.params
        if isinstance(params, a2a.SendParams):
            return await self._message(params)
        if isinstance(params, a2a.TaskQueryParams):
            return await self._get(params)
        if isinstance(params, a2a.ListTasksParams):
            return await self._list(params)
        if self.rpc.op == "cancel":
            return await self._cancel(params)
        return await self._resubscribe(params)
