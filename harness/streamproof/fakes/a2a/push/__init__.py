"""Push notifications from the fake A2A server: the ``push:`` script, the sender, the relay the
``push`` link points at, and the delivery records.

* :mod:`~streamproof.fakes.a2a.push.script`: :class:`PushScript` and its delivery faults.
* :mod:`~streamproof.fakes.a2a.push.plan`: what each fault does to a delivery (pure).
* :mod:`~streamproof.fakes.a2a.push.sender`: :class:`PushDeliveries`, one load's deliveries.
* :mod:`~streamproof.fakes.a2a.push.relay`: :class:`PushRelay`, from the link to the webhook.
* :mod:`~streamproof.fakes.a2a.push.records`: the ledger's :class:`DeliveryRecord` and
  :class:`WebhookRecord`.

The script and the records are plain pydantic models, cheap to import; the sender and the
relay (aiohttp) are imported by the server only.
"""

from __future__ import annotations

from streamproof.fakes.a2a.push.records import DeliveryRecord, WebhookRecord
from streamproof.fakes.a2a.push.script import FORGED_TEXT, DeliveryFault, PushScript

__all__ = ["FORGED_TEXT", "DeliveryFault", "DeliveryRecord", "PushScript", "WebhookRecord"]
