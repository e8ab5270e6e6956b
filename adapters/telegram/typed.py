"""Typed updates: menu commands, other slash commands, plain text (`!bid 120`), and Start in the private
chat, perhaps through a deep link that seats its sender (security: docs/TELEGRAM.md "Deep links")."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import TelegramError

from adapters.telegram.content import Content
from adapters.telegram.dispatch import Origin, escape_html
from adapters.telegram.handling import SEATING, Context, UpdateHandling
from adapters.telegram.i18n import BAD_LINK, text_in
from adapters.telegram.inbound import PLATFORM, addressed_elsewhere, chat_ref, command_of, user_ref
from adapters.telegram.queue import Op
from adapters.telegram.reach import BadLink, StartIntent, parse_start
from bot.commands import SECRET_MOVES
from bot.model import ChatRef, Command, UserRef
from core.rules import PRESETS

__all__ = ["TypedUpdates"]

log = logging.getLogger("thousand.telegram")


class TypedUpdates(UpdateHandling):
    """The handlers of what people type."""

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
