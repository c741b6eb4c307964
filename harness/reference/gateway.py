"""The reference gateway: the seed's typed SSE protocol in front of a real google-adk ``Runner``.

Seed ``000_08c89244bc50b181`` ("A gateway: Event to Server-Sent Events") gives a Spring
``ChatStreamController`` that turns ADK events into typed frames (``delta``, ``message``,
``tool_call``, ``tool_result``, ``error``, ``done``). This module is that controller translated to
Python ADK 2.13 and aiohttp, and it is the implementation every streamproof check must pass
(DESIGN.md: "Every check is proven twice"). The seed's four load-bearing choices are kept:

* frames are typed by event kind (:func:`event_frames`, a pure function, is the seed's ``send``);
* tool results are summarised as a count, never forwarded ("Leaking tool payloads");
* the run is cancelled when the client goes away, on timeout and when a write fails
  ("Orphaned runs"): aiohttp's ``handler_cancellation`` cancels the handler on disconnect, and the
  ADK async generator is always closed with ``aclosing`` so ADK closes its model stream;
* the SSE ``id`` is the gateway's own counter, one fresh number per frame, because nothing in the
  event contract promises ids suited to ``Last-Event-ID``.

Two Python-specific points (measured, see research/adk.md 0.7): a model error arrives as an event
with ``error_code`` *and then* ``run_async`` raises, so such a run ends with two ``error`` frames,
exactly what the seed's controller (``send`` then ``onError``) would send. And ADK 2.13 stores the
aggregate, never the partials, so ``/history`` is the record the client reloads from.

Run ``python -m harness.reference.gateway [--bug NAME]``; the environment contract is in
:class:`Settings`. ``--list-bugs`` prints the mutants (see ``mutants.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from aiohttp import web
from google.adk.agents.run_config import RunConfig, StreamingMode  # type: ignore[attr-defined]
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from harness.reference.agent import AGENT_NAME, APP_NAME, build_runner, post_tool
from harness.reference.catalog import UnknownBugError
from harness.reference.mutants import check_bug, describe_bugs

PROG: Final = "streamproof-gateway"
LISTEN_HOST: Final = "127.0.0.1"
DEFAULT_TOKENS: Final = "alice=alice-token,bob=bob-token"
DEFAULT_MAX_LLM_CALLS: Final = 20
DEFAULT_RUN_TIMEOUT_S: Final = 120.0
SHUTDOWN_GRACE_S: Final = 2.0

log = logging.getLogger(__name__)

Frame = tuple[str, dict[str, Any]]
"""One typed frame before numbering: (event type, JSON payload)."""


# --- the frame mapping (pure; the seed's send()) -----------------------------------------------


def event_text(event: Event) -> str:
    """The text of an event: its text parts joined, as the seed's ``send`` computes it."""
    parts = event.content.parts if event.content is not None and event.content.parts else []
    return "".join(part.text or "" for part in parts)


def event_frames(event: Event, bug: str | None = None) -> list[Frame]:
    """Map one ADK event to the frames the gateway sends for it, in order (maybe none).

    Branch for branch the seed's ``send``: an error code wins; a partial event yields at most a
    ``delta`` (a function call seen in a partial is never shown nor acted on: ADK executes it
    once, later, from the aggregate); a non-partial event with function calls yields its text as a
    non-final ``message`` and then ``tool_call``; function responses yield a ``tool_result``
    *count*; any other text is a ``message`` carrying the event id and ``is_final_response()``.
    Every ``delta`` and ``message`` names the event's own author: in a multi-agent run the
    browser keys its draft by author, and one run holds text by several agents.
    """
    text = event_text(event)
    author = AGENT_NAME if bug == "author-from-root" else event.author
    if event.error_code and bug != "swallow-error-event":
        if bug == "bare-done-on-failure":
            return []  # mutant: failures are not shown as errors
        return [("error", {"code": str(event.error_code)})]
    if event.partial:
        frames: list[Frame] = []
        if text:
            frames.append(("delta", {"author": author, "text": text}))
        if bug == "tool-call-from-partial" and event.get_function_calls():
            frames.append(("tool_call", {"names": _call_names(event)}))
        return frames
    if event.get_function_calls():
        frames = []
        if text:
            # The mutant marks this text final, as if the answer were done.
            final = bug == "final-always-true"
            frames.append(("message", {"author": author, "text": text, "final": final}))
        frames.append(("tool_call", {"names": _call_names(event)}))
        return frames
    responses = event.get_function_responses()
    if responses:
        payload: dict[str, Any] = {"count": len(responses)}
        if bug == "leak-tool-payload":
            payload["responses"] = [r.model_dump(mode="json", exclude_none=True) for r in responses]
        return [("tool_result", payload)]
    if text:
        if bug == "aggregate-as-delta":
            return [("delta", {"author": author, "text": text})]
        if bug == "tidy-message-text":
            text = " ".join(text.split())  # mutant: the message is no longer the aggregate
        return [
            (
                "message",
                {
                    "author": author,
                    "id": event.id,
                    "text": text,
                    "final": event.is_final_response(),
                },
            )
        ]
    return []


