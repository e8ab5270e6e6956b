"""Button presses (callback queries): a command from the button's payload, the press answered."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import TelegramError

from adapters.telegram.dispatch import Answer, Origin
from adapters.telegram.handling import SEATING, Context, UpdateHandling
from adapters.telegram.i18n import HAND_SENT, HAND_UNREACHABLE, text_in
from adapters.telegram.inbound import PLATFORM, chat_ref, user_ref
from adapters.telegram.reach import start_link
from bot.commands import from_payload
from bot.model import ChatRef, Command, Private
from bot.ops.shutdown import ShuttingDown

__all__ = ["ButtonUpdates"]

log = logging.getLogger("thousand.telegram")


class ButtonUpdates(UpdateHandling):
    """The handler of inline keyboard presses."""

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
