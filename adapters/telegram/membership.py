"""Membership updates: people leaving a group, the group renamed or upgraded to a supergroup, the bot
blocked or removed; and what a lost chat means (a computer plays an unreachable user's seat, a group
that removed the bot has its table ended)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Final

from telegram import Chat, ChatMember, Update

from adapters.telegram.dispatch import Origin
from adapters.telegram.handling import Context, UpdateHandling
from adapters.telegram.inbound import PLATFORM, chat_ref, user_ref
from adapters.telegram.migration import forget_group_refs, rekey_hands
from bot.model import ChatRef, Command, UserRef
from bot.ops.shutdown import ShuttingDown

__all__ = ["MembershipUpdates"]

log = logging.getLogger("thousand.telegram")

_GONE: Final = frozenset({ChatMember.LEFT, ChatMember.BANNED})


class MembershipUpdates(UpdateHandling):
    """The handlers of chat membership and chat changes, and of lost chats."""

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
