"""``streamproof record``: a recording proxy in front of a real upstream, writing fixtures and
a scenario that replays them.

The proxy is the inline fault link (:class:`~streamproof.faults.engines.inline.InlineProxy`) with
an empty plan: it forwards every request and response unchanged and keeps its usual link
records. :class:`RecordingProxy` adds the one thing those records lack, the bytes: through the
engine's ``_before_write`` hook it keeps, per request, the request line, headers and body and
every write downstream with its time since the response headers went out. When it stops
(Ctrl-C, SIGTERM, or ``--max-duration``), :mod:`~streamproof.standalone.recorded` turns the
streamed responses into redacted fixture files and a scenario skeleton, which the command
writes under ``--out`` and names on stdout.

Exit status: 0 after ``--max-duration``, 2 for bad input, 128 + the signal when stopped by
one; a scenario is written either way.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import time
import zlib
from pathlib import Path
from typing import Final

from aiohttp import web

from streamproof.faults.engines.inline import InlineProxy
from streamproof.faults.engines.inline_exchange import _Exchange
from streamproof.runtime.interrupts import Interrupts
from streamproof.runtime.loop import BackgroundLoop
from streamproof.standalone.inputs import BadInput, Listen, parse_hop, parse_period
from streamproof.standalone.recorded import Captured, Kind, guess_kind, plan_files, redact_target

__all__ = ["PROG", "RecordingProxy", "run"]

PROG: Final = "streamproof record"
POLL_S: Final = 0.1
START_BOUND_S: Final = 30.0
CLOSE_BOUND_S: Final = 10.0
EXIT_OK, EXIT_BAD_INPUT = 0, 2
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")


class _Capture:
    """A request in progress: what the proxy has seen of it so far."""

    def __init__(self, number: int, request: web.Request, body: bytes, rpc: str | None) -> None:
        self.number = number
        self.method = request.method
        self.target = request.raw_path
        self.rpc = rpc
        self.headers = tuple(request.headers.items())
        self.body = body
        self.status: int | None = None
        self.content_type = ""
        self.response_headers: tuple[tuple[str, str], ...] = ()
        self.encoding = ""
        self.started = 0.0
        self.chunks: list[tuple[float, bytes]] = []
        self._inflate: zlib._Decompress | None = None

    def respond(self, status: int, content_type: str, headers: tuple[tuple[str, str], ...]) -> None:
        self.status, self.content_type, self.response_headers = status, content_type, headers
        encoding = dict((k.lower(), v) for k, v in headers).get("content-encoding", "")
        self.encoding = encoding.strip().lower()
        if self.encoding in ("gzip", "x-gzip"):
            self._inflate = zlib.decompressobj(wbits=31)
        elif self.encoding == "deflate":
            self._inflate = zlib.decompressobj(wbits=47)  # zlib or gzip header, detected

    def wrote(self, t: float, data: bytes) -> None:
        """A write downstream; a gzip or deflate body is kept inflated (the fixture is what
        the client decoded), each piece at the time of the write that carried it."""
        if self._inflate is not None:
            try:
                data = self._inflate.decompress(data)
            except zlib.error:
                self._inflate = None
                self.encoding += " (undecodable)"
                return
        elif self.encoding not in ("", "identity"):
            return
        if data:
            self.chunks.append((t, data))

    def freeze(self) -> Captured:
        return Captured(
            number=self.number,
            method=self.method,
            target=self.target,
            rpc=self.rpc,
            request_headers=self.headers,
            request_body=self.body,
            status=self.status,
            content_type=self.content_type,
            chunks=tuple(self.chunks),
            response_headers=self.response_headers,
            encoding=self.encoding if self._inflate is None else "",
        )


class RecordingProxy(InlineProxy):
    """The inline link, keeping the bytes it forwards (requests, and each response write with
    its time since the response started)."""

    def __init__(self, upstream: str) -> None:
        super().__init__("record", upstream)
        self._captures: dict[_Exchange, _Capture] = {}
        self.captured: list[Captured] = []

    async def _exchange(
        self, request: web.Request, ex: _Exchange, body: bytes
    ) -> web.StreamResponse:
        capture = _Capture(ex.request, request, body, ex.rpc)
        self._captures[ex] = capture
        try:
            return await super()._exchange(request, ex, body)
        finally:
            del self._captures[ex]
            self.captured.append(capture.freeze())

    async def _before_write(self, ex: _Exchange, data: bytes | None) -> None:
        capture = self._captures.get(ex)
        if capture is None:
            return
        now = time.monotonic()
        if data is None:
            upstream = ex.upstream
            capture.started = now
            if upstream is not None:
                headers = tuple(upstream.headers.items())
                capture.respond(upstream.status, upstream.content_type, headers)
            return
        capture.wrote(round(now - capture.started, 6), bytes(data))


def _check(args: argparse.Namespace) -> tuple[str, Listen, Kind | None, Path, str, float | None]:
    problems: list[str] = []
    upstream, listen = parse_hop(args.upstream, args.listen, problems)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        problems.append(f"--out {out}: is a file, not a folder")
    name = args.name or f"recorded-{dt.datetime.now(dt.UTC):%Y%m%d-%H%M%S}"
    if not _NAME.match(name):
        problems.append(
            f"--name {name!r}: use lower-case letters, digits, '-' and '_' (it names the "
            "scenario id, the scenario file and the fixtures' folder)"
        )
    elif (out / f"{name}.yaml").exists() or (out / name).exists():
        problems.append(f"--name {name}: {out / name}(.yaml) exists already; pick another name")
    max_duration = parse_period("--max-duration", args.max_duration, problems)
    if problems or upstream is None or listen is None:
        raise BadInput(*problems)
    return upstream, listen, args.kind, out, name, max_duration


def run(args: argparse.Namespace) -> int:
    """``streamproof record``; the exit status."""
    try:
        upstream, listen, kind, out, name, max_duration = _check(args)
    except BadInput as exc:
        for line in exc.problems:
            print(f"{PROG}: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT
    interrupts = Interrupts()
    interrupts.install()
    loop = BackgroundLoop("streamproof-record")
    proxy = RecordingProxy(upstream)
    why = "stopped"
    try:
        try:
            base_url = loop.run(proxy.start(listen.host, listen.port), timeout=START_BOUND_S)
        except OSError as exc:
            print(
                f"{PROG}: --listen {listen.host}:{listen.port}: cannot listen there: "
                f"{exc.strerror or exc}",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        until = f"for {args.max_duration}" if max_duration else "until Ctrl-C"
        print(f"{PROG}: listening on {base_url} -> {redact_target(upstream)}", flush=True)
        print(f"{PROG}: forwarding unchanged and recording, {until}", flush=True)
        deadline = None if max_duration is None else time.monotonic() + max_duration
        shown = 0
        try:
            while deadline is None or time.monotonic() < deadline:
                left = POLL_S if deadline is None else deadline - time.monotonic()
                time.sleep(max(0.0, min(POLL_S, left)))
                with interrupts.deferred():
                    shown = _show(proxy.captured, shown)
            why = f"--max-duration {args.max_duration}"
        except KeyboardInterrupt:
            why = "signal"
        finally:
            interrupts.hold()
            try:
                loop.run(proxy.close(), timeout=CLOSE_BOUND_S)
            except Exception as exc:
                print(f"{PROG}: closing the proxy: {type(exc).__name__}: {exc}", file=sys.stderr)
        _show(proxy.captured, shown)
        status = _write(list(proxy.captured), kind, out, name, upstream, why)
        return interrupts.exit_status or status
    finally:
        loop.close()
        interrupts.restore()


def _show(captured: list[Captured], shown: int) -> int:
    for c in captured[shown:]:
        what = f"rpc={c.rpc} " if c.rpc else ""
        status = c.status if c.status is not None else "no response"
        size = sum(len(data) for _, data in c.chunks)
        print(
            f"{PROG}: req {c.number} {c.method} {redact_target(c.target)} {what}-> {status} "
            f"{c.content_type or '-'}, {size} bytes",
            flush=True,
        )
    return len(captured)


def _write(
    captured: list[Captured], kind: Kind | None, out: Path, name: str, upstream: str, why: str
) -> int:
    now = dt.datetime.now(dt.UTC)
    chosen = kind or guess_kind(captured)
    text, fixtures, notes = plan_files(
        captured,
        kind=chosen,
        name=name,
        upstream=upstream,
        written_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    scenario = out / f"{name}.yaml"
    try:
        out.mkdir(parents=True, exist_ok=True)
        for fixture in fixtures:
            path = out / fixture.relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(fixture.data)
        scenario.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"{PROG}: --out {out}: cannot write there: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for note in notes:
        print(f"{PROG}: note: {note}", flush=True)
    for fixture in fixtures:
        print(f"{PROG}: wrote {out / fixture.relative} ({fixture.events} events)", flush=True)
    print(
        f"{PROG}: wrote {scenario} ({chosen} scenario, {len(fixtures)} fixtures, "
        f"{len(captured)} requests recorded); stopped by {why}",
        flush=True,
    )
    return EXIT_OK
