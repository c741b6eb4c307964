"""The end of a session: the one report of the run (written by the controller under
pytest-xdist, from every worker's records), and the exit status of a run a signal stopped."""

from __future__ import annotations

import pytest

from streamproof.plugin.shared import SCENARIOS_KEY, SESSION_KEY

_INTERRUPTED_KEY: pytest.StashKey[bool] = pytest.StashKey()
"""Set when Ctrl-C or a signal stopped the session (not a collection error, which pytest also
reports as "interrupted")."""


class _InterruptWatch:
    """Tells a real interrupt from pytest's own ``Interrupted`` (collection errors, ``-x``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if not isinstance(excinfo.value, pytest.Session.Interrupted):
            self.config.stash[_INTERRUPTED_KEY] = True


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_InterruptWatch(config), "streamproof-interrupt-watch")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from streamproof.plugin import xdist as parallel

    config = session.config
    holder = config.stash.get(SESSION_KEY, None)
    if parallel.is_worker(config):
        # Its records go to the controller, which writes the one report of the run.
        parallel.send_records(config, holder, config.stash.get(SCENARIOS_KEY, 0))
        return
    if parallel.is_controller(config):
        holder, config.stash[SCENARIOS_KEY] = parallel.gather(config, holder)
    elif holder is not None:
        holder.shard = parallel.shard_of(config)
    if holder is None and config.stash.get(SCENARIOS_KEY, 0) and not config.option.collectonly:
        # Scenarios were selected but none ran (interrupted first, or stopped by -x): the
        # report still says what this session did. A session without scenarios (a project's
        # own tests) writes nothing.
        from streamproof.plugin.session import session_for

        holder = session_for(config, SESSION_KEY)
    if holder is not None:
        interrupted = config.stash.get(_INTERRUPTED_KEY, False) or any(
            r.get("outcome") == "interrupted" for r in holder.records
        )
        holder.finish(exitstatus, interrupted=interrupted)
        if holder.interrupts.exit_status is not None:
            # Killed by a signal, as a shell reports it (130 SIGINT, 143 SIGTERM, 129 SIGHUP),
            # rather than pytest's generic "interrupted".
            session.exitstatus = holder.interrupts.exit_status
    if parallel.is_controller(config):
        parallel.reorder_junit(config)
