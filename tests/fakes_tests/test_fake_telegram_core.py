"""The fake Telegram server on its own: markup parsing, flood buckets, the update queue, webhook
delivery and the raw HTTP surface, checked without a client library so the details are visible."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from fakes.telegram import (
    ApiError,
    FakeTelegram,
    FakeTelegramServer,
    FakeUsageError,
    FloodLimits,
    WebhookPolicy,
)
from fakes.telegram.entities import detect_entities, utf16_len
from fakes.telegram.html_markup import parse_html


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(bot_username="thousand_test_bot") as server:
        yield server


# --------------------------------------------------------------------------- markup


def test_html_entities_use_utf16_offsets_and_nest() -> None:
    text, entities = parse_html('🂡 <b>Ace <i>of</i></b> <pre><code class="language-py">x=1</code></pre>')
    assert text == "🂡 Ace of x=1"
    assert entities == [
        {"type": "bold", "offset": 3, "length": 6},
        {"type": "italic", "offset": 7, "length": 2},
        {"type": "pre", "offset": 10, "length": 3, "language": "py"},
    ]
    assert utf16_len("🂡") == 2


def test_html_other_tags_and_escapes() -> None:
    text, entities = parse_html(
        '<blockquote expandable>q</blockquote><span class="tg-spoiler">s</span>'
        "<tg-spoiler>t</tg-spoiler>&amp;&#x1F0A1;&nbsp;<u>u</u><s>x</s><code>c</code>"
    )
    assert text == "qst&🂡&nbsp;uxc"
    assert [e["type"] for e in entities] == [
        "expandable_blockquote",
        "spoiler",
        "spoiler",
        "underline",
        "strikethrough",
        "code",
    ]


@pytest.mark.parametrize(
    ("markup", "error"),
    [
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("Ж<p>x</p>", 'Unsupported start tag "p" at byte offset 2'),
        ("<b>x</i>", 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("<b", "Unclosed start tag at byte offset 0"),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
        ("<i><b>x</b>", 'Can\'t find end tag corresponding to start tag "i"'),
        ('<a href="x>y', "Unclosed start tag at byte offset 0"),
    ],
)
def test_html_errors_quote_telegram(markup: str, error: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_html(markup)
    assert caught.value.code == 400
    assert caught.value.description == f"Bad Request: can't parse entities: {error}"


def test_automatic_entities() -> None:
    entities = detect_entities("/bid@thousand_test_bot 120 @alice_k #hand https://t.me/x /pass")
    assert [(e["type"], e["offset"], e["length"]) for e in entities] == [
        ("bot_command", 0, 22),
        ("mention", 27, 8),
        ("hashtag", 36, 5),
        ("url", 42, 14),
        ("bot_command", 57, 5),
    ]
    code = [{"type": "code", "offset": 0, "length": 4}]
    assert detect_entities("/bid", code) == code


# --------------------------------------------------------------------------- flood control


async def test_flood_buckets_per_chat_group_and_overall() -> None:
    clock = ManualClock()
    limits = FloodLimits(global_rate=5, global_burst=5, tolerance=0)
    async with FakeTelegram(limits=limits, clock=clock) as fake:
        users = [fake.add_user(f"U{i}") for i in range(3)]
        for user in users:
            fake.user_starts_bot(user)
        for _ in range(3):
            await fake.call("sendMessage", chat_id=users[0].id, text="hi")
        with pytest.raises(ApiError) as per_chat:
            await fake.call("sendMessage", chat_id=users[0].id, text="hi")
        await fake.call("sendMessage", chat_id=users[1].id, text="hi")
        await fake.call("sendMessage", chat_id=users[2].id, text="hi")
        with pytest.raises(ApiError) as overall:
            await fake.call("sendMessage", chat_id=users[2].id, text="hi")
        clock.now += 1.0
        await fake.call("sendMessage", chat_id=users[0].id, text="hi again")
    assert per_chat.value.payload() == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 1",
        "parameters": {"retry_after": 1},
    }
    assert overall.value.parameters == {"retry_after": 1}
    assert fake.stats.flood_rejections == 2


async def test_group_limit_allows_twenty_then_one_every_three_seconds() -> None:
    clock = ManualClock()
    async with FakeTelegram(
        limits=FloodLimits(chat_rate=100, chat_burst=100, tolerance=0), clock=clock
    ) as fake:
        ann = fake.add_user("Ann")
        group = fake.add_group("G", members=[ann])
        for _ in range(20):
            await fake.call("sendMessage", chat_id=group.id, text="move")
        with pytest.raises(ApiError) as caught:
            await fake.call("sendMessage", chat_id=group.id, text="one more")
        clock.now += 3.0
        await fake.call("editMessageText", chat_id=group.id, message_id=1, text="edited after the pause")
        with pytest.raises(ApiError):
            await fake.call("editMessageText", chat_id=group.id, message_id=1, text="edits count too")
    assert caught.value.parameters == {"retry_after": 3}


# --------------------------------------------------------------------------- updates


async def test_get_updates_offset_limit_and_long_poll(fake: FakeTelegram) -> None:
    ann = fake.add_user("Ann")
    for n in range(3):
        fake.user_starts_bot(ann, payload=f"p{n}")
    first = await fake.call("getUpdates", limit=2)
    assert [u["message"]["text"] for u in first] == ["/start p0", "/start p1"]
    rest = await fake.call("getUpdates", offset=first[-1]["update_id"] + 1)
    assert [u["message"]["text"] for u in rest] == ["/start p2"]
    assert rest[0]["message"]["entities"] == [{"type": "bot_command", "offset": 0, "length": 6}]

    poll = asyncio.create_task(fake.call("getUpdates", offset=rest[-1]["update_id"] + 1, timeout=5))
    await asyncio.sleep(0.05)
    assert not poll.done()
    fake.user_sends(ann, ann, "late")
    woken = await asyncio.wait_for(poll, 1)
    assert [u["message"]["text"] for u in woken] == ["late"]
    assert await fake.call("getUpdates", offset=-1) == woken


async def test_a_second_poller_terminates_the_first(fake: FakeTelegram) -> None:
    older = asyncio.create_task(fake.call("getUpdates", timeout=5))
    await asyncio.sleep(0.02)
    assert await fake.call("getUpdates") == []
    with pytest.raises(ApiError) as caught:
        await older
    assert caught.value.code == 409 and "terminated by other getUpdates request" in caught.value.description


async def test_allowed_updates_filter_new_updates(fake: FakeTelegram) -> None:
    ann = fake.add_user("Ann")
    fake.user_starts_bot(ann)
    sent = await fake.call(
        "sendMessage",
        chat_id=ann.id,
        text="x",
        reply_markup={"inline_keyboard": [[{"text": "b", "callback_data": "b"}]]},
    )
    await fake.call("getUpdates", offset=-1, allowed_updates=json.dumps(["callback_query"]))
    await fake.call("getUpdates", offset=fake.pending_updates[-1]["update_id"] + 1)
    fake.user_sends(ann, ann, "ignored")
    query_id = fake.user_presses(ann, ann, sent["message_id"], "b")
    [update] = await fake.call("getUpdates")
    query = update["callback_query"]
    assert query["id"] == query_id and query["data"] == "b" and query["from"]["id"] == ann.id
    assert query["message"]["message_id"] == sent["message_id"] and query["chat_instance"]


async def test_privacy_mode_decides_what_the_bot_sees() -> None:
    async with (
        FakeTelegram(bot_username="thousand_test_bot") as fake,
        FakeTelegram(privacy_mode=False) as nosy,
    ):
        for server, expected in ((fake, 4), (nosy, 6)):
            ann, ben = server.add_user("Ann"), server.add_user("Ben")
            group = server.add_group("G", members=[ann, ben])
            bot_post = await server.call("sendMessage", chat_id=group.id, text="your turn")
            server.user_sends(group, ann, "chatting")
            server.user_sends(group, ann, "/roll@other_bot")
            server.user_sends(group, ann, "/new")
            server.user_sends(group, ben, f"/join@{server.bot.username}")
            server.user_sends(group, ben, "pass", reply_to=bot_post["message_id"])
            server.user_sends(group, ann, f"hey @{server.bot.username}")
            assert len(server.pending_updates) == expected
    seen = [u["message"]["text"] for u in fake.pending_updates]
    assert seen == ["/new", "/join@thousand_test_bot", "pass", "hey @thousand_test_bot"]


async def test_membership_updates_have_the_bot_api_shape(fake: FakeTelegram) -> None:
    ann = fake.add_user("Ann", username="ann")
    group = fake.add_group("G", admins=[ann], bot_status="left")
    fake.bot_added_to_group(group, as_admin=True)
    fake.user_starts_bot(ann)
    fake.user_blocks_bot(ann)
    fake.user_starts_bot(ann)
    kinds = [next(k for k in u if k != "update_id") for u in fake.pending_updates]
    assert kinds == ["my_chat_member", "message", "message", "my_chat_member", "my_chat_member", "message"]
    added = fake.pending_updates[0]["my_chat_member"]
    assert added["old_chat_member"]["status"] == "left"
    assert (
        added["new_chat_member"]["status"] == "administrator"
        and added["new_chat_member"]["can_delete_messages"]
    )
    assert fake.pending_updates[1]["message"]["new_chat_members"][0]["id"] == fake.bot.id
    assert fake.pending_updates[3]["my_chat_member"]["new_chat_member"] == {
        "user": fake.bot.to_api(),
        "status": "kicked",
        "until_date": 0,
    }


async def test_usage_errors_catch_impossible_scenarios(fake: FakeTelegram) -> None:
    ann, ben = fake.add_user("Ann"), fake.add_user("Ben")
    group = fake.add_group("G", members=[ann])
    with pytest.raises(FakeUsageError, match="start the bot"):
        fake.user_sends(ann, ann, "hi")
    with pytest.raises(FakeUsageError, match="not a member"):
        fake.user_sends(group, ben, "hi")
    sent = await fake.call("sendMessage", chat_id=group.id, text="x")
    with pytest.raises(FakeUsageError, match="no button"):
        fake.user_presses(group, ann, sent["message_id"], "nope")


# --------------------------------------------------------------------------- webhook


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[str, list[tuple[dict[str, Any], dict[str, str]]], list[int]]]:
    """A webhook endpoint answering the statuses queued in `answers` (then 200), recording requests."""
    received: list[tuple[dict[str, Any], dict[str, str]]] = []
    answers: list[int] = []

    async def hook(request: web.Request) -> web.Response:
        received.append((await request.json(), dict(request.headers)))
        return web.Response(status=answers.pop(0) if answers else 200)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}/hook", received, answers
    await runner.cleanup()


async def test_webhook_retries_failures_in_order(
    receiver: tuple[str, list[tuple[dict[str, Any], dict[str, str]]], list[int]],
) -> None:
    url, received, answers = receiver
    answers.extend([500, 502])
    async with FakeTelegram(webhook_policy=WebhookPolicy(retry_delays=(0.01, 0.01, 0.01))) as fake:
        ann = fake.add_user("Ann")
        fake.user_starts_bot(ann, payload="first")
        assert await fake.call("setWebhook", url=url, secret_token="tok_en-1") is True
        fake.user_sends(ann, ann, "second")
        await fake.wait_until(lambda: len(received) == 4)
        info = await fake.call("getWebhookInfo")
        with pytest.raises(ApiError, match="bad webhook"):
            await fake.call("setWebhook", url="https://example.org/hook")
        with pytest.raises(ApiError, match="unallowed characters"):
            await fake.call("setWebhook", url=url, secret_token="no spaces")
        await fake.call("deleteWebhook")
        assert await fake.call("getUpdates") == []
    texts = [body["message"]["text"] for body, _ in received]
    assert texts == ["/start first", "/start first", "/start first", "second"]
    assert all(h["X-Telegram-Bot-Api-Secret-Token"] == "tok_en-1" for _, h in received)
    assert received[0][1]["Content-Type"] == "application/json"
    assert info["pending_update_count"] == 0 and info["url"] == url
    assert info["last_error_message"] == "Wrong response from the webhook: 502 Bad Gateway"


async def test_webhook_gives_up_on_a_dead_endpoint_and_reports_it() -> None:
    async with FakeTelegram(webhook_policy=WebhookPolicy(retry_delays=(0.01,))) as fake:
        ann = fake.add_user("Ann")
        fake.user_starts_bot(ann)
        await fake.call("setWebhook", url="http://127.0.0.1:9/dead", drop_pending_updates=True)
        assert fake.pending_updates == []
        fake.user_sends(ann, ann, "anyone?")
        await fake.wait_until(lambda: len(fake.webhook_attempts) == 2 and not fake.pending_updates)
        info = await fake.call("getWebhookInfo")
    assert info["last_error_message"] == "Connection refused"
    assert [a.status for a in fake.webhook_attempts] == [None, None]


# --------------------------------------------------------------------------- raw HTTP surface


async def test_http_surface_accepts_every_encoding(fake: FakeTelegram) -> None:
    ann = fake.add_user("Ann")
    fake.user_starts_bot(ann)
    async with FakeTelegramServer(fake) as server, aiohttp.ClientSession() as session:
        api = f"{server.base_url}{fake.token}"
        async with session.post(f"{api}/sendMessage", json={"chat_id": ann.id, "text": "json"}) as r:
            assert r.status == 200 and (await r.json())["result"]["text"] == "json"
        async with session.post(f"{api}/SENDMESSAGE", data={"chat_id": str(ann.id), "text": "form"}) as r:
            assert r.status == 200
        async with session.get(f"{api}/sendMessage", params={"chat_id": str(ann.id), "text": "query"}) as r:
            assert r.status == 200
        async with session.get(f"{server.base_url}123:nope/getMe") as r:
            assert (r.status, await r.json()) == (
                401,
                {"ok": False, "error_code": 401, "description": "Unauthorized"},
            )
        async with session.get(f"{api}/getMee") as r:
            assert (r.status, await r.json()) == (
                404,
                {"ok": False, "error_code": 404, "description": "Not Found"},
            )
        fake.faults.fail_next(status=502)
        async with session.get(f"{api}/getMe") as r:
            assert r.status == 502 and "<title>502 Bad Gateway</title>" in await r.text()
        async with session.post(f"{api}/sendMessage", json={"chat_id": 42, "text": "x"}) as r:
            assert (await r.json())["description"] == "Bad Request: chat not found"
    assert [m.text for m in fake.bot_messages(ann)] == ["json", "form", "query"]