def _call_names(event: Event) -> list[str]:
    return [call.name or "?" for call in event.get_function_calls()]


def encode_frame(
    frame_id: str, frame_type: str, payload: Mapping[str, Any], *, typed: bool = True
) -> bytes:
    """One SSE frame: ``id``, ``event`` and a single-line JSON ``data`` field (JSON escapes
    every CR and LF, so the payload can never break the framing). ``typed=False`` (a mutant)
    leaves out the ``event`` line, so every frame arrives as a plain ``message``."""
    data = json.dumps(payload, separators=(",", ":"))  # ASCII only: no encoding can fail
    event = f"event: {frame_type}\n" if typed else ""
    return f"id: {frame_id}\n{event}data: {data}\n\n".encode()


DONE: Final[Frame] = ("done", {})
RUN_FAILED: Final[Frame] = ("error", {"retryable": True})
RUN_TIMED_OUT: Final[Frame] = ("error", {"code": "TIMEOUT", "retryable": True})


class ClientGoneError(Exception):
    """A frame could not be written: the client went away, so the run must stop."""


class FrameWriter:
    """Numbers frames with the gateway's own counter and writes each one in a single write."""

    def __init__(self, response: web.StreamResponse, bug: str | None = None) -> None:
        self._response = response
        self._bug = bug
        self._seq = 0
        self._held: list[Frame] = []  # only the tool-call-after-result mutant holds frames

    def _next_id(self) -> str:
        self._seq += 1
        return str(self._seq)

    async def send_event(self, event: Event) -> None:
        frames = event_frames(event, self._bug)
        if self._bug == "reused-frame-ids":
            shared = self._next_id()
            ids = [shared] * len(frames)
        elif self._bug == "event-id-as-frame-id":
            ids = [event.id] * len(frames)
        else:
            ids = [self._next_id() for _ in frames]
        for frame_id, (frame_type, payload) in zip(ids, frames, strict=True):
            if self._bug == "tool-call-after-result" and frame_type == "tool_call":
                self._held.append((frame_type, payload))  # mutant: sent after its result
                continue
            await self._write(frame_id, frame_type, payload)
            if frame_type == "tool_result":
                held, self._held = self._held, []
                for late in held:
                    await self.send(late)

    async def send(self, frame: Frame) -> None:
        await self._write(self._next_id(), *frame)

    async def _write(self, frame_id: str, frame_type: str, payload: Mapping[str, Any]) -> None:
        try:
            await self._response.write(
                encode_frame(frame_id, frame_type, payload, typed=self._bug != "untyped-frames")
            )
        except ConnectionError as exc:  # aiohttp: ClientConnectionResetError on a closed socket
            if self._bug == "no-dispose":
                return  # mutant: a send failure does not stop the run
            raise ClientGoneError(str(exc)) from exc


# --- configuration -----------------------------------------------------------------------------


class ConfigError(ValueError):
    """The environment or the command line is unusable; reported in one line, exit status 2."""


