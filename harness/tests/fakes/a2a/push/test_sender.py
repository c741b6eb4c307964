"""The push sender against a tiny webhook of the test's own: what it delivers, in which order,
with which headers, and what each delivery fault does (the ledger says what happened)."""

from __future__ import annotations

import json

from harness.tests.fakes.a2a.helpers import until
from harness.tests.fakes.a2a.push.helpers import (
    TOKEN,
    loaded,
    push_script,
    send_with_webhook,
    webhook,
)
from streamproof.fakes.a2a.push.script import FORGED_TEXT
from streamproof.faults.engines.inline import InlineProxy
from streamproof.faults.plan import parse_plan
from streamproof.protocol.a2a.push import TOKEN_HEADER


def _done(fake: object, count: int) -> bool:
    ledger = fake.ledger  # type: ignore[attr-defined]
    return len(ledger.deliveries) >= count and all(d.ended != "open" for d in ledger.deliveries)


async def test_every_update_is_delivered_in_order_as_a2a_sdk_sends_it() -> None:
    async with webhook() as hook, loaded(push_script()) as fake:
        card = fake.ledger  # nothing yet
        assert card.deliveries == ()
        await send_with_webhook(fake.base_url, hook.url)
        await until(lambda: _done(fake, 5))
        assert hook.kinds() == [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate",
        ]
        first = hook.got[0]
        assert first["headers"][TOKEN_HEADER] == TOKEN
        assert first["headers"]["Content-Type"] == "application/json"
        # httpx's json=: compact separators, no ASCII escaping
        assert (
            first["body"]
            == json.dumps(first["payload"], ensure_ascii=False, separators=(",", ":")).encode()
        )
        ledger = fake.ledger
        assert [d.delivery for d in ledger.deliveries] == [1, 2, 3, 4, 5]
        assert all(
            d.ended == "acknowledged" and d.receiver_status == 200 for d in ledger.deliveries
        )
        assert ledger.webhooks[0].url == hook.url and ledger.webhooks[0].token


async def test_the_card_advertises_push_notifications() -> None:
    import httpx

    async with loaded(push_script()) as fake:
        async with httpx.AsyncClient() as http:
            card = (await http.get(fake.card_url)).json()
    assert card["capabilities"]["pushNotifications"] is True


