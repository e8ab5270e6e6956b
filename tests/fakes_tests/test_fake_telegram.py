"""The fake Telegram server driven by the real python-telegram-bot (Application, Bot, AIORateLimiter).

A small demo bot (a command handler, a button handler, a my_chat_member handler) runs with polling
over the in-process request, with polling over loopback HTTP, and with a webhook; the remaining
tests call the Bot API through PTB and check that Telegram's rules come back as PTB's exceptions.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import struct
import zlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from telegram import (
    Bot,
    BotCommandScopeChatAdministrators,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.ext import (
    AIORateLimiter,
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
)

from fakes.telegram import FakeTelegram, FakeTelegramServer, FloodLimits, InProcessRequest, WebhookPolicy

BOT = "thousand_test_bot"
POLL = dt.timedelta(seconds=1)


# --------------------------------------------------------------------------- the demo bot


async def on_start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None and update.effective_user is not None
    payload = " ".join(context.args or []) or "-"
    await update.effective_message.reply_text(f"Hello {update.effective_user.first_name}, payload {payload}")


async def on_menu(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    keyboard = InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton("Bid 100", callback_data="bid:100"),
                InlineKeyboardButton("Pass", callback_data="pass"),
            ]
        ]
    )
    await update.effective_message.reply_text(
        "<b>Your move</b>", parse_mode=ParseMode.HTML, reply_markup=keyboard
    )


async def on_press(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    assert query is not None
    await query.answer(f"You chose {query.data}", show_alert=query.data == "pass")
    await query.edit_message_text(f"{query.from_user.first_name} chose {query.data}")


async def on_membership(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    change = update.my_chat_member
    assert change is not None
    context.bot_data.setdefault("membership", []).append((change.chat.id, change.new_chat_member.status))


def demo_app(configure: Callable[[Any], Any]) -> Application[Any, Any, Any, Any, Any, Any]:
    app = configure(Application.builder()).build()
    app.add_handler(CommandHandler("start", on_start))
    app.add_handler(CommandHandler("menu", on_menu))
    app.add_handler(CallbackQueryHandler(on_press))
    app.add_handler(ChatMemberHandler(on_membership, ChatMemberHandler.MY_CHAT_MEMBER))
    return app  # type: ignore[no-any-return]


def in_process(fake: FakeTelegram, **kwargs: Any) -> Callable[[Any], Any]:
    return lambda b: (
        b.token(fake.token)
        .request(InProcessRequest(fake, **kwargs))
        .get_updates_request(InProcessRequest(fake))
    )


def over_http(server: FakeTelegramServer) -> Callable[[Any], Any]:
    fake = server.fake
    return lambda b: b.token(fake.token).base_url(server.base_url).base_file_url(server.base_file_url)


@asynccontextmanager
async def polling(app: Application[Any, Any, Any, Any, Any, Any]) -> AsyncIterator[None]:
    async with app:
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.0, timeout=POLL)
        await app.start()
        try:
            yield
        finally:
            await app.updater.stop()
            await app.stop()


@asynccontextmanager
async def ptb_bot(fake: FakeTelegram, **kwargs: Any) -> AsyncIterator[Bot]:
    app = demo_app(in_process(fake, **kwargs))
    async with app:
        yield app.bot


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(bot_username=BOT) as server:
        yield server


@pytest.fixture
async def http(fake: FakeTelegram) -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer(fake) as server:
        yield server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tiny_png(width: int = 3, height: int = 2) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


# --------------------------------------------------------------------------- the bot running


async def play_menu_round(fake: FakeTelegram) -> None:
    alice = fake.add_user("Alice", username="alice")
    bob = fake.add_user("Bob")
    group = fake.add_group("Table", members=[alice, bob])

    fake.user_sends(group, alice, "hello everyone")  # privacy mode: the bot never sees this
    fake.user_sends(group, bob, f"/menu@{BOT}")
    menu = await fake.wait_for_bot_message(group, lambda m: m.text == "Your move")
    assert menu.entities == [{"type": "bold", "offset": 0, "length": 9}]
    assert menu.button_texts == [["Bid 100", "Pass"]]
    assert menu.reply_to is not None and menu.reply_to.sender is bob

    query_id = fake.user_presses(group, alice, menu.message_id, "bid:100")
    answer = await fake.wait_for_answer(query_id)
    assert (answer.text, answer.show_alert) == ("You chose bid:100", False)
    edited = await fake.wait_for_bot_message(group, lambda m: m.text == "Alice chose bid:100")
    assert edited is menu and edited.buttons == []
    assert [v.text for v in edited.history] == ["Your move"]
    assert fake.calls_to("sendMessage")[0].params["chat_id"] == str(group.id)


async def test_polling_in_process_runs_commands_and_buttons(fake: FakeTelegram) -> None:
    async with polling(demo_app(in_process(fake))):
        await play_menu_round(fake)
    assert fake.stats.calls["getUpdates"] >= 1
    assert fake.stats.statuses[200] == sum(fake.stats.statuses.values())


async def test_polling_over_http_runs_commands_buttons_and_files(http: FakeTelegramServer) -> None:
    fake = http.fake
    app = demo_app(over_http(http))
    async with polling(app):
        await play_menu_round(fake)
        carol = fake.add_user("Carol")
        fake.user_starts_bot(carol, payload="table-7")
        greeting = await fake.wait_for_bot_message(carol)
        assert greeting.text == "Hello Carol, payload table-7"

        sent = await app.bot.send_document(carol.id, b"score sheet\x00\xff", filename="scores.csv")
        assert sent.document is not None
        downloaded = await (await app.bot.get_file(sent.document.file_id)).download_as_bytearray()
        assert bytes(downloaded) == b"score sheet\x00\xff"
    upload = fake.calls_to("sendDocument")[0].files["document"]
    assert (upload.filename, upload.data) == ("scores.csv", b"score sheet\x00\xff")


async def test_webhook_mode_delivers_updates_with_the_secret(fake: FakeTelegram) -> None:
    port = free_port()
    app = demo_app(in_process(fake))
    async with app:
        assert app.updater is not None
        await app.updater.start_webhook(
            listen="127.0.0.1",
            port=port,
            url_path="hook",
            webhook_url=f"http://127.0.0.1:{port}/hook",
            secret_token="s3cret-token",
        )
        await app.start()
        try:
            assert fake.webhook_url == f"http://127.0.0.1:{port}/hook"
            dave = fake.add_user("Dave")
            fake.user_starts_bot(dave)
            assert (await fake.wait_for_bot_message(dave)).text == "Hello Dave, payload -"
            with pytest.raises(Conflict, match="webhook is active"):
                await app.bot.get_updates()
            await fake.wait_until(lambda: not fake.pending_updates)
            info = await app.bot.get_webhook_info()
            assert info.url == fake.webhook_url and info.pending_update_count == 0
        finally:
            await app.updater.stop()
            await app.stop()
    delivered = fake.webhook_attempts[0]
    assert (delivered.status, delivered.secret_token) == (200, "s3cret-token")


async def test_webhook_with_a_wrong_secret_is_retried_then_dropped() -> None:
    fast = FakeTelegram(bot_username=BOT, webhook_policy=WebhookPolicy(retry_delays=(0.01, 0.01)))
    port = free_port()
    app = demo_app(in_process(fast))
    async with fast, app:
        assert app.updater is not None
        await app.updater.start_webhook(listen="127.0.0.1", port=port, secret_token="right")
        await app.bot.set_webhook(f"http://127.0.0.1:{port}/", secret_token="wrong")
        await app.start()
        try:
            erin = fast.add_user("Erin")
            fast.user_starts_bot(erin)
            await fast.wait_until(lambda: len(fast.webhook_attempts) == 3 and not fast.pending_updates)
            info = await app.bot.get_webhook_info()
        finally:
            await app.updater.stop()
            await app.stop()
    assert [a.status for a in fast.webhook_attempts] == [403, 403, 403]
    assert info.last_error_message == "Wrong response from the webhook: 403 Forbidden"
    assert fast.bot_messages(erin) == []


# --------------------------------------------------------------------------- Telegram's rules via PTB


async def test_private_chat_needs_start_and_blocking_forbids(fake: FakeTelegram) -> None:
    frank = fake.add_user("Frank")
    async with polling(app := demo_app(in_process(fake))):
        with pytest.raises(Forbidden, match="bot can't initiate conversation with a user"):
            await app.bot.send_message(frank.id, "hi")
        fake.user_starts_bot(frank)
        await fake.wait_for_bot_message(frank)
        await app.bot.send_message(frank.id, "welcome back")
        fake.user_blocks_bot(frank)
        await fake.wait_until(lambda: app.bot_data.get("membership"))
        with pytest.raises(Forbidden, match="bot was blocked by the user"):
            await app.bot.send_message(frank.id, "are you there?")
    assert app.bot_data["membership"] == [(frank.id, "kicked")]
    assert [m.text for m in fake.bot_messages(frank)] == ["Hello Frank, payload -", "welcome back"]


async def test_removed_from_group_reaches_the_bot_and_forbids_sending(fake: FakeTelegram) -> None:
    gina = fake.add_user("Gina")
    group = fake.add_group("Old table", admins=[gina], supergroup=False)
    async with polling(app := demo_app(in_process(fake))):
        await app.bot.send_message(group.id, "still here")
        fake.bot_removed_from_group(group)
        await fake.wait_until(lambda: app.bot_data.get("membership"))
        with pytest.raises(Forbidden, match="bot was kicked from the group chat"):
            await app.bot.send_message(group.id, "hello?")
    assert app.bot_data["membership"] == [(group.id, "kicked")]


async def test_keyboard_limits_and_callback_data_size(fake: FakeTelegram) -> None:
    hank = fake.add_user("Hank")
    fake.user_starts_bot(hank)
    async with ptb_bot(fake) as bot:
        too_long = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="d" * 65)]])
        with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
            await bot.send_message(hank.id, "pick", reply_markup=too_long)
        wide = InlineKeyboardMarkup([[InlineKeyboardButton(str(i), callback_data=str(i)) for i in range(9)]])
        with pytest.raises(BadRequest, match="Reply markup is too long"):
            await bot.send_message(hank.id, "pick", reply_markup=wide)
        exact = InlineKeyboardMarkup([[InlineKeyboardButton("ok", callback_data="é" * 32)]])
        await bot.send_message(hank.id, "pick", reply_markup=exact)
    assert fake.last_bot_message(hank).callback_data == ["é" * 32]


async def test_edits_deletes_and_not_modified(fake: FakeTelegram) -> None:
    ivy = fake.add_user("Ivy")
    fake.user_starts_bot(ivy)
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("go", callback_data="go")]])
    async with ptb_bot(fake) as bot:
        sent = await bot.send_message(ivy.id, "score: 0", reply_markup=keyboard)
        with pytest.raises(BadRequest, match="Message is not modified: specified new message content"):
            await bot.edit_message_text("score: 0", ivy.id, sent.message_id, reply_markup=keyboard)
        await bot.edit_message_text("score: 0", ivy.id, sent.message_id)  # dropping the keyboard is a change
        with pytest.raises(BadRequest, match="Message is not modified"):
            await bot.edit_message_reply_markup(ivy.id, sent.message_id)
        with pytest.raises(BadRequest, match="Message to edit not found"):
            await bot.edit_message_text("x", ivy.id, 999)
        assert await bot.delete_message(ivy.id, sent.message_id)
        with pytest.raises(BadRequest, match="Message to delete not found"):
            await bot.delete_message(ivy.id, sent.message_id)
    assert fake.bot_messages(ivy) == [] and fake.all_messages(ivy)[-1].deleted


async def test_text_rules_and_html_parsing(fake: FakeTelegram) -> None:
    jack = fake.add_user("Jack")
    fake.user_starts_bot(jack)
    async with ptb_bot(fake) as bot:
        with pytest.raises(
            BadRequest, match=r'(?i)parse entities: unsupported start tag "br/" at byte offset 3'
        ):
            await bot.send_message(jack.id, "Hi!<br/>", parse_mode=ParseMode.HTML)
        with pytest.raises(BadRequest, match=r'(?i)can.t find end tag corresponding to start tag "b"'):
            await bot.send_message(jack.id, "<b>bold", parse_mode=ParseMode.HTML)
        with pytest.raises(BadRequest, match="Message text is empty"):
            await bot.send_message(jack.id, "  <b></b> ", parse_mode=ParseMode.HTML)
        with pytest.raises(BadRequest, match="Message is too long"):
            await bot.send_message(jack.id, "🂡" * 2049)  # 4098 UTF-16 units
        sent = await bot.send_message(
            jack.id, "<b>Trump</b> ♥ &lt;3 <a href='https://example.org'>rules</a>", parse_mode=ParseMode.HTML
        )
        await bot.send_message(jack.id, "<i>" + "x" * 4096 + "</i>", parse_mode=ParseMode.HTML)
    assert sent.text == "Trump ♥ <3 rules"
    assert [(e.type, e.offset, e.length) for e in sent.entities] == [("bold", 0, 5), ("text_link", 11, 5)]


async def test_callback_answers_are_checked(fake: FakeTelegram) -> None:
    kim = fake.add_user("Kim")
    fake.user_starts_bot(kim)
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("go", callback_data="go")]])
    short = FakeTelegram(bot_username=BOT, callback_answer_timeout=0.1)
    async with ptb_bot(fake) as bot:
        message = await bot.send_message(kim.id, "press", reply_markup=keyboard)
        first = fake.user_presses(kim, kim, message.message_id, "go")
        with pytest.raises(BadRequest, match="Message_too_long"):
            await bot.answer_callback_query(first, "x" * 201)
        await bot.answer_callback_query(first, "x" * 200, url="https://t.me/thousand_test_bot?game=1")
        with pytest.raises(BadRequest, match="Query is too old and response timeout expired"):
            await bot.answer_callback_query(first, "again")
    async with short, ptb_bot(short) as bot:
        late = short.add_user("Late")
        short.user_starts_bot(late)
        message = await bot.send_message(late.id, "press", reply_markup=keyboard)
        query = short.user_presses(late, late, message.message_id, "go")
        await asyncio.sleep(0.15)
        with pytest.raises(BadRequest, match="Query is too old"):
            await bot.answer_callback_query(query)
    answered = fake.callback_query(first)
    assert answered.text == "x" * 200 and answered.url == "https://t.me/thousand_test_bot?game=1"


async def test_flood_limit_answers_429_with_retry_after(fake: FakeTelegram) -> None:
    lea = fake.add_user("Lea")
    fake.user_starts_bot(lea)
    async with ptb_bot(fake) as bot:
        for n in range(fake.flood_limits.chat_burst):
            await bot.send_message(lea.id, f"message {n}")
        with pytest.raises(RetryAfter) as caught:
            await bot.send_message(lea.id, "one too many")
    assert caught.value._retry_after == dt.timedelta(seconds=1)
    assert fake.stats.flood_rejections == 1 and fake.stats.too_many_requests == 1
    assert fake.calls_to("sendMessage")[-1].description == "Too Many Requests: retry after 1"


async def test_group_limit_counts_edits(fake: FakeTelegram) -> None:
    group_fake = FakeTelegram(
        bot_username=BOT, limits=FloodLimits(chat_rate=100, chat_burst=100, group_per_period=3)
    )
    mia = group_fake.add_user("Mia")
    group = group_fake.add_group("Busy", members=[mia])
    async with group_fake, ptb_bot(group_fake) as bot:
        sent = await bot.send_message(group.id, "v1")
        await bot.edit_message_text("v2", group.id, sent.message_id)
        await bot.edit_message_text("v3", group.id, sent.message_id)
        with pytest.raises(RetryAfter) as caught:
            await bot.send_message(group.id, "v4")
    assert caught.value._retry_after == dt.timedelta(seconds=20)  # one message per 60/3 seconds


async def test_aio_rate_limiter_keeps_a_burst_within_limits() -> None:
    limits = FloodLimits(
        chat_rate=6, chat_burst=6, group_per_period=6, group_period=1, global_rate=10, global_burst=10
    )
    paced = FakeTelegram(bot_username=BOT, limits=limits)
    unpaced = FakeTelegram(bot_username=BOT, limits=limits)
    limiter = AIORateLimiter(
        overall_max_rate=10, overall_time_period=1, group_max_rate=6, group_time_period=1
    )

    async def burst(server: FakeTelegram, configure: Callable[[Any], Any]) -> None:
        nora = server.add_user("Nora")
        group = server.add_group("Rush", members=[nora])
        app = demo_app(configure)
        async with app:
            results = await asyncio.gather(
                *(app.bot.send_message(group.id, f"card {n}") for n in range(14)), return_exceptions=True
            )
        assert sum(not isinstance(r, Exception) for r in results) == len(server.bot_messages(group))

    loop = asyncio.get_running_loop()
    started = loop.time()
    async with paced, unpaced:
        await burst(paced, lambda b: in_process(paced)(b).rate_limiter(limiter))
        elapsed = loop.time() - started
        await burst(unpaced, in_process(unpaced))
    assert paced.stats.too_many_requests == 0 and len(paced.calls_to("sendMessage")) == 14
    assert 1.0 < elapsed < 5.0
    assert unpaced.stats.too_many_requests == 14 - 6


@pytest.mark.parametrize("transport", ["in_process", "http"])
async def test_documents_and_photos_carry_their_bytes(fake: FakeTelegram, transport: str) -> None:
    olga = fake.add_user("Olga")
    fake.user_starts_bot(olga)
    png = tiny_png(300, 200)
    async with FakeTelegramServer(fake) as server:
        configure = in_process(fake) if transport == "in_process" else over_http(server)
        app = demo_app(configure)
        async with app:
            doc = await app.bot.send_document(
                olga.id, b"\x00\x01binary", filename="deal.bin", caption="<b>Deal</b>", parse_mode="HTML"
            )
            photo = await app.bot.send_photo(olga.id, png, caption="table")
            with pytest.raises(BadRequest, match="Image_process_failed"):
                await app.bot.send_photo(olga.id, b"not an image")
            again = await app.bot.send_photo(olga.id, photo.photo[-1].file_id)
    assert doc.document is not None and doc.document.file_name == "deal.bin" and doc.document.file_size == 8
    assert doc.caption == "Deal" and doc.caption_entities[0].type == "bold"
    assert [(p.width, p.height) for p in photo.photo] == [(90, 60), (300, 200)]
    assert again.photo[-1].file_id == photo.photo[-1].file_id
    stored = fake.bot_messages(olga)
    assert stored[0].document is not None and stored[0].document.data == b"\x00\x01binary"
    assert stored[1].photo is not None and stored[1].photo.data == png


async def test_wrong_token_and_unknown_method(fake: FakeTelegram, http: FakeTelegramServer) -> None:
    stranger = Bot("987654321:AAWrongTokenWrongTokenWrongToken_xyz", base_url=http.base_url)
    with pytest.raises(InvalidToken, match="rejected by the server"):
        await stranger.initialize()
    await stranger.shutdown()
    assert (fake.calls[0].status, fake.calls[0].description) == (401, "Unauthorized")
    async with ptb_bot(fake) as bot:
        with pytest.raises(EndPointNotFound):  # PTB's reading of Telegram's 404 "Not Found"
            await bot.do_api_request("sendSmokeSignal")
        me = await bot.get_me()
    assert (me.id, me.username, me.can_read_all_group_messages) == (123456789, BOT, False)
    assert fake.stats.statuses[401] == 1 and fake.stats.statuses[404] == 1


async def test_injected_faults_surface_as_ptb_errors(fake: FakeTelegram, http: FakeTelegramServer) -> None:
    pia = fake.add_user("Pia")
    fake.user_starts_bot(pia)
    async with ptb_bot(fake, read_timeout=0.3) as bot:
        fake.faults.fail_next(methods="sendMessage")
        with pytest.raises(NetworkError, match="Bad Gateway"):
            await bot.send_message(pia.id, "a")
        fake.faults.flood_next(retry_after=7)
        with pytest.raises(RetryAfter):
            await bot.send_message(pia.id, "b")
        fake.faults.hang_next()
        with pytest.raises(TimedOut):
            await bot.send_message(pia.id, "c")
        fake.faults.hang_next(apply=True)
        with pytest.raises(TimedOut):
            await bot.send_message(pia.id, "sent although the answer was lost")
    http_bot = Bot(fake.token, base_url=http.base_url)
    async with http_bot:
        fake.faults.hang_next(methods=["sendMessage"])
        with pytest.raises(TimedOut):
            await http_bot.send_message(pia.id, "d", read_timeout=0.3)
        await http_bot.send_message(pia.id, "e")
    assert [m.text for m in fake.bot_messages(pia)] == ["sent although the answer was lost", "e"]
    assert fake.stats.injected_faults == 5 and fake.faults.pending == 0


async def test_commands_chats_and_members(fake: FakeTelegram) -> None:
    quinn, rose = fake.add_user("Quinn"), fake.add_user("Rose")
    group = fake.add_group("Club", members=[rose], admins=[quinn], bot_status="administrator")
    async with ptb_bot(fake) as bot:
        await bot.set_my_commands([("new", "Start a table"), ("join", "Join the table")])
        await bot.set_my_commands([("new", "Neuer Tisch")], language_code="de")
        await bot.set_my_commands([("stop", "Stop")], scope=BotCommandScopeChatAdministrators(group.id))
        with pytest.raises(BadRequest, match="Bot_command_invalid"):
            await bot.set_my_commands([("NewGame", "camel case is refused")])
        german = await bot.get_my_commands(language_code="de")
        await bot.delete_my_commands(language_code="de")
        admins = await bot.get_chat_administrators(group.id)
        member = await bot.get_chat_member(group.id, rose.id)
        chat = await bot.get_chat(group.id)
        assert await bot.send_chat_action(group.id, "typing")
        assert await bot.get_chat_member_count(group.id) == 3
        assert await bot.leave_chat(group.id)
        with pytest.raises(Forbidden, match="bot is not a member of the supergroup chat"):
            await bot.get_chat(group.id)
    assert [(c.command, c.description) for c in german] == [("new", "Neuer Tisch")]
    assert fake.commands() == [("new", "Start a table"), ("join", "Join the table")]
    assert fake.commands(language_code="de") == []
    assert fake.commands(scope={"type": "chat_administrators", "chat_id": group.id}) == [("stop", "Stop")]
    assert {a.user.id: a.status for a in admins} == {quinn.id: "creator", fake.bot.id: "administrator"}
    assert member.status == "member" and chat.title == "Club" and chat.type == "supergroup"
