"""``fake_a2a``: the fake A2A agent, playing a task timeline or a reply, and its ledger."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from streamproof.fakes.a2a import A2ALedger, A2AScript, RequestRecord, TaskRecord
from streamproof.protocol import a2a
from streamproof.testing.hub import OP_S, Fakes, ScriptError, validated

__all__ = ["FakeA2A"]

# --- fake_a2a -----------------------------------------------------------------------------------


class FakeA2A:
    """The fake A2A agent (``fake_a2a``): play a task timeline or a reply, read the ledger.

    Clients discover it at :attr:`card_url` and call JSON-RPC at :attr:`rpc_url`. Until a script
    is played the card answers 503 and every call -32603 "no scenario is loaded".
    """

    __test__ = False

    def __init__(self, fakes: Fakes) -> None:
        self._fakes = fakes
        self._fake = fakes.a2a()
        self.advertised_url: str | None = None
        """The JSON-RPC URL the card names from the next play on (``None``: the address the
        client used to fetch the card). :class:`A2AEnv` sets it to its link."""

    @property
    def base_url(self) -> str:
        return self._fake.base_url

    @property
    def card_url(self) -> str:
        return self._fake.card_url

    @property
    def rpc_url(self) -> str:
        return self.base_url + "/"

    def reset(self) -> None:
        """Unload the script: tasks stop, open streams are cut, the ledger empties."""
        self._fakes.call(lambda: self._fake.load(None))

    def play(
        self,
        task: Sequence[Mapping[str, Any]] | None = None,
        *,
        reply: str | Mapping[str, Any] | None = None,
        wire: Literal["0.3", "1.0", "both"] = "0.3",
        server: Mapping[str, Any] | None = None,
        time_scale: float = 1.0,
    ) -> A2AScript:
        """Play a task timeline (steps as a scenario writes them: ``{"at": "2s", "status":
        "working"}``...) or a direct ``reply``, on ``wire``; ``server`` sets the other
        behaviours of :class:`~streamproof.fakes.a2a.ServerBehaviour`. Replaces any earlier script
        and forgets the ledger."""
        data: dict[str, Any] = {"server": {"wire": wire, **dict(server or {})}}
        if task is not None:
            data["task"] = list(task)
        if reply is not None:
            data["reply"] = reply
        script = validated(A2AScript, data, "fake_a2a.play()")
        self.load(script, time_scale=time_scale)
        return script

    def load(self, script: A2AScript | Mapping[str, Any], *, time_scale: float = 1.0) -> None:
        """Play a whole script (an :class:`A2AScript` or a scenario's ``a2a:`` mapping)."""
        checked = validated(A2AScript, script, "fake_a2a.load()")
        if not time_scale > 0:
            raise ScriptError(f"fake_a2a: time_scale must be positive, not {time_scale!r}")
        public = self.advertised_url
        self._fakes.call(lambda: self._fake.load(checked, time_scale=time_scale, public_url=public))

    @property
    def ledger(self) -> A2ALedger:
        """Everything the server recorded since the last play or reset."""
        return self._fakes.call(lambda: self._fake.ledger)

    @property
    def requests(self) -> tuple[RequestRecord, ...]:
        return self.ledger.requests

    @property
    def tasks(self) -> tuple[TaskRecord, ...]:
        """The tasks created, in order."""
        return self.ledger.tasks

    def task(self, task_id: str) -> a2a.Task | None:
        """The task as ``tasks/get`` would return it now."""
        return self._fakes.call(lambda: self._fake.task(task_id))

    def wait_quiet(self, timeout: float = 5.0) -> None:
        """Wait until no request is in progress; ``TimeoutError`` if ``timeout`` passes."""
        if not self._fakes.run(lambda: self._fake.wait_quiet(timeout), timeout + OP_S):
            raise TimeoutError(f"fake_a2a: a request was still open after {timeout:g}s")

    async def wait_quiet_async(self, timeout: float = 5.0) -> None:
        if not await self._fakes.wait_async(lambda: self._fake.wait_quiet(timeout)):
            raise TimeoutError(f"fake_a2a: a request was still open after {timeout:g}s")