async def test_lost_duplicated_and_replayed_deliveries() -> None:
    faults = [
        {"delivery": 2, "do": "lose"},
        {"delivery": 3, "do": "duplicate"},
        {"delivery": 3, "do": "replay", "before": 5},
    ]
    async with webhook() as hook, loaded(push_script(faults)) as fake:
        await send_with_webhook(fake.base_url, hook.url)
        await until(lambda: _done(fake, 7))
    texts = [
        g["payload"].get("artifactUpdate", {}).get("artifact", {}).get("parts", [{}])[0].get("text")
        for g in hook.got
    ]
    assert hook.kinds() == [
        "task",
        "artifactUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert texts[1:4] == ["Section 1 ", "Section 1 ", "Section 2"]
    assert texts[4] == "Section 1 "  # the replay, just before delivery 5
    faults_seen = [(d.delivery, d.fault, d.ended) for d in fake.ledger.deliveries]
    assert (2, "lost", "lost") in faults_seen
    assert (3, "duplicate", "acknowledged") in faults_seen
    assert (3, "replay", "acknowledged") in faults_seen


async def test_reordered_and_stale_deliveries() -> None:
    faults = [{"delivery": 3, "do": "reorder"}, {"delivery": 2, "do": "stale"}]
    async with webhook() as hook, loaded(push_script(faults)) as fake:
        await send_with_webhook(fake.base_url, hook.url)
        await until(lambda: _done(fake, 5))
    order = [d.delivery for d in fake.ledger.deliveries]
    assert order == [1, 4, 3, 5, 2]  # 3 after 4; 2 after the terminal 5
    stale = fake.ledger.deliveries[-1]
    assert stale.fault == "stale" and stale.state == "working"


async def test_forged_deliveries_carry_no_or_a_wrong_token() -> None:
    faults = [{"delivery": 2, "do": "wrong_token"}, {"delivery": 3, "do": "no_token"}]
    async with webhook() as hook, loaded(push_script(faults)) as fake:
        await send_with_webhook(fake.base_url, hook.url)
        await until(lambda: _done(fake, 7))
    forged = [g for g in hook.got if not g["authentic"]]
    assert len(forged) == 2
    assert TOKEN_HEADER not in forged[1]["headers"]
    assert forged[0]["headers"][TOKEN_HEADER] != TOKEN
    message = forged[0]["payload"]["statusUpdate"]["status"]["message"]["parts"][0]["text"]
    assert message == FORGED_TEXT
    records = [d for d in fake.ledger.deliveries if not d.genuine]
    assert [(r.fault, r.receiver_status, r.ended, r.authentic) for r in records] == [
        ("wrong_token", 401, "refused", False),
        ("no_token", 401, "refused", False),
    ]


async def test_a_delayed_delivery_arrives_late_and_the_others_go_on() -> None:
    async with (
        webhook() as hook,
        loaded(push_script([{"delivery": 2, "do": "delay", "by": "1.5s"}]), scale=0.2) as fake,
    ):
        await send_with_webhook(fake.base_url, hook.url)
        await until(lambda: _done(fake, 5))
    # delivery 2 (at 0.2 s) 0.3 s late: after 3 (0.4 s), before 4 (0.6 s)
    assert [d.delivery for d in fake.ledger.deliveries] == [1, 3, 2, 4, 5]
    assert fake.ledger.deliveries[2].fault == "delayed"


async def test_a_webhook_that_is_gone_is_recorded_unreachable() -> None:
    async with webhook() as hook:
        url = hook.url
    async with loaded(push_script()) as fake:
        await send_with_webhook(fake.base_url, url)
        await until(lambda: _done(fake, 5))
    assert {d.ended for d in fake.ledger.deliveries} == {"unreachable"}
    assert all(d.receiver_status is None for d in fake.ledger.deliveries)


async def test_a_reset_on_the_push_link_is_what_the_sender_sees() -> None:
    async with webhook() as hook, loaded(push_script()) as fake:
        link = InlineProxy("push", fake.push_relay_url, time_scale=0.05)
        via = await link.start()
        try:
            link.load(parse_plan([{"when": {"on_request": True, "occurrence": 2}, "do": "rst"}]))
            fake.load(push_script(), time_scale=0.05, push_via=via)
            await send_with_webhook(fake.base_url, hook.url)
            await until(lambda: _done(fake, 5))
        finally:
            await link.close()
    second = fake.ledger.deliveries[1]
    assert second.ended == "reset"
    assert [d.ended for d in fake.ledger.deliveries].count("acknowledged") == 4


async def test_close_ends_deliveries_in_flight() -> None:
    async with webhook() as hook:
        hook_url = hook.url
        async with loaded(push_script(), scale=1.0) as fake:
            await send_with_webhook(fake.base_url, hook_url)
            await until(lambda: len(fake.ledger.deliveries) >= 1)
        # closed while the timeline still ran: nothing left open or running
        assert all(d.ended != "open" for d in fake.ledger.deliveries)


async def test_the_fake_posts_what_a2a_sdk_s_own_sender_posts() -> None:
    """Differential: the same update sent by a2a-sdk 1.3's BasePushNotificationSender and by
    the fake reaches a webhook with the same body, byte for byte, and the same token."""
    import httpx as httpx_
    from a2a.server.context import ServerCallContext
    from a2a.server.tasks import BasePushNotificationSender, InMemoryPushNotificationConfigStore
    from a2a.types import a2a_pb2
    from google.protobuf.json_format import ParseDict

    from streamproof.protocol import a2a as ours
    from streamproof.protocol.a2a.push import push_body

    event = ours.StatusUpdate(
        task_id="t-1",
        context_id="c-1",
        status=ours.TaskStatus(
            state=ours.TaskState.WORKING,
            message=ours.Message(
                message_id="m", role="agent", parts=(ours.TextPart(text="drafting ü"),)
            ),
            timestamp="2026-01-02T03:04:05Z",
        ),
    )
    sdk_event = ParseDict(
        json.loads(push_body(event))["statusUpdate"], a2a_pb2.TaskStatusUpdateEvent()
    )
    async with webhook() as hook:
        store = InMemoryPushNotificationConfigStore()
        config = a2a_pb2.TaskPushNotificationConfig(url=hook.url, token=TOKEN)
        await store.set_info("t-1", config, ServerCallContext())
        async with httpx_.AsyncClient() as http:
            await BasePushNotificationSender(http, store).send_notification("t-1", sdk_event)
        assert len(hook.got) == 1
        theirs = hook.got[0]
    assert theirs["body"] == push_body(event)
    assert theirs["headers"][TOKEN_HEADER] == TOKEN
    assert theirs["headers"]["Content-Type"] == "application/json"
