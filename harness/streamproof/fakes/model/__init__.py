"""A fake Gemini API server that real ADK agents accept as Gemini, driven by a scenario script.

Why byte-exact: the point of streamproof is to test what an SSE gateway does with what ADK
yields, so ADK's real model code (google-genai's SSE reader, ADK's streaming aggregator) must
run unmodified against this fake. Those readers are strict in small ways (``data: `` needs its
space, one JSON object a line, ``candidates[0].content`` in every chunk, an ``{"error": ...}``
line as the mid-stream failure). Every byte the fake writes is built by the pure functions in
:mod:`streamproof.protocol.gemini`; this package is only the aiohttp shell around them: routing,
the script cursor, delays, noticing a caller that hangs up, and the records checks read.

Script semantics:

* ``load(turns)`` resets the records; each model call consumes the next turn (``times: N``
  answers N consecutive calls, ``times: forever`` every later call).
* A retry (the same agent sending the very same body as the call just before it,
  :func:`~streamproof.fakes.records.is_retry`) is recorded with ``retry_of``; when an error turn
  answered the call it repeats (``retries: repeat``, the default for error turns), it gets the
  same turn again without using up the script.
* A call past the script answers HTTP 500 and is recorded with ``turn=None``.
* After ``runaway_cap`` calls in one load every call gets a plain text turn with ``STOP``, so a
  gateway without an LLM-call budget still ends (also recorded with ``turn=None``).

Timing: before each chunk the fake waits the chunk's ``delay`` (else the turn's
``chunk_delay``) times the time scale. A non-streaming answer waits the sum of those delays; an
``http_error`` turn waits its ``chunk_delay`` once. While waiting the fake watches the
connection (``handler_cancellation`` plus a 20 ms poll of the transport), so a caller that
closes the stream is recorded ``closed_early`` promptly even when nothing is being written.
Stream headers are sent at once; the first chunk follows after its delay.

A turn from a fixture (``fixture: fixtures/gemini/...``) is written byte for byte as the file
holds it (its own line ends, not ``line_end``), each event after its recorded delay (or the
turn's ``chunk_delay`` when the scenario gives one), scaled the same way.

``completed`` means the fake wrote everything the chosen answer holds (an error answer
included) and ended the body; ``closed_early`` means the caller went away before that.

The package's modules: :mod:`~streamproof.fakes.model.server` (the :class:`FakeModel`: its
lifecycle, script, records and routing), :mod:`~streamproof.fakes.model.answering` (writing an
answer while watching the caller) and :mod:`~streamproof.fakes.model.call_state` (the record of
one call as it is answered).
"""

from streamproof.fakes.model.server import FakeModel
from streamproof.fakes.records import ModelCall

__all__ = ["FakeModel", "ModelCall"]
