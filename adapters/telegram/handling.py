"""One Telegram update's handling, shared by every kind of update: the adapter's state, a command run
through the service and its answers routed, the guard around each update (counted, logged in context,
never escaping), and who may do what (group admins, who may take a seat, the deep links that seat them).

`adapters.telegram.typed`, `buttons` and `membership` handle the kinds of update over this;
`adapters.telegram.adapter.TelegramAdapter` joins them and wires them to PTB.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Final, Literal, Protocol

from telegram import ChatMember, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import TelegramError
from telegram.ext import Application, ContextTypes

from adapters.telegram.clock import Clock, SystemClock
from adapters.telegram.content import Content
from adapters.telegram.dispatch import Answer, Dispatcher, Origin, escape_html
from adapters.telegram.i18n import GROUP_TYPING, text_in
from adapters.telegram.inbound import ADMIN_COMMANDS
from adapters.telegram.outbox import Outbox
from adapters.telegram.queue import Op
from adapters.telegram.reach import Reach, link_key, start_link, start_payload
from adapters.telegram.webapp import WebAppButtons
from bot.markup import escape
from bot.model import ChatRef, Command, Message, UserRef
from bot.ops.health import Health
from bot.ops.logs import log_context
from bot.ops.metrics import Metrics
from bot.ops.shutdown import ShuttingDown
from bot.storage import StorageError, Store

__all__ = [
    "ADMIN_CACHE_SECONDS",
    "HEALTH_COMPONENT",
    "METRICS_PLATFORM",
    "SEATING",
    "Context",
    "Runner",
    "UpdateHandling",
]

log = logging.getLogger("thousand.telegram")

HEALTH_COMPONENT: Final = "telegram"
METRICS_PLATFORM: Final = "telegram"
ADMIN_CACHE_SECONDS: Final = 60.0
SEATING: Final = frozenset({"new", "join"})
"""Commands that seat their sender: only for people the bot can write to privately."""
_SEAT_NOTE: Final = "To take a seat, open our private chat and press Start: your cards will come there."


class Runner(Protocol):
    """Runs one command through the service (`bot.ops.runtime.Runtime` in a bot process: counted, timed,
    refused with `ShuttingDown` once the process stops)."""

    async def handle(self, command: Command, *, kind: str = "command") -> list[Message]: ...

    async def move_chat(self, old: ChatRef, new: ChatRef) -> tuple[str, ...] | None: ...

    async def language_of(self, user: UserRef, chat_key: str | None = None) -> str: ...


Context = ContextTypes.DEFAULT_TYPE


class UpdateHandling:
    """The state every kind of update works on, and what they share."""

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
