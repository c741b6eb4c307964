"""What the push sender did, as frozen records for the ledger (times: seconds since the epoch)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["DeliveryEnding", "DeliveryFaultName", "DeliveryRecord", "WebhookRecord"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


DeliveryEnding = Literal[
    "open", "acknowledged", "refused", "lost", "unreachable", "reset", "timeout", "error"
]
"""``acknowledged``: the sender got a 2xx; ``refused``: another status; ``lost``: the fault
plan kept it from being sent; ``unreachable``: no connection; ``reset``: the connection broke
mid-exchange; ``timeout``: no answer within the sender's bound; ``error``: anything else."""

DeliveryFaultName = Literal[
    "lost", "duplicate", "delayed", "reordered", "replay", "stale", "wrong_token", "no_token"
]


class WebhookRecord(_Record):
    """A webhook a client registered in a send's configuration."""

    t: float
    task_id: str
    request: int
    """The index of the request that carried it."""
    url: str
    config_id: str | None = None
    token: bool
    """Whether it gave a token."""
    scheme: str | None = None
    """``authentication.scheme``, when it gave one with credentials."""


class DeliveryRecord(_Record):
    """One POST the sender made (or, for ``lost``, would have made)."""

    seq: int
    """Its place among the run's deliveries (0-based, in the order they were sent)."""
    delivery: int | None
    """The task's delivery number (1: the Task snapshot); None for a forged one."""
    task_id: str
    url: str
    t: float
    t_end: float | None = None
    kind: Literal["task", "status-update", "artifact-update"]
    state: str | None = None
    """The task state it carried (0.3 spelling), for a Task or a status update."""
    artifact_id: str | None = None
    append: bool | None = None
    last_chunk: bool | None = None
    text: str | None = None
    """Its artifact chunk's text, or its status message."""
    fault: DeliveryFaultName | None = None
    fault_index: int | None = None
    """The ``push.faults`` entry that made it what it is."""
    authentic: bool = True
    """Whether it carried the webhook's own token and credentials."""
    genuine: bool = True
    """Whether it carried an update the task really had (a forged one does not)."""
    receiver_status: int | None = None
    """What the webhook answered (None: it never answered)."""
    status: int | None = None
    """What the sender got back through the push link."""
    ended: DeliveryEnding = "open"
    detail: str = ""
