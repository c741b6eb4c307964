"""``message/send`` and ``message/stream`` (``SendMessage``, ``SendStreamingMessage`` in 1.0).

A message without parts is refused (-32602). A message without a ``taskId`` creates a task
(its stream opens with the ``submitted`` Task snapshot) or, when the script has a ``reply``,
is answered with a direct Message. A message with the ``taskId`` of a task waiting for input
runs the next turn; any other ``taskId`` is refused (-32001 unknown, -32004/-32602
finished, -32602 another context, -32004 still working). ``message/send`` waits for the end
of the turn unless the client said not to block. Every message is recorded as a
:class:`~streamproof.fakes.a2a.ledger.MessageRecord`.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from aiohttp import web

from streamproof.fakes.a2a.call import _Call
from streamproof.fakes.a2a.ledger import MessageRecord
from streamproof.fakes.a2a.state import _LiveTask, _Subscriber
from streamproof.protocol import a2a


class _MessageMethods(_Call):
    """The ``message/*`` family of a call."""

    async def _message(self, params: a2a.SendParams) -> web.StreamResponse:
        run, fake, message = self.run, self.fake, params.message
        script = run.script
        assert script is not None
        text = a2a.text_of(message.parts)
        streaming = self.rpc.op == "stream"

        def note(
            outcome: Literal["created", "continued", "reply", "rejected"], code: int | None = None
        ) -> None:
            run.messages.append(
                MessageRecord(
                    t=self.state.t,
                    request=self.state.index,
                    message_id=message.message_id,
                    task_id=message.task_id,
                    context_id=message.context_id,
                    text=text,
                    outcome=outcome,
                    error_code=code,
                )
            )

        if not message.parts:
            # a2a.proto marks Message.parts REQUIRED (0.3's types.ts too); a2a-sdk 1.3 checks
            # it while handling the call, so a streaming call's refusal goes where its other
            # errors go (a one-frame SSE stream on 0.3 by default)
            note("rejected", a2a.INVALID_PARAMS)
            return await self._fail(
                self._error(
                    a2a.INVALID_PARAMS,
                    "Validation failed: message.parts must contain at least one part",
                )
            )
        if message.task_id is not None:
            self.state.task_id = message.task_id
            live = run.tasks.get(message.task_id)
            error: a2a.RpcError | None = None
            if live is None:
                error = self._error(a2a.TASK_NOT_FOUND, f"Task {message.task_id} not found")
            elif message.context_id is not None and message.context_id != live.context_id:
                error = self._error(
                    a2a.INVALID_PARAMS,
                    f"Context {message.context_id} does not match context "
                    f"{live.context_id} of task {live.id}",
                )
            elif live.phase == "terminal":
                code = self.server.terminal_message_error
                error = self._error(code, self._terminal_text(live, code))
            elif live.phase == "running":
                error = self._error(
                    a2a.UNSUPPORTED_OPERATION,
                    f"Task {live.id} is {live.task.status.state.value}, not waiting for input; "
                    "this agent does not queue messages",
                )
            elif live.follow_up is None:
                error = self._error(
                    a2a.UNSUPPORTED_OPERATION,
                    f"Task {live.id} is waiting for input, but the scenario scripts no "
                    "follow-up for it",
                )
            if error is not None or live is None:
                assert error is not None
                note("rejected", error.code)
                return await self._fail(error)
            note("continued")
            sub = _Subscriber() if streaming else None
            if params.push is not None and script.push is not None:
                fake._push.register(live.task, params.push, self.state.index)
            fake._continue_task(run, live, message, sub)
            if sub is not None:
                return await self._stream(sub, (), live)
            return await self._settle(live, params)

        own = run.script_for(text)
        if own is None:
            # --concurrency: a new call's message must hold its own marker to be answered
            # from its own script (the prompt the harness gave the client holds it).
            note("rejected", a2a.INTERNAL_ERROR)
            return await self._fail(
                self._error(
                    a2a.INTERNAL_ERROR,
                    "streamproof --concurrency: this message holds no call's marker, or "
                    "several (a client sends the prompt it was given)",
                )
            )
        script = own
        if script.reply is not None:
            note("reply")
            reply = a2a.Message(
                message_id=a2a.new_id(),
                role="agent",
                parts=(a2a.TextPart(text=script.reply.text),),
                context_id=message.context_id or a2a.new_id(),
            )
            delay = run.scale(script.reply.at)
            if streaming:
                sub = _Subscriber()
                asyncio.get_running_loop().call_later(delay, sub.push, reply)
                return await self._stream(sub, (), None)
            outcome = await self._wait(delay, None)
            if outcome is not None:
                return self._abandon(outcome)
            return await self._result(a2a.encode_send_result(reply, self.version))

        sub = _Subscriber() if streaming else None
        live = fake._create_task(run, self.state, message, sub, script)
        self.state.task_id = live.id
        note("created")
        if params.push is not None and script.push is not None:
            fake._push.register(live.task, params.push, self.state.index)
        if sub is not None:
            return await self._stream(sub, (live.task,), live, params.history_length)
        return await self._settle(live, params)

    async def _settle(self, live: _LiveTask, params: a2a.SendParams) -> web.StreamResponse:
        """``message/send``: wait for the end of the turn unless the client asked not to."""
        if params.blocking is not False:
            outcome = await self._wait(None, live.turn_over)
            if outcome is not None:
                return self._abandon(outcome)
        result = a2a.encode_send_result(
            live.task, self.version, history_length=params.history_length
        )
        return await self._result(result)