@dataclass(frozen=True)
class Settings:
    """The gateway's environment contract (DESIGN.md, "Contracts with the system under test").

    Required: ``PORT`` (0: an ephemeral port), ``GOOGLE_GEMINI_BASE_URL`` (the fake model, read
    by google-genai itself), ``GOOGLE_API_KEY`` (any value) and ``STREAMPROOF_TOOL_URL``.
    Optional: ``STREAMPROOF_BUG``, ``STREAMPROOF_GATEWAY_TOKENS`` (``user=token`` pairs, comma
    separated), ``STREAMPROOF_GATEWAY_DB`` (SQLite path; default a temporary file removed at
    exit), ``STREAMPROOF_MAX_LLM_CALLS`` (the seed's ``setMaxLlmCalls(20)``) and
    ``STREAMPROOF_RUN_TIMEOUT`` (seconds; the seed's ``new SseEmitter(120_000L)``).
    """

    port: int
    tool_url: str
    users_by_token: Mapping[str, str]
    db_path: str | None = None
    max_llm_calls: int = DEFAULT_MAX_LLM_CALLS
    run_timeout: float = DEFAULT_RUN_TIMEOUT_S
    bug: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, bug: str | None = None) -> Settings:
        """Read the environment; ``bug`` (from ``--bug``) overrides ``STREAMPROOF_BUG``."""
        try:
            chosen = check_bug(bug if bug is not None else env.get("STREAMPROOF_BUG"))
        except UnknownBugError as exc:
            raise ConfigError(str(exc)) from None
        required = ["PORT", "GOOGLE_GEMINI_BASE_URL", "STREAMPROOF_TOOL_URL"]
        missing = [name for name in required if not env.get(name)]
        if not (env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY")):
            missing.append("GOOGLE_API_KEY")
        if missing:
            raise ConfigError(f"missing required environment variable(s): {', '.join(missing)}")
        port = _parse_int(env, "PORT", lo=0, hi=65535)
        return cls(
            port=port,
            tool_url=env["STREAMPROOF_TOOL_URL"],
            users_by_token=parse_tokens(env.get("STREAMPROOF_GATEWAY_TOKENS") or DEFAULT_TOKENS),
            db_path=env.get("STREAMPROOF_GATEWAY_DB") or None,
            max_llm_calls=_parse_int(
                env, "STREAMPROOF_MAX_LLM_CALLS", lo=1, default=DEFAULT_MAX_LLM_CALLS
            ),
            run_timeout=_parse_seconds(env, "STREAMPROOF_RUN_TIMEOUT", DEFAULT_RUN_TIMEOUT_S),
            bug=chosen,
        )


def parse_tokens(spec: str) -> dict[str, str]:
    """``alice=alice-token,bob=bob-token`` -> ``{"alice-token": "alice", "bob-token": "bob"}``."""
    users_by_token: dict[str, str] = {}
    for item in spec.split(","):
        user, sep, token = (s.strip() for s in item.partition("="))
        if not item.strip():
            continue
        if not sep or not user or not token:
            raise ConfigError(f"STREAMPROOF_GATEWAY_TOKENS: expected user=token, got {item!r}")
        if token in users_by_token:
            raise ConfigError(f"STREAMPROOF_GATEWAY_TOKENS: token for {user!r} is not unique")
        users_by_token[token] = user
    if not users_by_token:
        raise ConfigError("STREAMPROOF_GATEWAY_TOKENS: no user=token pair")
    return users_by_token


def _parse_int(
    env: Mapping[str, str], name: str, *, lo: int, hi: int | None = None, default: int = 0
) -> int:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}: expected an integer, got {raw!r}") from None
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise ConfigError(f"{name}: must be {bound}, got {value}")
    return value


def _parse_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}: expected a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ConfigError(f"{name}: must be positive, got {raw}")
    return value


