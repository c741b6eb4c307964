"""SIGTERM and SIGHUP end a run the way Ctrl-C does.

Python turns SIGINT into a ``KeyboardInterrupt``, and pytest answers that by tearing down: the
target's process group is killed, the fakes and links closed, the report written. SIGTERM (how
CI runners cancel a job) and SIGHUP (a closed terminal) kill the process outright instead,
leaving the target behind with no report. :class:`Interrupts` makes the three alike and
remembers which one came, so the exit status can say so (128 + the signal).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["SIGNALS", "Interrupts"]

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_Handler = Callable[[int, FrameType | None], Any] | int | None


def _interrupted(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt(f"interrupted by {signal.Signals(signum).name}")


class Interrupts:
    """Handlers for :data:`SIGNALS` that raise ``KeyboardInterrupt``; :meth:`restore` puts the
    previous ones back."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[signal.Signals, _Handler] = {}
        self._holding = False

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if not self._holding:
            raise _interrupted(signum)

    def check(self) -> None:
        """Raise for a signal that came and is not held: its ``KeyboardInterrupt`` may have been
        raised where Python only prints it (a garbage-collector callback, a ``__del__``), so a
        long loop calls this between steps to stop anyway."""
        if self.received and not self._holding:
            raise _interrupted(self.received[0])

    def hold(self) -> None:
        """From now on a signal is remembered but interrupts nothing: for a short, bounded
        cleanup that a second Ctrl-C must not cut short (a port and a link still to free)."""
        self._holding = True

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A short step that must not be cut in half (records read but not yet shown): a signal
        that comes meanwhile interrupts at its end instead. Inside :meth:`hold`, nothing
        interrupts at all."""
        if self._holding:
            yield
            return
        before = len(self.received)
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        if len(self.received) > before:
            raise _interrupted(self.received[before])

    def install(self, *, only_defaults: bool = False) -> None:
        """Take over the signals (in the main thread only; elsewhere nothing changes). With
        ``only_defaults``, a signal someone else already handles is left to them: a plugin must
        not override the handlers of the program that runs pytest."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in SIGNALS:
            current = signal.getsignal(sig)
            if only_defaults and current not in (signal.SIG_DFL, signal.default_int_handler):
                continue
            self._previous[sig] = current
            signal.signal(sig, self._interrupt)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    @property
    def exit_status(self) -> int | None:
        """128 + the first signal received, as shells report a death by signal; None if none."""
        return 128 + self.received[0] if self.received else None
