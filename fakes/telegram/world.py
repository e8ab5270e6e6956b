"""The state shared by the Bot API methods and the test-side helpers.

One place owns ids, chats, messages, files and the update queue, so an update a user action
produces and the result a method returns are rendered from the same objects.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .models import (
    CallbackQueryRecord,
    FakeChat,
    FakeMessage,
    FakeUser,
    JSONDict,
    StoredFile,
)

# What Telegram delivers when a bot never chose: everything but these three.
DEFAULT_ALLOWED_UPDATES = frozenset(
    {
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "business_connection",
        "business_message",
        "edited_business_message",
        "deleted_business_messages",
        "inline_query",
        "chosen_inline_result",
        "callback_query",
        "shipping_query",
        "pre_checkout_query",
        "purchased_paid_media",
        "poll",
        "poll_answer",
        "my_chat_member",
        "chat_join_request",
        "chat_boost",
        "removed_chat_boost",
    }
)


class Signal:
    """Wakes every waiter whenever the state changes; waiters re-check their own condition."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float | None) -> bool:
        event = self._event
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            return False
        return True


@dataclass
class WebhookConfig:
    url: str
    secret_token: str | None
    max_connections: int
    ip_address: str | None
    allowed_updates: list[str] | None


@dataclass
class WebhookAttempt:
    """One POST of an update to the webhook, for tests to inspect."""

    update_id: int
    url: str
    status: int | None
    error: str | None
    secret_token: str | None


class World:
    def __init__(
        self,
        bot: FakeUser,
        *,
        clock: Callable[[], float],
        wall_clock: Callable[[], float],
    ) -> None:
        self.bot = bot
        self.clock = clock
        self.wall_clock = wall_clock
        self.users: dict[int, FakeUser] = {}
        self.chats: dict[int, FakeChat] = {}
        self.paid_broadcasts = 0
        """Messages sent with `allow_paid_broadcast`: 0.1 Telegram Stars each off the bot's balance."""
        self.files: dict[str, StoredFile] = {}
        self.files_by_path: dict[str, StoredFile] = {}
        self.callback_queries: dict[str, CallbackQueryRecord] = {}
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}
        self.updates: list[JSONDict] = []
        self.next_update_id = 1
        self.allowed_updates: frozenset[str] = DEFAULT_ALLOWED_UPDATES
        self.webhook: WebhookConfig | None = None
        self.webhook_last_error: tuple[int, str] | None = None
        self.webhook_attempts: list[WebhookAttempt] = []
        self.changed = Signal()
        self._user_ids = itertools.count(7_000_000_001)
        self._group_ids = itertools.count(4_000_000_001)
        self._supergroup_ids = itertools.count(1_002_000_000_001)
        self._file_ids = itertools.count(1)
        self._query_ids = itertools.count(4_242_000_000_000_001)

    def date(self) -> int:
        return int(self.wall_clock())

    def new_user_id(self) -> int:
        return next(self._user_ids)

    def new_chat_id(self, supergroup: bool) -> int:
        return -next(self._supergroup_ids) if supergroup else -next(self._group_ids)

    def new_query_id(self) -> str:
        return str(next(self._query_ids))

    def chat_instance(self, chat: FakeChat) -> str:
        digest = hashlib.sha256(f"{self.bot.id}:{chat.id}".encode()).digest()
        return str(int.from_bytes(digest[:8], "big", signed=True))

    def private_chat(self, user: FakeUser) -> FakeChat:
        chat = self.chats.get(user.id)
        if chat is None:
            chat = FakeChat(id=user.id, type="private", user=user)
            self.chats[user.id] = chat
        return chat

    def add_message(self, chat: FakeChat, sender: FakeUser, **fields: Any) -> FakeMessage:
        message = FakeMessage(
            chat=chat, message_id=chat.next_message_id, sender=sender, date=self.date(), **fields
        )
        chat.next_message_id += 1
        chat.messages.append(message)
        self.changed.notify()
        return message

    def find_message(self, chat: FakeChat, message_id: int) -> FakeMessage | None:
        for message in chat.messages:
            if message.message_id == message_id:
                return message
        return None

    def store_file(self, data: bytes, **fields: Any) -> StoredFile:
        number = next(self._file_ids)
        digest = hashlib.sha256(data).hexdigest()
        kind = "photos" if fields.get("width") else "documents"
        suffix = ""
        name = fields.get("file_name")
        if isinstance(name, str) and "." in name:
            suffix = "." + name.rsplit(".", 1)[1]
        elif kind == "photos":
            suffix = ".jpg"
        stored = StoredFile(
            file_id=f"BQACAgIAAx{number:06d}{digest[:24]}",
            file_unique_id=f"AgAD{digest[:12]}",
            file_path=f"{kind}/file_{number}{suffix}",
            data=data,
            **fields,
        )
        self.files[stored.file_id] = stored
        self.files_by_path[stored.file_path] = stored
        return stored

    def enqueue(self, kind: str, payload: JSONDict) -> JSONDict | None:
        """Queue an update unless the bot opted out of its kind; returns the update."""
        if kind not in self.allowed_updates:
            return None
        update = {"update_id": self.next_update_id, kind: payload}
        self.next_update_id += 1
        self.updates.append(update)
        self.changed.notify()
        return update


_ADMIN_RIGHTS = {
    "can_be_edited": False,
    "is_anonymous": False,
    "can_manage_chat": True,
    "can_delete_messages": True,
    "can_manage_video_chats": True,
    "can_restrict_members": True,
    "can_promote_members": False,
    "can_change_info": True,
    "can_invite_users": True,
    "can_post_stories": False,
    "can_edit_stories": False,
    "can_delete_stories": False,
    "can_pin_messages": True,
}


def member_json(user: FakeUser, status: str) -> JSONDict:
    """A ChatMember object of the given status, with the fields the Bot API always sends."""
    data: JSONDict = {"user": user.to_api(), "status": status}
    if status == "creator":
        data["is_anonymous"] = False
    elif status == "administrator":
        data.update(_ADMIN_RIGHTS)
    elif status == "kicked":
        data["until_date"] = 0
    return data
