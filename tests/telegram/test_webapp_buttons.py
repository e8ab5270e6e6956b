"""The web table's buttons on Telegram: a `web_app` Open table button under each private hand, a t.me
direct Mini App link under the group's table message (never a `web_app` button in a group: the fake Bot
API refuses one there, as Telegram does), both naming the table by a signed payload; the Mini App opened
from either gives the person their own seat, told only by Telegram's initData."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp.test_utils import TestClient, TestServer
from tgkit import Rig, seat_everyone, settings

from adapters.web.app import WebOptions, WebTable, make_app
from adapters.web.telegram_auth import sign_init_data
from bot.weblinks import signer_for
from fakes.telegram import FakeTelegram

WEBAPP = "https://cards.example/"


@pytest.fixture
async def web_rig() -> AsyncIterator[Rig]:
    rig = Rig(
        settings_=settings(
            telegram_webapp_url=WEBAPP,
            telegram_webapp_name="table",
            public_url="https://cards.example",
            web_secret="telegram-web-secret-0123",
        )
    )
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()


async def test_open_table_buttons_in_hands_and_the_group(web_rig: Rig) -> None:
    rig = web_rig
    fake: FakeTelegram = rig.fake
    people = [fake.add_user(name) for name in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people)
    await rig.settle()
    signer = signer_for(rig.settings)
    assert signer is not None
    # Private hands: a web_app button whose URL names this table, signed.
    for person in people:
        hands = [m for m in fake.bot_messages(person) if "Your hand" in m.content]
        assert hands
        hand = hands[-1]
        web = [b for row in hand.buttons for b in row if b.web_app]
        assert len(web) == 1 and web[0].text == "Open table"
        url = web[0].web_app or ""
        assert url.startswith(WEBAPP)
        assert signer.read_start(parse_qs(urlsplit(url).query)["t"][0])[0] == table.table_id
    # The group's table message: a plain URL button, the direct Mini App link, no web_app button.
    links = [
        b
        for m in fake.bot_messages(chat)
        for row in m.buttons
        for b in row
        if b.url and b.url.startswith("https://t.me/thousand_test_bot/table?startapp=")
    ]
    assert links
    start = (links[-1].url or "").split("startapp=", 1)[1]
    assert signer.read_start(start)[0] == table.table_id
    assert not [b for m in fake.bot_messages(chat) for row in m.buttons for b in row if b.web_app]
    assert all(c.status == 200 for c in fake.calls if c.method != "answerCallbackQuery")

    # Opening the group link as Bob (initData signed with the bot's token) gives Bob's seat.
    web = WebTable(
        rig.bot.runtime.service,
        signer,
        WebOptions(telegram_token=fake.token, rate=1000, burst=1000),
        deliver=rig.bot.adapter.deliver,
    )
    bob = people[1]
    init_data = sign_init_data(
        {
            "user": json.dumps({"id": bob.id, "first_name": bob.first_name, "language_code": "en"}),
            "auth_date": str(int(time.time())),
            "start_param": start,
            "chat_type": "supergroup",
            "chat_instance": "-77",
        },
        fake.token,
    )
    async with TestClient(TestServer(make_app(web))) as client:
        origin = str(client.make_url("/")).rstrip("/")
        r = await client.post("/api/session", json={"init_data": init_data}, headers={"Origin": origin})
        assert r.status == 200, await r.text()
        session = await r.json()
        doc = await table.doc()
        assert session["table"] == table.table_id
        assert session["seat"] == doc.seat_of(f"tg:{bob.id}")
        # The same initData signed with another bot's token: refused.
        forged = init_data.replace("hash=", "hash=0")
        r = await client.post("/api/session", json={"init_data": forged}, headers={"Origin": origin})
        assert r.status == 401


async def test_the_fake_refuses_web_app_buttons_in_groups(web_rig: Rig) -> None:
    """The fake behaves like Telegram here, so the test above would catch a web_app button in a group."""
    fake = web_rig.fake
    people = [fake.add_user("Alice")]
    chat = web_rig.group("Cards", people)
    bot = web_rig.bot.application.bot
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo
    from telegram.error import BadRequest

    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Open", web_app=WebAppInfo(WEBAPP))]])
    with pytest.raises(BadRequest, match=r"(?i)button_type_invalid"):
        await bot.send_message(chat.id, "x", reply_markup=markup)
    fake.user_starts_bot(people[0])
    sent = await bot.send_message(people[0].id, "x", reply_markup=markup)
    assert sent.reply_markup is not None