# --- the HTTP side -----------------------------------------------------------------------------


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

    def make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/healthz", self.healthz)
        app.router.add_post("/chat/{sessionId}", self.chat)
        app.router.add_get("/history/{sessionId}", self.history)
        return app

    def stop_streams(self) -> None:
        """Cancel every run in progress; each stream ends with ``error {"retryable": true}``."""
        self._stopping = True
        now = asyncio.get_running_loop().time()
        for deadline in list(self._deadlines):
            deadline.reschedule(now)

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
        session_id = request.match_info["sessionId"]
        text = await request.text()
        if not text.strip():
            _json_error(web.HTTPBadRequest, "empty message: send the user's text as the body")
        streaming = request.query.get("mode", "").lower() != "none"

        key = (user, session_id)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            await self._ensure_session(user, session_id)
            response = web.StreamResponse(
                status=200,
                headers={
                    "Content-Type": (
                        "application/json" if self.bug == "json-not-sse" else "text/event-stream"
                    ),
                    "Cache-Control": "no-cache",
                    "X-Accel-Buffering": "no",
                },
            )
            await response.prepare(request)
            turn = self._stream_turn(response, user, session_id, text, streaming)
            if self.bug == "no-dispose":
                # Mutant: the run is detached from the request, so a closed tab does not
                # cancel it (the seed's "Orphaned runs").
                task = asyncio.ensure_future(turn)
                self._orphans.add(task)
                task.add_done_callback(self._orphans.discard)
                await asyncio.shield(task)
            else:
                await turn
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
        self, response: web.StreamResponse, user: str, session_id: str, text: str, streaming: bool
    ) -> None:
        budget = (
            {} if self.bug == "no-llm-budget" else {"max_llm_calls": self.settings.max_llm_calls}
        )
        run_config = RunConfig(
            streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE, **budget
        )
        writer = FrameWriter(response, self.bug)
        deadline = asyncio.timeout(self.settings.run_timeout)
        draft = ""  # what the browser has been shown of the answer in progress
        terminal: Frame
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
                    async for event in events:
                        await self._mutant_side_effects(event, user, session_id)
                        if event.partial:
                            draft += event_text(event)
                        elif not event.error_code:
                            draft = ""  # an aggregate settled it
                        await writer.send_event(event)
                finally:
                    self._deadlines.discard(deadline)
            terminal = DONE
        except ClientGoneError:
            log.info("client went away; run for session %r closed", session_id)
            return
        except TimeoutError as exc:
            if not deadline.expired():
                terminal = self._run_failed(exc)
            elif self._stopping:
                log.warning("gateway stopping; run for session %r cancelled", session_id)
                terminal = RUN_FAILED
            else:
                log.warning("run for session %r timed out; cancelled", session_id)
                terminal = RUN_TIMED_OUT
        except Exception as exc:  # ADK raises after a model error event, or on the LLM budget
            terminal = self._run_failed(exc)
            if self.bug == "persist-draft-on-error" and draft:
                await self._store_draft(user, session_id, draft)
        if self.bug == "no-terminal-frame" and terminal is not RUN_TIMED_OUT:
            return
        if self.bug == "bare-done-on-failure":
            terminal = DONE
        with contextlib.suppress(ClientGoneError):
            await writer.send(terminal)

    @staticmethod
    def _run_failed(exc: BaseException) -> Frame:
        # The client gets only the seed's generic payload; the detail stays in the log.
        log.warning("run failed: %s: %s", type(exc).__name__, exc)
        return RUN_FAILED

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


# --- process -----------------------------------------------------------------------------------


async def serve(settings: Settings, *, on_listening: Callable[[int], None]) -> None:
    """Run until SIGTERM/SIGINT. ``on_listening(port)`` is called once the socket is bound."""
    tmpdir: str | None = None
    db_path = settings.db_path
    if db_path is None:
        tmpdir = tempfile.mkdtemp(prefix="streamproof-gateway-")
        db_path = os.path.join(tmpdir, "sessions.db")
    try:
        runner, sessions = build_runner(
            tool_url=settings.tool_url,
            db_path=db_path,
            store_partials=settings.bug == "persist-partials",
        )
        gateway = Gateway(settings, runner, sessions)
        app_runner = web.AppRunner(
            gateway.make_app(),
            # A client disconnect cancels the handler, hence the run, even when nothing is being
            # written (the mutant notices a disconnect only when its next write fails).
            handler_cancellation=settings.bug != "dispose-on-write-only",
            shutdown_timeout=SHUTDOWN_GRACE_S,
            access_log=None,
        )
        await app_runner.setup()
        try:
            site = web.TCPSite(app_runner, LISTEN_HOST, settings.port)
            try:
                await site.start()
            except OSError as exc:
                raise ConfigError(
                    f"cannot listen on {LISTEN_HOST}:{settings.port}: {exc.strerror or exc}"
                ) from None
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, stop.set)
            on_listening(app_runner.addresses[0][1])
            await stop.wait()
            gateway.stop_streams()
        finally:
            await app_runner.cleanup()
            await runner.close()
            await sessions.close()
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


class _OneLineFormatter(logging.Formatter):
    """One line per log record. ADK 2.13 logs a full traceback (twice) for every failed model
    call; the gateway's stderr gets the exception's type and message instead."""

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        plain = logging.makeLogRecord(record.__dict__)
        plain.exc_info = plain.exc_text = plain.stack_info = None
        line = super().format(plain)
        if exc is not None:
            line += f" ({type(exc).__name__}: {exc})"
        return line.replace("\n", " ")


def _announce(port: int) -> None:
    print(f"{PROG} listening on http://{LISTEN_HOST}:{port}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.reference.gateway",
        description="streamproof's reference SSE gateway on a real google-adk Runner.",
    )
    parser.add_argument("--bug", metavar="NAME", help="run a mutant (see --list-bugs)")
    parser.add_argument("--list-bugs", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    if args.list_bugs:
        print(describe_bugs())
        return 0
    try:
        settings = Settings.from_env(os.environ, bug=args.bug)
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter(f"{PROG}: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    try:
        asyncio.run(serve(settings, on_listening=_announce))
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
