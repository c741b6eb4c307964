"""The reference gateway's HTTP side: the aiohttp endpoints, bearer auth, a turn's stream, history.

:class:`Gateway` serves ``/healthz``, the chat endpoint of its wire (one ADK run, streamed) and
``GET /history/{sessionId}`` (the stored session). The wire is a setting: ``POST
/chat/{sessionId}`` with the seed's typed frames
(:class:`~streamproof.suites.gateway.reference.frames.FrameWriter`), ``POST /ag-ui`` with AG-UI
events (``ag_ui.py``) or ``POST /api/chat`` with the AI SDK UI message stream (``ai_sdk.py``);
the run loop is the same for all three (``stream.py``). It owns the seed's disposal rules: the
run is closed when the client goes away, on timeout, when a write fails and when the process
stops. Under ``on_disconnect: detach`` a run whose client went away goes on unseen instead,
within its bound, holding its session's turn lock until it ends (ADK stores its aggregate once).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import weakref
from collections.abc import Coroutine
from typing import Any, NoReturn

from aiohttp import web
from google.adk.agents.run_config import RunConfig, StreamingMode  # type: ignore[attr-defined]
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from streamproof.suites.gateway.reference import ag_ui, ai_sdk
from streamproof.suites.gateway.reference.agent import AGENT_NAME, APP_NAME, post_tool
from streamproof.suites.gateway.reference.config import Settings
from streamproof.suites.gateway.reference.frames import ClientGoneError, FrameWriter, event_text
from streamproof.suites.gateway.reference.stream import (
    BadRequestError,
    Ending,
    TurnRequest,
    TurnStream,
    TypedFrameStream,
)

log = logging.getLogger(__name__)


def _json_error(exc_cls: type[web.HTTPException], message: str, **kw: Any) -> NoReturn:
    raise exc_cls(text=json.dumps({"error": message}), content_type="application/json", **kw)


class Gateway:
    """The endpoints: ``/healthz``, ``POST /chat/{sessionId}``, ``GET /history/{sessionId}``."""

    def __init__(self, settings: Settings, runner: Runner, sessions: SqliteSessionService) -> None:
        self.settings = settings
        self.bug = settings.bug
        self.runner = runner
        self.sessions = sessions
        # One turn at a time per session, as ADK Java's Runner does (Python's does not): two
        # concurrent turns on one SQLite session would otherwise trip ADK's stale-session check.
        self._locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        # The deadlines of the turns in progress: stop_streams() expires them so that every open
        # stream ends with a terminal frame when the process is told to stop.
        self._deadlines: set[asyncio.Timeout] = set()
        self._stopping = False
        self._orphans: set[asyncio.Future[None]] = set()  # only the no-dispose mutant has any
        self._detached: set[asyncio.Future[web.StreamResponse]] = set()  # on_disconnect: detach
        self._shared_draft = ""  # only the shared-draft mutant uses it: one for every session
        self._latest_session = ""  # only the last-session-wins mutant reads it

    def make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/healthz", self.healthz)
        if self.settings.wire == "ag-ui":
            app.router.add_post(ag_ui.PATH, self.chat)
        elif self.settings.wire == "ai-sdk-ui":
            app.router.add_post(ai_sdk.PATH, self.chat)
        else:
            app.router.add_post("/chat/{sessionId}", self.chat)
        app.router.add_get("/history/{sessionId}", self.history)
        return app

    def stop_streams(self) -> None:
        """Cancel every run in progress; each stream ends with the run-failure error."""
        self._stopping = True
        now = asyncio.get_running_loop().time()
        for deadline in list(self._deadlines):
            deadline.reschedule(now)

    async def close(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for detached runs to end (:meth:`stop_streams` expired
        their bounds), then cancel what is left."""
        if not self._detached:
            return
        _, pending = await asyncio.wait(set(self._detached), timeout=grace)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def healthz(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text="ok")

    def _authenticate(self, request: web.Request) -> str:
        """The user behind ``Authorization: Bearer <token>``, or a 401 before any stream."""
        if self.bug == "no-auth":
            return "alice"
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        user = self.settings.users_by_token.get(token.strip())
        if scheme.lower() != "bearer" or user is None:
            _json_error(
                web.HTTPUnauthorized,
                "missing or unknown bearer token",
                headers={"WWW-Authenticate": 'Bearer realm="streamproof"'},
            )
        return user

    async def chat(self, request: web.Request) -> web.StreamResponse:
        user = self._authenticate(request)
        turn = await self._read_turn(request)
        serving = self._serve_turn(request, user, turn)
        if self.settings.on_disconnect != "detach":
            return await serving
        # Detach: the turn runs in a task of its own, so the handler's cancellation when the
        # client goes away does not reach the run; the task ends within the run bound.
        task = asyncio.ensure_future(serving)
        self._detached.add(task)
        task.add_done_callback(self._detached_done)
        return await asyncio.shield(task)

    def _detached_done(self, task: asyncio.Future[web.StreamResponse]) -> None:
        self._detached.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log.warning("detached turn failed: %s: %s", type(exc).__name__, exc)

    async def _read_turn(self, request: web.Request) -> TurnRequest:
        """The turn the request asks for, as its wire states it; a 400 naming what is wrong."""
        streaming = request.query.get("mode", "").lower() != "none"
        if self.settings.wire == "typed-frames":
            session_id = request.match_info["sessionId"]
            text = await request.text()
            if not text.strip():
                _json_error(web.HTTPBadRequest, "empty message: send the user's text as the body")
            return TurnRequest(session_id=session_id, text=text, streaming=streaming)
        read = ag_ui.read_request if self.settings.wire == "ag-ui" else ai_sdk.read_request
        try:
            turn = read(json.loads(await request.text()))
        except json.JSONDecodeError as exc:
            _json_error(web.HTTPBadRequest, f"the body is not JSON: {exc}")
        except BadRequestError as exc:
            _json_error(web.HTTPBadRequest, str(exc))
        return dataclasses.replace(turn, streaming=streaming)

    def _response_headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": (
                "application/json" if self.bug == "json-not-sse" else "text/event-stream"
            ),
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        }
        if self.settings.wire == "ai-sdk-ui" and self.bug != "aisdk-no-stream-header":
            headers.update(ai_sdk.HEADERS)
        return headers

    def _make_stream(
        self, response: web.StreamResponse, session_id: str, run_id: str
    ) -> TurnStream:
        if self.settings.wire == "ag-ui":
            return ag_ui.AgUiStream(response, session_id, run_id, self.bug)
        if self.settings.wire == "ai-sdk-ui":
            return ai_sdk.AiSdkStream(response, self.bug)
        return TypedFrameStream(FrameWriter(response, self.bug))

    async def _serve_turn(
        self, request: web.Request, user: str, turn: TurnRequest
    ) -> web.StreamResponse:
        session_id = turn.session_id
        key = (user, session_id)
        if self.bug == "global-turn-lock":
            key = ("*", "*")  # mutant: one turn at a time in the whole process
        if self.bug == "last-session-wins":
            self._latest_session = session_id  # mutant: process-wide "current session"
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            await self._ensure_session(user, session_id)
            response = web.StreamResponse(status=200, headers=self._response_headers())
            await response.prepare(request)
            stream = self._make_stream(response, session_id, turn.run_id)
            if self.bug == "last-session-wins":
                # Mutant: the run goes to the session whose request came last, which is this
                # request's own only while one session is served at a time.
                session_id = self._latest_session
            run = self._stream_turn(
                response, user, session_id, turn.text, turn.streaming, stream=stream
            )
            if self.bug == "no-dispose":
                # Mutant: the run is detached from the request, so a closed tab does not
                # cancel it (the seed's "Orphaned runs").
                task = asyncio.ensure_future(run)
                self._orphans.add(task)
                task.add_done_callback(self._orphans.discard)
                await asyncio.shield(task)
            else:
                await run
        return response

    async def _ensure_session(self, user: str, session_id: str) -> None:
        found = await self.sessions.get_session(
            app_name=APP_NAME, user_id=user, session_id=session_id
        )
        if found is None:
            with contextlib.suppress(AlreadyExistsError):
                await self.sessions.create_session(
                    app_name=APP_NAME, user_id=user, session_id=session_id
                )

    async def _stream_turn(
        self,
        response: web.StreamResponse,
        user: str,
        session_id: str,
        text: str,
        streaming: bool,
        *,
        stream: TurnStream | None = None,
    ) -> None:
        budget = (
            {} if self.bug == "no-llm-budget" else {"max_llm_calls": self.settings.max_llm_calls}
        )
        run_config = RunConfig(
            streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE, **budget
        )
        if stream is None:
            stream = self._make_stream(response, session_id, "")
        # Mutant no-run-timeout: no bound at all, so a model stream that goes quiet without
        # closing (a black hole; google-genai sets no read timeout) holds the run for ever.
        bound = None if self.bug == "no-run-timeout" else self.settings.run_timeout
        deadline = asyncio.timeout(bound)
        draft = ""  # what the browser has been shown of the answer in progress
        if self.bug == "shared-draft":
            self._shared_draft = ""  # mutant: a new turn starts the one process-wide draft
        seen = True  # False once a detached run's client has gone: the run goes on unseen
        answer: Event | None = None  # the run's last text answer (detach-persist-twice only)
        ending: Ending
        try:
            async with (
                deadline,
                contextlib.aclosing(
                    self.runner.run_async(
                        user_id=user,
                        session_id=session_id,
                        new_message=types.Content(role="user", parts=[types.Part(text=text)]),
                        run_config=run_config,
                    )
                ) as events,
            ):
                self._deadlines.add(deadline)
                try:
                    if self._stopping:
                        deadline.reschedule(asyncio.get_running_loop().time())
                    seen = await self._show(stream.begin())
                    async for event in events:
                        await self._mutant_side_effects(event, user, session_id)
                        if event.partial:
                            draft += event_text(event)
                        elif not event.error_code:
                            draft = ""  # an aggregate settled it
                            if event.is_final_response() and event_text(event):
                                answer = event
                        if self.bug == "shared-draft":
                            event = self._from_shared_draft(event)
                        if seen:
                            seen = await self._show(stream.send_event(event))
                        if stream.ended:
                            break  # an error event ended the stream: the run stops here
                finally:
                    self._deadlines.discard(deadline)
            ending = Ending.DONE
        except ClientGoneError:
            log.info("client went away; run for session %r closed", session_id)
            return
        except TimeoutError as exc:
            if not deadline.expired():
                ending = self._run_failed(exc)
            elif self._stopping:
                log.warning("gateway stopping; run for session %r cancelled", session_id)
                ending = Ending.FAILED
            else:
                log.warning("run for session %r timed out; cancelled", session_id)
                ending = Ending.TIMED_OUT
        except Exception as exc:  # ADK raises after a model error event, or on the LLM budget
            ending = self._run_failed(exc)
            if self.bug == "persist-draft-on-error" and draft:
                await self._store_draft(user, session_id, draft)
        if stream.ended:
            if self.bug == "persist-draft-on-error" and draft:
                await self._store_draft(user, session_id, draft)
            return
        if not seen:
            log.info("detached run for session %r ended (%s)", session_id, ending.value)
            if self.bug == "detach-persist-twice" and ending is Ending.DONE and answer:
                await self._store_again(user, session_id, answer)
            return
        if self.bug == "no-terminal-frame" and ending is not Ending.TIMED_OUT:
            return
        if self.bug == "bare-done-on-failure":
            ending = Ending.DONE
        with contextlib.suppress(ClientGoneError):
            await stream.end(ending)

    async def _show(self, sending: Coroutine[Any, Any, None]) -> bool:
        """Send to the browser; ``False`` when it went away under the detach policy (the run
        goes on unseen). Under dispose, the :class:`ClientGoneError` stops the run."""
        try:
            await sending
        except ClientGoneError:
            if self.settings.on_disconnect != "detach":
                raise
            log.info("client went away; the detached run goes on")
            return False
        return True

    def _from_shared_draft(self, event: Event) -> Event:
        """Mutant: the deltas shown are kept in one draft for the whole process, not one per
        turn, and a text answer's message is sent from that draft (what the browser was shown)
        instead of from the aggregate. One session at a time, the draft is exactly that turn's
        deltas, which ADK's aggregate concatenates: nothing shows. Two at once, and each
        message carries the other session's text."""
        if event.error_code:
            return event
        if event.partial:
            self._shared_draft += event_text(event)
            return event
        shown, self._shared_draft = self._shared_draft, ""
        if not shown or event.get_function_calls() or not event_text(event):
            return event
        role = event.content.role if event.content is not None else "model"
        return event.model_copy(
            update={"content": types.Content(role=role, parts=[types.Part(text=shown)])}
        )

    @staticmethod
    def _run_failed(exc: BaseException) -> Ending:
        # The client gets only the seed's generic payload; the detail stays in the log.
        log.warning("run failed: %s: %s", type(exc).__name__, exc)
        return Ending.FAILED

    async def _store_draft(self, user: str, session_id: str, draft: str) -> None:
        """Mutant: the deltas shown so far are saved as if they were the answer."""
        session = await self.sessions.get_session(
            app_name=APP_NAME, user_id=user, session_id=session_id
        )
        if session is not None:
            event = Event(
                invocation_id="draft",
                author=AGENT_NAME,
                content=types.Content(role="model", parts=[types.Part(text=draft)]),
            )
            await self.sessions.append_event(session, event)

    async def _store_again(self, user: str, session_id: str, answer: Event) -> None:
        """Mutant detach-persist-twice: the answer nobody saw is stored once more."""
        session = await self.sessions.get_session(
            app_name=APP_NAME, user_id=user, session_id=session_id
        )
        if session is not None:
            copy = answer.model_copy(update={"id": Event.new_id()})
            await self.sessions.append_event(session, copy)

    async def _mutant_side_effects(self, event: Event, user: str, session_id: str) -> None:
        """Side effects only mutants have: the correct gateway does nothing here."""
        if not event.partial:
            return
        if self.bug == "act-on-partial-calls":
            for call in event.get_function_calls():
                await post_tool(self.settings.tool_url, call.name or "?", dict(call.args or {}))
        elif self.bug == "persist-partials":
            owner = Session(app_name=APP_NAME, user_id=user, id=session_id)
            await self.sessions.append_event(owner, event)

    async def history(self, request: web.Request) -> web.StreamResponse:
        """The stored session as ADK's own event JSON: the record a reloading client reads."""
        user = self._authenticate(request)
        session_id = request.match_info["sessionId"]
        owner = user
        if self.bug == "shared-history":
            listed = await self.sessions.list_sessions(app_name=APP_NAME)
            owners = [s.user_id for s in listed.sessions if s.id == session_id]
            if owners and user not in owners:
                owner = owners[0]
        session = await self.sessions.get_session(
            app_name=APP_NAME, user_id=owner, session_id=session_id
        )
        if session is None:
            _json_error(web.HTTPNotFound, f"no session {session_id!r} for this user")
        events = [
            e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in session.events
        ]
        return web.json_response({"events": events})
