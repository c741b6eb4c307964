"""SIGTERM and SIGHUP become a KeyboardInterrupt that remembers the signal; handlers someone
else installed are left alone when asked."""

from __future__ import annotations

import os
import signal
import time

import pytest

from streamproof.runtime.interrupts import Interrupts


def test_a_signal_interrupts_and_is_remembered() -> None:
    interrupts = Interrupts()
    before = signal.getsignal(signal.SIGHUP)
    interrupts.install()
    try:
        with pytest.raises(KeyboardInterrupt, match="SIGHUP"):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(5)  # the handler runs at the next bytecode; never reached
    finally:
        interrupts.restore()
    assert interrupts.received == [signal.SIGHUP]
    assert interrupts.exit_status == 129
    assert signal.getsignal(signal.SIGHUP) == before


def test_only_defaults_leaves_a_programs_own_handler_alone() -> None:
    def own(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    previous = signal.signal(signal.SIGTERM, own)
    try:
        interrupts = Interrupts()
        interrupts.install(only_defaults=True)
        assert signal.getsignal(signal.SIGTERM) is own
        interrupts.restore()
        assert signal.getsignal(signal.SIGTERM) is own
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_nothing_received_means_no_exit_status() -> None:
    assert Interrupts().exit_status is None


def test_held_signals_are_remembered_without_interrupting() -> None:
    """A cleanup that frees a port must not be cut short by a second Ctrl-C."""
    interrupts = Interrupts()
    interrupts.install()
    try:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        interrupts.hold()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler has run by now, and raised nothing
    finally:
        interrupts.restore()
    assert interrupts.received == [signal.SIGINT, signal.SIGTERM]
    assert interrupts.exit_status == 130


def test_a_deferred_step_is_finished_before_the_signal_interrupts() -> None:
    """Records read must be shown: a signal during that step interrupts right after it."""
    interrupts = Interrupts()
    interrupts.install()
    finished = False
    try:
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            with interrupts.deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the handler has run by now, and raised nothing
                finished = True
    finally:
        interrupts.restore()
    assert finished
    assert interrupts.exit_status == 143


def test_check_raises_for_a_signal_whose_interrupt_was_lost() -> None:
    """A KeyboardInterrupt raised where Python only prints it (a gc callback) is lost; the
    next ``check`` between steps raises it again, unless the signals are held."""
    interrupts = Interrupts()
    interrupts.check()  # nothing came: nothing raised
    try:
        interrupts._interrupt(signal.SIGINT, None)
    except KeyboardInterrupt:
        pass  # swallowed, as by a gc callback
    with pytest.raises(KeyboardInterrupt, match="SIGINT"):
        interrupts.check()
    interrupts.hold()
    interrupts.check()  # held: a cleanup runs to its end
