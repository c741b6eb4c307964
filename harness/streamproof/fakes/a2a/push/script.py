"""The ``push:`` section of a script: how the fake delivers a task's updates to a webhook, and
the delivery faults of its own that a scenario scripts (docs/reference/scenario-format.md#push).

Deliveries are numbered from 1 in the order the task's updates happen, across its turns:
delivery 1 is the Task snapshot the task is created with (as a2a-sdk agents enqueue it first),
then one per status or artifact step (heartbeats carry nothing). Each fault names the delivery it
acts on::

    push:
      timeout: 10s                       # the sender's bound on one POST (scaled)
      faults:
        - {delivery: 3, do: lose}        # never sent
        - {delivery: 3, do: duplicate}   # sent twice in a row
        - {delivery: 3, do: delay, by: 4s}   # sent 4s late; later ones go on meanwhile
        - {delivery: 3, do: reorder}     # sent right after delivery 4 instead of before it
        - {delivery: 2, do: replay, before: 5}   # sent again, just before delivery 5
        - {delivery: 3, do: stale}       # held back, sent after the terminal delivery
        - {delivery: 3, do: wrong_token} # a forged delivery (wrong token) just before it
        - {delivery: 3, do: no_token, state: failed}  # a forged one with no token at all

A forged delivery carries a status update of the task that the task never had (``state``,
default ``failed``, and the message :data:`FORGED_TEXT`). Every fault must fire unless it says
``optional: true`` (docs/reference/faults.md#push).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from streamproof.core.durations import Duration
from streamproof.protocol.a2a import TaskState

__all__ = ["FORGED_TEXT", "DeliveryAction", "DeliveryFault", "PushScript"]

FORGED_TEXT: Final = "streamproof forged delivery: this update never happened"
"""The status message of every forged delivery, so a result that repeats it is plainly caught."""

DeliveryAction = Literal[
    "lose", "duplicate", "delay", "reorder", "replay", "stale", "wrong_token", "no_token"
]

FORGING: Final = frozenset({"wrong_token", "no_token"})


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DeliveryFault(_Model):
    delivery: int = Field(ge=1)
    """The delivery it acts on (1: the Task snapshot at creation, then one per update)."""
    do: DeliveryAction
    by: Duration | None = None
    """``delay``: how late (scenario time)."""
    before: int | None = Field(None, ge=2)
    """``replay``: the later delivery the replayed one is sent just before."""
    state: TaskState = TaskState.FAILED
    """``wrong_token`` / ``no_token``: the state the forged update claims."""
    optional: bool = False
    """A fault that need not fire (fault.fired says not applicable instead of failing)."""

    @model_validator(mode="after")
    def _fits(self) -> DeliveryFault:
        if (self.do == "delay") != (self.by is not None):
            raise ValueError("'by' (how late, e.g. 4s) goes with do: delay, and only with it")
        if self.do == "delay" and self.by is not None and self.by <= 0:
            raise ValueError("delay 'by' must be a positive duration")
        if (self.do == "replay") != (self.before is not None):
            raise ValueError(
                "'before' (the later delivery it is replayed before) goes with do: replay, "
                "and only with it"
            )
        if self.before is not None and self.before <= self.delivery:
            raise ValueError(
                f"replay before delivery {self.before}: it must come after delivery "
                f"{self.delivery}, the one replayed"
            )
        if self.do == "stale" and self.delivery == 1:
            raise ValueError(
                "stale needs an update (delivery 2 or later): delivery 1 is the Task snapshot"
            )
        if "state" in self.model_fields_set and self.do not in FORGING:
            raise ValueError("'state' goes with a forged delivery (wrong_token, no_token)")
        return self

    def describe(self) -> str:
        more = ""
        if self.by is not None:
            more = f" by {self.by:g}s"
        elif self.before is not None:
            more = f" before delivery {self.before}"
        elif self.do in FORGING:
            more = f" ({self.state.value})"
        return f"delivery {self.delivery}: {self.do}{more}"


class PushScript(_Model):
    """How the fake delivers to a registered webhook (``push:``)."""

    timeout: Duration = 10.0
    """The sender's bound on one POST, scenario time (the spec recommends 10-30 s)."""
    faults: tuple[DeliveryFault, ...] = ()

    @model_validator(mode="after")
    def _sane(self) -> PushScript:
        if self.timeout <= 0:
            raise ValueError("push.timeout must be a positive duration")
        seen: dict[int, str] = {}
        for i, fault in enumerate(self.faults):
            if fault.do in ("lose", "stale", "delay", "reorder"):
                other = seen.get(fault.delivery)
                if other is not None:
                    raise ValueError(
                        f"faults[{i}]: delivery {fault.delivery} is already {other} by an "
                        f"earlier fault; a delivery is sent once, at one time"
                    )
                seen[fault.delivery] = fault.do
        return self

    def check_deliveries(self, count: int) -> None:
        """Raise ValueError naming the first fault whose delivery the timeline never makes
        (``count`` deliveries in all)."""
        for i, fault in enumerate(self.faults):
            last = fault.before if fault.before is not None else fault.delivery
            if last > count:
                raise ValueError(
                    f"push.faults[{i}] ({fault.describe()}): the task makes {count} "
                    f"deliveries (1: its Task snapshot, then one per status or artifact step)"
                )
