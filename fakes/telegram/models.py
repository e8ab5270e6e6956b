"""What the fake Telegram holds: users, chats, messages, files, callback queries, API calls.

Each object can render itself as the Bot API's JSON (`to_api`), so updates and method results are
built from one source of truth and stay consistent with what a test later reads back.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .entities import Entity
from .keyboard import InlineButton, inline_buttons

JSONDict = dict[str, Any]

ACTIVE_STATUSES = frozenset({"creator", "administrator", "member"})


@dataclass(eq=False)
class FakeUser:
    """A Telegram account; the bot itself is one too (`is_bot=True`)."""

    id: int
    first_name: str
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = "en"
    is_bot: bool = False
    started_bot: bool = False
    blocked_bot: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}" if self.last_name else self.first_name

    def to_api(self) -> JSONDict:
        data: JSONDict = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code and not self.is_bot:
            data["language_code"] = self.language_code
        return data


@dataclass(eq=False)
class FakeChat:
    """A private chat (id = user id) or a group/supergroup with members and admins."""

    id: int
    type: str
    title: str | None = None
    username: str | None = None
    user: FakeUser | None = None
    members: dict[int, str] = field(default_factory=dict)
    users: dict[int, FakeUser] = field(default_factory=dict)
    bot_status: str = "member"
    bot_can_delete: bool = True
    """As an administrator, whether the bot holds can_delete_messages (others' messages in a group)."""
    messages: list[FakeMessage] = field(default_factory=list)
    next_message_id: int = 1
    migrated_to: int | None = None
    """A basic group upgraded to a supergroup: the supergroup's id (the old chat is deactivated)."""

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    def status_of(self, user: FakeUser) -> str:
        if self.user is not None:
            return "member" if user is self.user else "left"
        return self.members.get(user.id, "left")

    def is_member(self, user: FakeUser) -> bool:
        return self.status_of(user) in ACTIVE_STATUSES

    def set_member(self, user: FakeUser, status: str) -> None:
        self.users[user.id] = user
        self.members[user.id] = status

    def to_api(self) -> JSONDict:
        data: JSONDict = {"id": self.id, "type": self.type}
        if self.user is not None:
            data.update({k: v for k, v in self.user.to_api().items() if k in ("first_name", "last_name")})
            if self.user.username:
                data["username"] = self.user.username
            return data
        data["title"] = self.title
        if self.username:
            data["username"] = self.username
        return data


@dataclass
class UploadedFile:
    """A multipart part as the client uploaded it."""

    filename: str
    data: bytes
    content_type: str = "application/octet-stream"


@dataclass(eq=False)
class StoredFile:
    """A file on Telegram's side, reachable by file_id and downloadable by file_path."""

    file_id: str
    file_unique_id: str
    file_path: str
    data: bytes
    file_name: str | None = None
    mime_type: str | None = None
    width: int | None = None
    height: int | None = None

    @property
    def size(self) -> int:
        return len(self.data)

    def to_document(self) -> JSONDict:
        data: JSONDict = {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": self.size,
        }
        if self.file_name:
            data["file_name"] = self.file_name
        if self.mime_type:
            data["mime_type"] = self.mime_type
        return data

    def to_file(self) -> JSONDict:
        return {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": self.size,
            "file_path": self.file_path,
        }


@dataclass(frozen=True)
class MessageVersion:
    """A former state of an edited message."""

    text: str | None
    entities: tuple[Entity, ...]
    caption: str | None
    reply_markup: JSONDict | None
    date: int


@dataclass(eq=False)
class FakeMessage:
    """A message in a chat, with its edit history and deletion mark."""

    chat: FakeChat
    message_id: int
    sender: FakeUser
    date: int
    text: str | None = None
    entities: list[Entity] = field(default_factory=list)
    caption: str | None = None
    caption_entities: list[Entity] = field(default_factory=list)
    reply_markup: JSONDict | None = None
    document: StoredFile | None = None
    photo: StoredFile | None = None
    photo_sizes: list[JSONDict] = field(default_factory=list)
    reply_to: FakeMessage | None = None
    service: JSONDict = field(default_factory=dict)
    edit_date: int | None = None
    history: list[MessageVersion] = field(default_factory=list)
    deleted: bool = False
    silent: bool = False
    """Sent with disable_notification: the recipient is not notified (a test's view; not in the API)."""

    @property
    def from_bot(self) -> bool:
        return self.sender.is_bot

    @property
    def buttons(self) -> list[list[InlineButton]]:
        return inline_buttons(self.reply_markup)

    @property
    def button_texts(self) -> list[list[str]]:
        return [[b.text for b in row] for row in self.buttons]

    @property
    def callback_data(self) -> list[str]:
        return [b.callback_data for row in self.buttons for b in row if b.callback_data is not None]

    @property
    def content(self) -> str:
        """Text or caption, whichever the message has."""
        return self.text if self.text is not None else (self.caption or "")

    def snapshot(self) -> MessageVersion:
        return MessageVersion(
            self.text,
            tuple(self.entities),
            self.caption,
            self.reply_markup,
            self.edit_date or self.date,
        )

    def to_api(self, *, with_reply: bool = True) -> JSONDict:
        data: JSONDict = {
            "message_id": self.message_id,
            "from": self.sender.to_api(),
            "chat": self.chat.to_api(),
            "date": self.date,
        }
        if self.edit_date is not None:
            data["edit_date"] = self.edit_date
        if with_reply and self.reply_to is not None:
            data["reply_to_message"] = self.reply_to.to_api(with_reply=False)
        if self.text is not None:
            data["text"] = self.text
            if self.entities:
                data["entities"] = [dict(e) for e in self.entities]
        if self.document is not None:
            data["document"] = self.document.to_document()
        if self.photo_sizes:
            data["photo"] = [dict(p) for p in self.photo_sizes]
        if self.caption is not None:
            data["caption"] = self.caption
            if self.caption_entities:
                data["caption_entities"] = [dict(e) for e in self.caption_entities]
        if self.reply_markup is not None and "inline_keyboard" in self.reply_markup:
            data["reply_markup"] = self.reply_markup
        data.update(self.service)
        return data


@dataclass(eq=False)
class CallbackQueryRecord:
    """A button press and, once the bot answered it, the answer the user saw."""

    id: str
    user: FakeUser
    chat: FakeChat
    message: FakeMessage
    data: str
    created_at: float
    answered: bool = False
    text: str | None = None
    show_alert: bool = False
    url: str | None = None
    cache_time: int | None = None


@dataclass
class ApiCall:
    """One request the bot made, with the status it got."""

    method: str
    params: dict[str, object]
    files: dict[str, UploadedFile]
    status: int = 200
    description: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200


@dataclass
class FakeStats:
    """Counters over all requests: by method, by HTTP status, and the causes of 429s."""

    calls: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    flood_rejections: int = 0
    injected_faults: int = 0

    @property
    def too_many_requests(self) -> int:
        """Every 429 returned, from flood control or injected."""
        return self.statuses[429]
