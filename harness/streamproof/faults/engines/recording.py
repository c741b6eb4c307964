"""The records an engine makes of one request's life on a link, shared by the engines that see
requests themselves (inline, and mitmproxy's addon), so a record means the same whichever
engine made it (:mod:`streamproof.faults.records`)."""

from __future__ import annotations

import time
from typing import Protocol

from streamproof.faults.plan import Fault
from streamproof.faults.records import EndBy, EndHow, FaultRef, LinkEvent, LinkEventKind

__all__ = ["ExchangeFacts", "ExchangeRecords"]


class ExchangeFacts(Protocol):
    """What a record names of the request it belongs to."""

    @property
    def connection(self) -> int: ...

    @property
    def request(self) -> int: ...

    @property
    def method(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def rpc(self) -> str | None: ...


class ExchangeRecords:
    """Records for a link named ``link`` whose times count from ``_epoch``; a subclass keeps
    them (:meth:`_keep`)."""

    link: str
    _epoch: float

    def _keep(self, event: LinkEvent) -> None:
        raise NotImplementedError

    def _now(self) -> float:
        return time.monotonic() - self._epoch

    def _record(
        self,
        ex: ExchangeFacts,
        kind: LinkEventKind,
        detail: str = "",
        *,
        status: int | None = None,
        event_index: int | None = None,
        damage: str | None = None,
        fault: FaultRef | None = None,
        how: EndHow | None = None,
        by: EndBy | None = None,
    ) -> None:
        self._keep(
            LinkEvent(
                t=self._now(),
                link=self.link,
                connection=ex.connection,
                request=ex.request,
                kind=kind,
                detail=detail,
                method=ex.method,
                path=ex.path,
                rpc=ex.rpc,
                status=status,
                event_index=event_index,
                damage=damage,
                fault=fault,
                how=how,
                by=by,
            )
        )

    def _record_fault(self, ex: ExchangeFacts, index: int, fault: Fault, note: str = "") -> None:
        detail = fault.describe() + (f" ({note})" if note else "")
        self._record(ex, "fault", detail, fault=FaultRef(index=index, action=fault.action))
