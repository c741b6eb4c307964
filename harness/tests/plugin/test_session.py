"""The harness session starts each kind's environment once (harness/streamproof/plugin/session.py):
the first
scenario's kind at once, and every other kind the session selected in the background, so a
second suite's target start overlaps the first suite's scenarios; an environment that was
never used is closed with the rest. Fake suites stand in for the real ones."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from streamproof.core.capabilities import ScenarioSkipped
from streamproof.plugin import session as session_module
from streamproof.plugin.session import HarnessSession


class _Env:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.starts = 0
        self.closed = False
        self.started_on: str | None = None

    @property
    def target_label(self) -> str:
        return self.kind

    @property
    def target_info(self) -> dict[str, Any]:
        return {"kind": self.kind}

    async def start(self) -> None:
        await asyncio.sleep(0.05)
        self.starts += 1
        self.started_on = threading.current_thread().name

    async def close(self) -> None:
        self.closed = True


class _Suite:
    def __init__(self, kind: str, made: dict[str, _Env]) -> None:
        self.kind, self.made = kind, made

    def environment(self, target_file: Any, **kwargs: Any) -> _Env:
        if self.kind == "refused":
            raise ScenarioSkipped("not this run's kind")
        env = self.made[self.kind] = _Env(self.kind)
        return env


class _Config:
    def __init__(self, root: Path) -> None:
        self.rootpath = root
        self.stash = pytest.Stash()

    def getoption(self, name: str, default: Any = None) -> Any:
        return {"--streamproof-report-dir": str(self.rootpath)}.get(name, default)

    def getini(self, name: str) -> Any:
        return {"streamproof_require_all": False, "streamproof_dirs": []}[name]


def _session(
    tmp_path: Path, kinds: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[HarnessSession, dict[str, _Env]]:
    made: dict[str, _Env] = {}
    monkeypatch.setattr(session_module, "suite", lambda kind: _Suite(kind, made))
    holder = HarnessSession(_Config(tmp_path))  # type: ignore[arg-type]
    holder.kinds = kinds  # as the plugin sets them from its collection
    return holder, made


def test_the_other_kinds_start_in_the_background_once_and_are_used_as_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder, made = _session(tmp_path, ["a2a-client", "refused", "gateway"], monkeypatch)
    try:
        first = holder._environment("a2a-client")
        assert made["a2a-client"].starts == 1
        assert "gateway" in made  # made and starting on the loop, not waited for
        assert "refused" not in made  # a kind this run cannot start is left to its scenario
        assert list(holder.targets) == ["a2a-client"]  # the report names a target once used
        second = holder._environment("gateway")
        assert second is made["gateway"] and second.starts == 1  # waited for, not restarted
        assert second.started_on == "streamproof-loop"
        assert list(holder.targets) == ["a2a-client", "gateway"]
        assert holder._environment("a2a-client") is first and first.starts == 1
    finally:
        holder.close()
    assert made["a2a-client"].closed and made["gateway"].closed


def test_an_environment_never_used_is_closed_with_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder, made = _session(tmp_path, ["a2a-client", "gateway"], monkeypatch)
    holder._environment("a2a-client")
    holder.close()  # interrupted before any gateway scenario ran
    assert made["gateway"].closed
