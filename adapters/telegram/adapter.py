"""The Telegram front end: PTB handlers that turn updates into commands and the answers into messages.

One `TelegramAdapter` per process. `install(app)` adds the handlers to a PTB `Application`, as in PTB's
own examples (CommandHandler, CallbackQueryHandler, ChatMemberHandler, an error handler); `start()`
(after the application is initialized) sets the command menu; `deliver()` sends what the runtime's turn
timers cause; `stop()` delivers what is still queued.

What the adapter decides itself, because only it knows Telegram:
- Who may take a seat: only people the bot can write to privately (see `reach`). Anyone else pressing
  Join gets the private chat opened through a deep link; pressing Start there seats them.
- Who administers a group (`getChatMember`), for the commands where the service asks.
- What a lost chat means: a user who blocked the bot or left the group is unreachable (a computer plays
  their seat until they come back with /back, and the group is told why); a group that removed the bot
  has its table ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Final, Literal, Protocol

from telegram import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Chat,
    ChatMember,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
)
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from adapters.telegram.clock import Clock, SystemClock
from adapters.telegram.content import Content
from adapters.telegram.dispatch import Answer, Dispatcher, Origin, escape_html
from adapters.telegram.i18n import (
    BAD_LINK,
    COMMAND_MENU,
    GROUP_TYPING,
    HAND_SENT,
    HAND_UNREACHABLE,
    text_in,
)
from adapters.telegram.inbound import (
    ADMIN_COMMANDS,
    MENU_WORDS,
    PLATFORM,
    addressed_elsewhere,
    chat_ref,
    command_of,
    user_ref,
)
from adapters.telegram.migration import forget_group_refs, rekey_hands
from adapters.telegram.outbox import Outbox
from adapters.telegram.queue import Op
from adapters.telegram.reach import (
    BadLink,
    Reach,
    StartIntent,
    link_key,
    parse_start,
    start_link,
    start_payload,
)
from adapters.telegram.recovery import LOST_HAND_GRACE, resend_lost_hands
from adapters.telegram.webapp import WebAppButtons
from bot.commands import SECRET_MOVES, from_payload
from bot.i18n import LANGUAGES
from bot.markup import escape
from bot.model import ChatRef, Command, Message, Private, UserRef
from bot.ops.health import Health
from bot.ops.logs import log_context
from bot.ops.metrics import Metrics
from bot.ops.shutdown import ShuttingDown
from bot.storage import StorageError, Store
from core.rules import PRESETS

__all__ = ["ALLOWED_UPDATES", "HEALTH_COMPONENT", "Runner", "TelegramAdapter"]

log = logging.getLogger("thousand.telegram")

HEALTH_COMPONENT: Final = "telegram"
METRICS_PLATFORM: Final = "telegram"
ADMIN_CACHE_SECONDS: Final = 60.0
SEATING: Final = frozenset({"new", "join"})
"""Commands that seat their sender: only for people the bot can write to privately."""
_GONE: Final = frozenset({ChatMember.LEFT, ChatMember.BANNED})
_SEAT_NOTE: Final = "To take a seat, open our private chat and press Start: your cards will come there."
ALLOWED_UPDATES: Final = ("message", "callback_query", "my_chat_member", "chat_member")


class Runner(Protocol):
    """Runs one command through the service (`bot.ops.runtime.Runtime` in a bot process: counted, timed,
    refused with `ShuttingDown` once the process stops)."""

    async def handle(self, command: Command, *, kind: str = "command") -> list[Message]: ...

    async def move_chat(self, old: ChatRef, new: ChatRef) -> tuple[str, ...] | None: ...

    async def language_of(self, user: UserRef, chat_key: str | None = None) -> str: ...


Context = ContextTypes.DEFAULT_TYPE


class TelegramAdapter:
    def __init__(
        self,
        runner: Runner,
        store: Store,
        *,
        clock: Clock | None = None,
        metrics: Metrics | None = None,
        health: Health | None = None,
        refs_ttl: float = 365 * 24 * 3600,
        web: WebAppButtons | None = None,
        link_secret: str | None = None,
        paid_broadcast: bool = False,
    ) -> None:
        """The turn timers are the runtime's: it hands what they cause to `deliver`. `web`: the web
        table's Open table buttons (`adapters.telegram.webapp`). `link_secret` signs the deep links
        (LINK_SECRET; unset: a key derived from the bot token, see `reach.link_key`). `paid_broadcast`:
        sends use Telegram's paid broadcasts (`TELEGRAM_PAID_BROADCAST`)."""
        self.web = web
        self.paid_broadcast = paid_broadcast
        self.runner = runner
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.metrics = metrics
        self.health = health
        self.refs_ttl = refs_ttl
        self.reach = Reach(store, ttl_seconds=refs_ttl)
        self._link_secret = link_secret
        self._link_key: bytes | None = None
        self._outbox: Outbox | None = None
        self._dispatcher: Dispatcher | None = None
        self._app: Application[Any, Any, Any, Any, Any, Any] | None = None
        self._admins: dict[tuple[int, int], tuple[bool, float]] = {}
        self._known: set[int] = set()
        """Users this process saw writing privately (the store says the same; this saves a read)."""
        self._probe: asyncio.Task[None] | None = None
        self._recovery: asyncio.Task[None] | None = None
        self.recovered_hands = 0
        """Turn hands of a stopped process sent again at this one's start (`recovery`)."""
        self.in_flight = 0
        self.last_update_id = 0
        """The highest update id whose handling finished (tests wait for it)."""
        self.updates = 0
        """Updates whose handling finished."""
        self.errors = 0
        if health is not None:
            health.add_component(HEALTH_COMPONENT)

    # --- wiring -----------------------------------------------------------------------------------

    @property
    def outbox(self) -> Outbox:
        if self._outbox is None:
            raise RuntimeError("install() the adapter on an application first")
        return self._outbox

    @property
    def dispatcher(self) -> Dispatcher:
        if self._dispatcher is None:
            raise RuntimeError("install() the adapter on an application first")
        return self._dispatcher

    @property
    def username(self) -> str:
        if self._app is None:
            return ""
        name: str = self._app.bot.username
        return name

    def install(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Add the handlers to `app` and build the delivery queues on its bot."""
        self._app = app
        self._outbox = Outbox(
            app.bot,
            self.store,
            clock=self.clock.now,
            metrics=self.metrics,
            refs_ttl=self.refs_ttl,
            paid_broadcast=self.paid_broadcast,
            on_private_lost=self._private_lost,
            on_group_lost=self._group_lost,
            on_chat_migrated=self._send_migrated,
        )
        self._dispatcher = Dispatcher(
            self._outbox, self.reach, bot_username=lambda: self.username, web=self.web
        )
        new = filters.UpdateType.MESSAGE
        app.add_handler(CommandHandler("start", self._on_start, filters=new))
        app.add_handler(CommandHandler(MENU_WORDS, self._on_command, filters=new))
        app.add_handler(MessageHandler(new & filters.COMMAND, self._on_other_command))
        app.add_handler(MessageHandler(new & filters.TEXT & ~filters.COMMAND, self._on_text))
        app.add_handler(MessageHandler(new & filters.StatusUpdate.LEFT_CHAT_MEMBER, self._on_member_left))
        app.add_handler(MessageHandler(new & filters.StatusUpdate.NEW_CHAT_TITLE, self._on_title))
        app.add_handler(MessageHandler(new & filters.StatusUpdate.MIGRATE, self._on_migrate))
        app.add_handler(CallbackQueryHandler(self._on_button))
        app.add_handler(ChatMemberHandler(self._on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER))
        app.add_handler(ChatMemberHandler(self._on_chat_member, ChatMemberHandler.CHAT_MEMBER))
        app.add_handler(TypeHandler(Update, self._on_done), group=1000)
        app.add_error_handler(self._on_error)

    async def start(self) -> None:
        """After `app.initialize()`: the command menu, readiness, and the turn hands a crashed process
        did not send (`recovery`), looked for once, a little later."""
        await self.set_commands()
        if self.health is not None:
            self.health.set_connected(HEALTH_COMPONENT, True)
        self._recovery = asyncio.get_running_loop().create_task(
            self._resend_lost_hands(), name="telegram-recovery"
        )

    async def _resend_lost_hands(self) -> None:
        await self.clock.sleep(LOST_HAND_GRACE)
        try:
            sent = await resend_lost_hands(
                self.store, lambda command: self.run(command, None, kind="recovery"), now=self.clock.now()
            )
        except Exception:
            log.exception("looking for lost hands failed")
            return
        self.recovered_hands = sent
        if sent:
            log.info("%d hand(s) a stopped process had not sent were sent again", sent)

    async def stop(self, timeout: float = 10.0) -> bool:
        """Deliver the queued messages (up to `timeout`) and stop."""
        for task in (self._probe, self._recovery):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self.health is not None:
            self.health.set_connected(HEALTH_COMPONENT, False, "stopped")
        if self._outbox is None:
            return True
        return await self._outbox.close(timeout)

    async def set_commands(self) -> None:
        """The command menu, in every supported language (and the default for the rest)."""
        if self._app is None:
            return
        bot = self._app.bot
        for lang in (None, *LANGUAGES):
            menu = [BotCommand(word, text_in(lang or "en", desc)[:256]) for word, desc in COMMAND_MENU]
            for scope in (BotCommandScopeAllGroupChats(), BotCommandScopeAllPrivateChats()):
                try:
                    await bot.set_my_commands(menu, scope=scope, language_code=lang)
                except TelegramError as exc:
                    log.warning("setMyCommands(%s) failed: %s", lang or "default", exc)

    # --- running commands -------------------------------------------------------------------------

    async def run(self, command: Command, origin: Origin | None, *, kind: str = "command") -> list[Message]:
        """Hand one command to the service and route what it answers (nothing when the process is
        stopping: the update is dropped, as a restart would)."""
        try:
            messages = await self.runner.handle(command, kind=kind)
        except ShuttingDown:
            log.info("stopping: %s not handled", command.name)
            return []
        messages = [self._help_for_mode(m) if m.kind == "help" else m for m in messages]
        await self.dispatcher.dispatch(messages, origin)
        return messages

    def _help_for_mode(self, message: Message) -> Message:
        """The help, with what typing works in groups for this bot (privacy mode on or off)."""
        reads_all = bool(self._app is not None and self._app.bot.can_read_all_group_messages)
        note = text_in(message.language, GROUP_TYPING[reads_all])
        return replace(message, text=f"{message.text}\n\n{escape(note)}")

    async def deliver(self, messages: list[Message]) -> None:
        """Send messages that no update caused (the turn timers')."""
        await self.dispatcher.dispatch(messages, None)

    async def _guard(
        self, kind: str, update: Update, work: Callable[[], Awaitable[str]], answer: Answer | None = None
    ) -> None:
        """Count, log in context, and never let one update's failure escape."""
        chat = update.effective_chat
        user = update.effective_user
        self.in_flight += 1
        outcome = "error"
        fields: dict[str, str | int | None] = {
            "platform": "telegram",
            "update_id": update.update_id,
            "chat_id": chat.id if chat else None,
            "user_id": user.id if user else None,
        }
        with log_context(private=chat is not None and chat.type == "private", **fields):
            try:
                outcome = await work()
            except StorageError:
                outcome = "unavailable"
                log.warning("store unavailable while handling an update", exc_info=True)
            except Exception:
                self.errors += 1
                log.exception("update %s failed", update.update_id)
            finally:
                self.in_flight -= 1
                if answer is not None and not answer.done:
                    with contextlib.suppress(TelegramError):
                        await answer()
                if self.metrics is not None and outcome in ("gated", "ignored"):
                    # The rest went through the runner, which counted them.
                    self.metrics.update_handled(METRICS_PLATFORM, kind, outcome)

    async def _admin(self, chat_id: int, user_id: int) -> bool | None:
        """Whether the user administers the group (cached for a minute); None when Telegram won't say."""
        now = time.monotonic()
        cached = self._admins.get((chat_id, user_id))
        if cached is not None and cached[1] > now:
            return cached[0]
        if self._app is None:
            return None
        try:
            member = await self._app.bot.get_chat_member(chat_id, user_id)
        except TelegramError as exc:
            log.info("getChatMember failed: %s", exc)
            return None
        is_admin = member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR)
        if len(self._admins) > 10_000:
            self._admins.clear()
        self._admins[(chat_id, user_id)] = (is_admin, now + ADMIN_CACHE_SECONDS)
        return is_admin

    async def _with_admin(self, command: Command) -> Command:
        if command.name not in ADMIN_COMMANDS or command.chat.private:
            return command
        is_admin = await self._admin(int(command.chat.chat_id), int(command.user.user_id))
        return replace(command, user=replace(command.user, is_admin=is_admin))

    async def _note_private(self, user_id: int) -> None:
        """A private message arrived: the private chat works (remembered once per process)."""
        if user_id in self._known:
            return
        await self.reach.mark(user_id, True)
        self.outbox.forget_lost(user_id)
        if len(self._known) > 100_000:
            self._known.clear()
        self._known.add(user_id)

    async def _may_seat(self, user_id: int) -> bool:
        if user_id in self._known:
            return True
        known = await self.reach.known(user_id)
        if known:
            self._known.add(user_id)
        return known is True

    # --- deep links and secret moves (security: docs/TELEGRAM.md "Deep links") -------------------------

    @property
    def link_key(self) -> bytes:
        """The key of this bot's deep links (the same in every process of the bot)."""
        if self._link_key is None:
            token = str(self._app.bot.token) if self._app is not None else ""
            self._link_key = link_key(self._link_secret, token)
        return self._link_key

    def _link_payload(self, name: str, chat: ChatRef, user_id: int, arg: str | None) -> str:
        """A deep link's payload for the one person who pressed Join or New (typed /join, /new) in `chat`."""
        action: Literal["join", "new"] = "new" if name == "new" else "join"
        return start_payload(self.link_key, action, chat.chat_id, user_id, now=self.clock.now(), arg=arg)

    async def _delete_secret(self, chat: ChatRef, message_id: int) -> None:
        """A give or discard typed in the group names hidden cards: take the message down where the bot may
        (an admin with can_delete_messages); the service refuses the move, pointing to the private chat."""
        if self._app is None:
            return
        try:
            await self._app.bot.delete_message(int(chat.chat_id), message_id)
        except TelegramError as exc:
            log.info("could not delete a secret move typed in %s: %s", chat.chat_id, exc)

    async def _gate_note(self, chat: ChatRef, user: UserRef, payload: str, reply_to: int | None) -> None:
        """In the group: the deep link that opens the private chat and, on Start, seats the user. It names
        them and is for them: in their language (their /lang choice, else Telegram's, else the group's)."""
        lang = await self.runner.language_of(user, chat.key)
        text = text_in(
            lang, "To take a seat, open our private chat and press Start: your cards will come there."
        )
        html = f"{escape_html(user.name)}: {escape_html(text)}"
        button = InlineKeyboardButton(text_in(lang, "Join"), url=start_link(self.username, payload))
        content = Content("text", html, InlineKeyboardMarkup([[button]]))
        self.outbox.put(Op(int(chat.chat_id), content, silent=True, reply_to=reply_to))

    # --- handlers ---------------------------------------------------------------------------------

    async def _typed(self, update: Update, text: str, kind: str = "command") -> str:
        message = update.effective_message
        tg_user = update.effective_user
        tg_chat = update.effective_chat
        if message is None or tg_user is None or tg_chat is None or tg_user.is_bot:
            return "ignored"
        chat = chat_ref(tg_chat)
        if chat.private:
            await self._note_private(tg_user.id)
        command = command_of(text, chat, user_ref(tg_user))
        if command is None:
            return "ignored"
        arg = command.args[0].lower() if command.name == "new" and command.args else None
        gated = arg is None or arg in PRESETS  # an unknown preset is refused by the service, not linked
        if command.name in SEATING and gated and not chat.private and not await self._may_seat(tg_user.id):
            # Only a preset's name rides in the link: whatever else was typed would be shown back in the
            # group inside the link (and a word like `kc` reads as a card there).
            payload = self._link_payload(command.name, chat, tg_user.id, arg)
            await self._gate_note(chat, command.user, payload, message.message_id)
            return "gated"
        if command.name in SECRET_MOVES and not chat.private:
            await self._delete_secret(chat, message.message_id)
        command = await self._with_admin(command)
        await self.run(command, Origin(chat, command.user, message_id=message.message_id), kind=kind)
        return "ok"

    async def _on_command(self, update: Update, context: Context) -> None:
        message = update.effective_message
        text = message.text if message is not None else None
        if text:
            await self._guard("command", update, lambda: self._typed(update, text))

    async def _on_other_command(self, update: Update, context: Context) -> None:
        """A slash command outside the menu: answered in private chats and when addressed to this bot;
        in a group an unknown bare `/word` may be another bot's, so it is left alone."""
        message = update.effective_message
        chat = update.effective_chat
        if message is None or chat is None or not message.text:
            return
        text = message.text
        if addressed_elsewhere(text, self.username):
            return
        head = text.split(maxsplit=1)[0]
        if chat.type != "private" and "@" not in head:
            return
        await self._guard("command", update, lambda: self._typed(update, text))

    async def _on_text(self, update: Update, context: Context) -> None:
        """Plain text: `bid 120` or `pas` in the private chat, `!bid 120` anywhere."""
        message = update.effective_message
        chat = update.effective_chat
        if message is None or chat is None or not message.text:
            return
        text = message.text
        if chat.type != "private" and not text.lstrip().startswith("!"):
            return
        await self._guard("message", update, lambda: self._typed(update, text, "message"))

    async def _on_start(self, update: Update, context: Context) -> None:
        message = update.effective_message
        chat = update.effective_chat
        if message is None or chat is None:
            return
        if chat.type != "private":
            # In a group, /start means starting the game (the lobby's Start button, typed).
            text = "/start " + " ".join(context.args or [])
            await self._guard("command", update, lambda: self._typed(update, text))
            return
        payload = context.args[0] if context.args else None
        await self._guard("start", update, lambda: self._started(update, payload))

    async def _started(self, update: Update, payload: str | None) -> str:
        """Start pressed in the private chat, perhaps through a deep link."""
        tg_user = update.effective_user
        tg_chat = update.effective_chat
        message = update.effective_message
        if tg_user is None or tg_chat is None or message is None:
            return "ignored"
        self._known.discard(tg_user.id)
        await self._note_private(tg_user.id)
        private = chat_ref(tg_chat)
        user = user_ref(tg_user)
        try:
            intent = parse_start(self.link_key, payload, tg_user.id, now=self.clock.now())
        except BadLink as exc:
            # Forged, altered, someone else's, or too old: nothing about the group it names.
            log.info("deep link refused: %s", exc)
            lang = await self.runner.language_of(user, private.key)
            text = text_in(lang, BAD_LINK)
            self.outbox.put(Op(tg_user.id, Content("text", escape_html(text), None)))
            return "refused"
        if intent is None:
            await self.run(Command("help", (), private, user), Origin(private, user))
            return "ok"
        return await self._start_intent(intent, private, user)

    async def _start_intent(self, intent: StartIntent, private: ChatRef, user: UserRef) -> str:
        group = await self._group(intent.chat_id)
        args = (intent.arg,) if intent.arg else ()
        command = Command(intent.action, args, group, user)
        messages = await self.run(command, Origin(private, user))
        if any(m.kind == "error" for m in messages):
            return "refused"
        # The person's own language (their /lang choice, else Telegram's), not the group's.
        lang = await self.runner.language_of(user, group.key)
        template = (
            "You joined the table in «{group}». Your cards will come here."
            if intent.action == "join"
            else "You opened a table in «{group}». Your cards will come here."
        )
        text = text_in(lang, template).format(group=group.title or group.chat_id)
        self.outbox.put(Op(int(user.user_id), Content("text", escape_html(text), None)))
        return "ok"

    async def _group(self, chat_id: str) -> ChatRef:
        """The group a deep link names (its title from Telegram when it answers)."""
        title = ""
        if self._app is not None:
            try:
                chat = await self._app.bot.get_chat(int(chat_id))
                title = chat.title or ""
            except (TelegramError, ValueError) as exc:
                log.info("getChat(%s) failed: %s", chat_id, exc)
        return ChatRef(PLATFORM, chat_id, title, False)

    async def _on_button(self, update: Update, context: Context) -> None:
        query = update.callback_query
        if query is None:
            return

        async def send(text: str | None, alert: bool, url: str | None) -> None:
            # Best effort: the press is already handled when it is answered, and a query answered too
            # late ("query is too old", after a slow moment or a restart) only loses the little note.
            try:
                await query.answer(text, show_alert=alert, url=url)
            except TelegramError as exc:
                log.info("answerCallbackQuery failed: %s", exc)

        answer = Answer(send)
        await self._guard("button", update, lambda: self._pressed(update, answer), answer)

    async def _pressed(self, update: Update, answer: Answer) -> str:
        query = update.callback_query
        assert query is not None
        tg_user = query.from_user
        if query.message is not None:
            chat = chat_ref(query.message.chat)
            message_id: int | None = query.message.message_id
        else:
            chat = ChatRef(PLATFORM, str(tg_user.id), tg_user.full_name, True)
            message_id = None
        if chat.private:
            await self._note_private(tg_user.id)
        command = from_payload(query.data or "", chat, user_ref(tg_user))
        if command.name in SEATING and not chat.private and not await self._may_seat(tg_user.id):
            payload = self._link_payload(command.name, chat, tg_user.id, None)
            await answer(url=start_link(self.username, payload))
            return "gated"
        command = await self._with_admin(command)
        origin = Origin(chat, command.user, answer=answer, message_id=message_id)
        if command.name == "hand" and not chat.private:
            return await self._hand_in_group(command, origin, answer)
        await self.run(command, origin, kind="button")
        return "ok"

    async def _hand_in_group(self, command: Command, origin: Origin, answer: Answer) -> str:
        """My hand pressed in the group: the hand goes to the private chat (a group never shows it), and
        the press is answered with a toast saying so; when the bot cannot write there, the answer opens
        the private chat instead (Start, then My hand again)."""
        try:
            messages = await self.runner.handle(command, kind="button")
        except ShuttingDown:
            log.info("stopping: %s not handled", command.name)
            return "ok"
        user = command.user
        hands = [
            m
            for m in messages
            if m.kind == "hand" and isinstance(m.audience, Private) and m.audience.user.key == user.key
        ]
        if hands:
            lang = hands[0].language
            if await self.reach.known(user.user_id) is True:
                await answer(text_in(lang, HAND_SENT))
            else:
                await answer(text_in(lang, HAND_UNREACHABLE), url=start_link(self.username))
        await self.dispatcher.dispatch(messages, origin)
        return "ok"

    async def _on_member_left(self, update: Update, context: Context) -> None:
        message = update.effective_message
        chat = update.effective_chat
        if message is None or chat is None or message.left_chat_member is None:
            return
        gone = message.left_chat_member
        if gone.is_bot:
            return
        group = chat_ref(chat)
        await self._guard("member", update, lambda: self._left_group(group, gone.id, gone.full_name))

    async def _on_chat_member(self, update: Update, context: Context) -> None:
        change = update.chat_member
        if change is None or change.new_chat_member.status not in _GONE:
            return
        gone = change.new_chat_member.user
        group = chat_ref(change.chat)
        await self._guard("member", update, lambda: self._left_group(group, gone.id, gone.full_name))

    async def _left_group(self, group: ChatRef, user_id: int, name: str) -> str:
        """Someone left (or was removed from) a group: a computer plays their seat there until they come
        back (the service's `unreachable`)."""
        command = Command("unreachable", (), group, UserRef(PLATFORM, str(user_id), name))
        await self.run(command, Origin(command.chat, command.user, system=True), kind="member")
        return "ok"

    async def _on_title(self, update: Update, context: Context) -> None:
        """The group was renamed: private messages about its game name it by its new title."""
        message = update.effective_message
        chat = update.effective_chat
        if message is None or chat is None or chat.type == Chat.PRIVATE or not message.new_chat_title:
            return
        group = replace(chat_ref(chat), title=message.new_chat_title)
        tg_user = update.effective_user
        user = user_ref(tg_user) if tg_user is not None else UserRef(PLATFORM, "0", "Telegram")

        async def work() -> str:
            await self.run(Command("title", (), group, user), Origin(group, user, system=True), kind="member")
            return "ok"

        await self._guard("member", update, work)

    async def _on_migrate(self, update: Update, context: Context) -> None:
        """The group was upgraded to a supergroup. Telegram says so in both chats (`migrate_to_chat_id` in
        the old one, `migrate_from_chat_id` in the new one); whichever comes first moves the table."""
        message = update.effective_message
        if message is None:
            return
        if message.migrate_to_chat_id:
            old, new = message.chat.id, message.migrate_to_chat_id
        elif message.migrate_from_chat_id:
            old, new = message.migrate_from_chat_id, message.chat.id
        else:
            return
        title = message.chat.title or ""
        await self._guard("member", update, lambda: self._migrated(old, new, title, redraw=True))

    async def _send_migrated(self, old: int, new: int) -> None:
        """A send met the upgrade before its service message did (missed, or still queued): move now; the
        outbox then resends the refused message to the new chat, so no table is drawn here."""
        await self._migrated(old, new, "", redraw=False)

    async def _migrated(self, old: int, new: int, title: str, *, redraw: bool) -> str:
        """Move the table and the chat's settings to the new chat id (`Service.move_chat`), re-key the hand
        references, forget the old chat's, and (`redraw`) post the table in the new chat, so the group sees
        the game go on there at once (`adapters.telegram.migration`)."""
        old_chat, new_chat = ChatRef(PLATFORM, str(old)), ChatRef(PLATFORM, str(new), title)
        try:
            users = await self.runner.move_chat(old_chat, new_chat)
        except ShuttingDown:
            log.info("stopping: chat %s not moved to %s", old, new)
            return "ignored"
        if users is None:
            return "ok"
        await rekey_hands(self.store, old, new, users, ttl=self.refs_ttl)
        await forget_group_refs(self.store, old)
        if redraw:
            user = UserRef(PLATFORM, "0", "Telegram")
            await self.run(Command("table", (), new_chat, user), Origin(new_chat, user, system=True))
        return "ok"

    async def _on_my_chat_member(self, update: Update, context: Context) -> None:
        change = update.my_chat_member
        if change is None:
            return
        status = change.new_chat_member.status
        chat = change.chat

        async def work() -> str:
            if chat.type == "private":
                if status in _GONE:
                    await self._private_lost(chat.id)
                else:
                    await self._note_private(chat.id)
                return "ok"
            if status in _GONE:
                actor = change.from_user
                await self._group_lost(chat.id, actor.id, actor.full_name)
            else:
                self.outbox.forget_lost(chat.id)
            return "ok"

        await self._guard("member", update, work)

    async def _on_done(self, update: Update, context: Context) -> None:
        self.updates += 1
        self.last_update_id = max(self.last_update_id, update.update_id)

    async def _on_error(self, update: object, context: Context) -> None:
        self.errors += 1
        log.error("error while handling an update", exc_info=context.error)
        if self.metrics is not None:
            self.metrics.platform_error(METRICS_PLATFORM, "handler")

    # --- lost chats -------------------------------------------------------------------------------

    async def _private_lost(self, user_id: int) -> None:
        """The user blocked the bot: remember it, and a computer plays their seat at every table until they
        come back (the service's `unreachable`: the group is told why)."""
        self._known.discard(user_id)
        await self.reach.mark(user_id, False)
        user = UserRef(PLATFORM, str(user_id), str(user_id))
        tables = await self.store.tables_for_user(user.key)
        for table_id in sorted(tables):
            platform, _sep, chat_id = table_id.partition(":")
            if platform != PLATFORM or not chat_id:
                continue
            chat = ChatRef(PLATFORM, chat_id, "", not chat_id.startswith("-"))
            await self.run(Command("unreachable", (), chat, user), Origin(chat, user, system=True))

    async def _group_lost(self, chat_id: int, actor_id: int | None = None, actor_name: str = "") -> None:
        """The bot was removed from a group: its table ends (nobody could follow it any more)."""
        chat = ChatRef(PLATFORM, str(chat_id))
        user = UserRef(PLATFORM, str(actor_id or 0), actor_name or "Telegram", is_admin=True)
        self.outbox.mark_lost(chat_id)
        await self.run(Command("end", (), chat, user), Origin(chat, user, system=True))

    # --- connection -------------------------------------------------------------------------------

    def connection_lost(self, exc: TelegramError) -> None:
        """Long polling failed (PTB's `error_callback`): not ready until Telegram answers again."""
        log.warning("Telegram unreachable: %s", exc, extra={"event": "disconnected"})
        if self.health is not None:
            self.health.set_connected(HEALTH_COMPONENT, False, f"Telegram: {exc}")
        if self._probe is None or self._probe.done():
            loop = asyncio.get_running_loop()
            self._probe = loop.create_task(self._until_connected(), name="telegram-probe")

    async def _until_connected(self, pause: float = 2.0) -> None:
        while self._app is not None:
            await asyncio.sleep(pause)
            try:
                await self._app.bot.get_me()
            except TelegramError:
                continue
            if self.health is not None:
                self.health.set_connected(HEALTH_COMPONENT, True)
            log.info("Telegram reachable again", extra={"event": "connected"})
            return
