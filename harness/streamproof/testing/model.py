"""``fake_model``: the fake Gemini endpoint, scripted turn by turn, and the chunks of a turn."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from streamproof.fakes.records import ModelCall
from streamproof.protocol.gemini import CallChunk, ErrorChunk, ModelTurn, TextChunk
from streamproof.suites.fixture_files import fixture_context
from streamproof.testing.hub import OP_S, Fakes, validated

__all__ = ["FakeModelServer", "function_call", "stream_error", "text"]

# --- chunks of a model turn ---------------------------------------------------------------------


def text(value: str, *, delay: float | str | None = None) -> TextChunk:
    """A text chunk; ``delay`` (seconds, or ``"50ms"``) is waited before it is written."""
    return validated(TextChunk, {"text": value, "delay": delay}, "text()")


def function_call(
    name: str, args: Mapping[str, Any] | None = None, *, delay: float | str | None = None
) -> CallChunk:
    """A chunk carrying a ``functionCall`` part."""
    data = {"function_call": {"name": name, "args": dict(args or {})}, "delay": delay}
    return validated(CallChunk, data, "function_call()")


def stream_error(
    code: int = 503,
    status: str = "UNAVAILABLE",
    message: str = "The model is overloaded.",
    *,
    delay: float | str | None = None,
) -> ErrorChunk:
    """A ``data: {"error": ...}`` line in the middle of the stream (how Gemini fails mid-way)."""
    data = {"error": {"code": code, "status": status, "message": message}, "delay": delay}
    return validated(ErrorChunk, data, "stream_error()")


Chunk = str | TextChunk | CallChunk | ErrorChunk
FinishReason = Literal["STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER"]


# --- fake_model ---------------------------------------------------------------------------------


def _fixtures_from(base: str | os.PathLike[str] | None) -> Mapping[str, Any]:
    """The validation context that resolves ``fixture:`` paths from ``base`` upward."""
    folder = Path.cwd() if base is None else Path(base)
    # The resolver starts at a scenario file's folder: a folder is given as a name inside it.
    return fixture_context(folder / "_" if base is None or folder.is_dir() else folder)


class FakeModelServer:
    """The fake Gemini endpoint (``fake_model``): script turns, read the calls it received.

    Point google-genai (ADK) at :attr:`base_url` (``GOOGLE_GEMINI_BASE_URL``); it serves
    ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` and ``:generateContent``.
    Each call consumes the next turn; a call past the script answers HTTP 500.
    """

    __test__ = False

    def __init__(self, fakes: Fakes) -> None:
        self._fakes = fakes
        self._fake = fakes.model()

    @property
    def base_url(self) -> str:
        return self._fake.base_url

    def reset(self) -> None:
        """Forget the script and the calls."""
        self._fakes.call(lambda: self._fake.load(()))

    def script(
        self, *turns: ModelTurn | Mapping[str, Any], base: str | os.PathLike[str] | None = None
    ) -> None:
        """Replace the script with ``turns`` (models or their YAML-shaped dicts), forgetting
        the calls. A turn's ``fixture:`` is found as a scenario's is: from ``base`` (a folder,
        or a file whose folder counts; default: the current directory) upward, then among the
        canned streams streamproof ships (``fixtures/gemini/...``)."""
        context = _fixtures_from(base)
        checked = [
            validated(ModelTurn, t, f"fake_model.script(turn {i})", context)
            for i, t in enumerate(turns)
        ]
        self._fakes.call(lambda: self._fake.load(checked))

    def add(
        self, turn: ModelTurn | Mapping[str, Any], base: str | os.PathLike[str] | None = None
    ) -> ModelTurn:
        """Append one turn to the script; the calls so far are kept. ``base``: as for
        :meth:`script`."""
        checked = validated(ModelTurn, turn, "fake_model.add()", _fixtures_from(base))
        self._fakes.call(lambda: self._fake.extend([checked]))
        return checked

    def reply(
        self,
        *chunks: Chunk,
        finish_reason: FinishReason | None = "STOP",
        chunk_delay: float | str = 0.0,
        times: int | Literal["forever"] = 1,
    ) -> ModelTurn:
        """Append a streamed turn: ``chunks`` are texts (a ``str`` or :func:`text`),
        :func:`function_call` and :func:`stream_error` chunks, in order; ``finish_reason``
        goes on the last chunk (``None``: the stream ends without one); ``chunk_delay`` is
        waited before every chunk without its own ``delay``."""
        data = {
            "chunks": [{"text": c} if isinstance(c, str) else c for c in chunks],
            "finish_reason": finish_reason,
            "chunk_delay": chunk_delay,
            "times": times,
        }
        return self.add(validated(ModelTurn, data, "fake_model.reply()"))

    def fail(
        self,
        code: int = 503,
        status: str = "UNAVAILABLE",
        message: str = "The model is overloaded.",
        *,
        times: int | Literal["forever"] = 1,
    ) -> ModelTurn:
        """Append a turn answered by an HTTP error status with a Google error body."""
        data = {"http_error": {"code": code, "status": status, "message": message}, "times": times}
        return self.add(validated(ModelTurn, data, "fake_model.fail()"))

    @property
    def calls(self) -> list[ModelCall]:
        """Every call since the last reset or :meth:`script`, in order (streams in progress
        included): path, model, the request body, what was sent, whether the caller left
        early."""
        return self._fakes.call(lambda: self._fake.calls)

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait until no answer is being written; ``TimeoutError`` if ``timeout`` passes."""
        if not self._fakes.run(lambda: self._fake.wait_idle(timeout), timeout + OP_S):
            raise TimeoutError(f"fake_model: an answer was still being written after {timeout:g}s")

    async def wait_idle_async(self, timeout: float = 5.0) -> None:
        """:meth:`wait_idle` for a coroutine test (it does not block the test's loop)."""
        if not await self._fakes.wait_async(lambda: self._fake.wait_idle(timeout)):
            raise TimeoutError(f"fake_model: an answer was still being written after {timeout:g}s")
