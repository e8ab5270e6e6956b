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

Its parts, one kind of update each, over `adapters.telegram.handling.UpdateHandling` (the state, running
a command, the guard, who may do what): `typed` (commands, text, Start and deep links), `buttons`,
`membership` (members, titles, migration, lost chats). Here: the wiring to PTB, start and stop, the
connection's health.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Final

from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats, Update
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from adapters.telegram.buttons import ButtonUpdates
from adapters.telegram.dispatch import Dispatcher
from adapters.telegram.handling import HEALTH_COMPONENT, METRICS_PLATFORM, Context, Runner
from adapters.telegram.i18n import COMMAND_MENU, text_in
from adapters.telegram.inbound import MENU_WORDS
from adapters.telegram.membership import MembershipUpdates
from adapters.telegram.outbox import Outbox
from adapters.telegram.recovery import LOST_HAND_GRACE, resend_lost_hands
from adapters.telegram.typed import TypedUpdates
from bot.i18n import LANGUAGES

__all__ = ["ALLOWED_UPDATES", "HEALTH_COMPONENT", "Runner", "TelegramAdapter"]

log = logging.getLogger("thousand.telegram")

ALLOWED_UPDATES: Final = ("message", "callback_query", "my_chat_member", "chat_member")


class TelegramAdapter(TypedUpdates, ButtonUpdates, MembershipUpdates):
    # --- wiring -----------------------------------------------------------------------------------

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

    # --- updates every handler shares ---------------------------------------------------------------

    async def _on_done(self, update: Update, context: Context) -> None:
        self.updates += 1
        self.last_update_id = max(self.last_update_id, update.update_id)

    async def _on_error(self, update: object, context: Context) -> None:
        self.errors += 1
        log.error("error while handling an update", exc_info=context.error)
        if self.metrics is not None:
            self.metrics.platform_error(METRICS_PLATFORM, "handler")

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
