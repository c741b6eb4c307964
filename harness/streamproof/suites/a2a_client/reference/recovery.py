"""One call's streams and their recovery, on top of its state (:mod:`.call`).

The message's stream and a resubscribe's, consumed one at a time; the idle watchdog; one
recovery for loud and quiet drops (no task id yet -> fail, never resend; otherwise a
``tasks/get`` snapshot, then ``tasks/resubscribe``; fruitless attempts back off, bounded); the
check of the artifacts after a resubscribe without a snapshot; ``tasks/cancel`` on deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Final

from a2a.helpers import new_text_message
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)

from streamproof.suites.a2a_client.reference.call import _STATUS, StreamCall, log

MAX_RECOVERIES: Final = 5
"""Recoveries in a row without a single event in between before the call fails."""
CANCEL_WAIT_S: Final = 2.0


class RecoveringCall(StreamCall):
    """A :class:`~streamproof.suites.a2a_client.reference.call.StreamCall` with its streams, its
    watchdog, its recovery and its cancel."""

    # --- streams -------------------------------------------------------------------------------

    def start(self) -> None:
        """Send the call's message (the original one: a resend, by a mutant, is the same)."""
        task_id, context_id = self.given
        message = new_text_message(
            self.settings.prompt, role=Role.ROLE_USER, task_id=task_id, context_id=context_id
        )
        self._consume(self.client.send_message(SendMessageRequest(message=message)), "message")

    def _consume(self, stream: AsyncIterator[StreamResponse], source: str) -> None:
        self.consumer = asyncio.create_task(self._pump(stream, source))

    async def _pump(self, stream: AsyncIterator[StreamResponse], source: str) -> None:
        try:
            async for event in stream:
                self.on_event(event, source)
                if self.done.done():
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a loud drop: connection reset, HTTP error, error frame
            self.dropped(f"{type(exc).__name__}: {exc}")
            return
        finally:
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                with contextlib.suppress(Exception):
                    await closing()
        if not self.done.done():
            self.dropped("the stream ended before the task did")

    async def stop_consumer(self) -> None:
        consumer, self.consumer = self.consumer, None
        if consumer is not None and consumer is not asyncio.current_task():
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await consumer

    # --- recovery ------------------------------------------------------------------------------

    def dropped(self, why: str) -> None:
        """Both kinds of drop end here (the seed's ``onError`` and its watchdog)."""
        if self.done.done() or (self.recovery is not None and not self.recovery.done()):
            return
        if self.bug == "hang-on-early-drop" and self.task_id is None:
            return  # no task id to recover by, and the call is not failed: it waits
        log.warning("stream dropped: %s", why)
        self.recovery = asyncio.create_task(self.recover(why))

    async def watchdog(self) -> None:
        every = max(min(self.settings.idle / 10, 1.0), 0.01)
        loop = asyncio.get_running_loop()
        while not self.done.done():
            await asyncio.sleep(every)
            quiet = loop.time() - self.last_event
            if quiet > self.settings.idle and (self.recovery is None or self.recovery.done()):
                self.dropped(f"no event for {quiet:.2f}s (idle limit {self.settings.idle:g}s)")

    async def recover(self, why: str) -> None:
        await self.stop_consumer()
        while not self.done.done():
            if self.task_id is None and self.bug != "resend-on-drop":
                self.fail(
                    f"the stream dropped before the first event ({why}); not resending the "
                    "message, which could start a second task"
                )
                return
            self.fruitless += 1
            if self.fruitless > MAX_RECOVERIES:
                self.fail(f"gave up after {MAX_RECOVERIES} recoveries without an event ({why})")
                return
            if self.fruitless > 1:  # bounded backoff between fruitless attempts
                base = max(self.settings.idle / 20, 0.05)
                await asyncio.sleep(min(base * 2 ** (self.fruitless - 2), self.settings.idle))
            try:
                if self.bug == "resend-on-drop":
                    self.start()
                else:
                    await self.snapshot_then_resubscribe()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                why = f"{type(exc).__name__}: {exc}"
                log.warning("recovery attempt %d failed: %s", self.fruitless, why)

    async def snapshot_then_resubscribe(self) -> None:
        assert self.task_id is not None
        task_id = self.task_id
        if self.bug != "resubscribe-without-snapshot":
            snap = await self.client.get_task(GetTaskRequest(id=task_id))
            if self.bug != "truncated-as-complete":
                if snap.artifacts:
                    self.replace_from(snap.artifacts)
                elif self.buffers and self.bug != "snapshot-without-artifacts-ignored":
                    self.incomplete = True  # gap chunks are not replayed
                # The buffers are the task's own now: an earlier resubscribe that was refused
                # leaves nothing to verify (the recipe's flow has no second look).
                self.unverified = False
            if self.bug == "resubscribe-after-terminal":
                with contextlib.suppress(Exception):  # the server refuses: the task is done
                    async for _event in self.client.subscribe(SubscribeToTaskRequest(id=task_id)):
                        break
            self.on_state(snap.status)  # may already be final
            if self.done.done():
                return
        self.resubscribe(task_id)

    def resubscribe(self, task_id: str) -> None:
        log.info("resubscribing to task %s", task_id)
        self.last_event = asyncio.get_running_loop().time()  # a fresh idle window
        self.unverified = True
        self._consume(self.client.subscribe(SubscribeToTaskRequest(id=task_id)), "resubscribe")

    async def verify(self) -> None:
        """A task that completed after a resubscribe without a snapshot: take the final
        artifacts from the task itself (the chunks of the gap were never streamed to us)."""
        if self.task_id is None:
            return
        try:
            snap = await self.client.get_task(GetTaskRequest(id=self.task_id))
        except Exception as exc:
            log.warning("could not verify the artifacts: %s", exc)
            self.incomplete = True
            return
        if snap.artifacts:
            self.replace_from(snap.artifacts)

    async def cancel_quietly(self) -> None:
        """``cancelTask`` on deadline; the server may refuse, log it either way."""
        if self.task_id is None:
            return
        try:
            wait = min(CANCEL_WAIT_S, max(self.settings.idle / 2, 0.25))  # the result is due
            task = await asyncio.wait_for(
                self.client.cancel_task(CancelTaskRequest(id=self.task_id)), wait
            )
            log.info("cancel: task %s is %s", self.task_id, _STATUS.get(task.status.state))
        except Exception as exc:
            log.info("cancel: task %s not cancelled: %s", self.task_id, exc)

    async def close(self) -> None:
        await self.stop_consumer()
        recovery, self.recovery = self.recovery, None
        if recovery is not None and not recovery.done():
            recovery.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await recovery
