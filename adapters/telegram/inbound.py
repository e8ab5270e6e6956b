"""Telegram updates as the service's neutral commands.

Only the parts of an update the service needs survive: the chat (`tg:<chat id>`, its title, whether it is
the private chat), the user (id, display name, language, and whether they administer the chat when a
command needs to know), the command and its arguments, and for a button its payload, which carries the
table and the version it was drawn for.
"""

from __future__ import annotations

import re
from typing import Final

from telegram import Chat, User

from bot.commands import COMMANDS, parse_text
from bot.model import ChatRef, Command, UserRef

__all__ = [
    "ADMIN_COMMANDS",
    "MENU_WORDS",
    "PLATFORM",
    "addressed_elsewhere",
    "chat_ref",
    "command_of",
    "user_ref",
]

PLATFORM: Final = "tg"

_TELEGRAM_COMMAND: Final = re.compile(r"[a-z0-9_]{1,32}")
_ALIASES: Final = (
    "addai", "ai", "bot", "removeai", "rmai", "pas", "p", "language", "scores", "rule", "settings",
    "record", "stat", "leaders", "go", "blind_game",
)  # fmt: skip

MENU_WORDS: Final = tuple(
    sorted({w for w in (*COMMANDS, *_ALIASES) if _TELEGRAM_COMMAND.fullmatch(w) and w != "start"})
)
"""Words a `CommandHandler` answers (Telegram command syntax). `/start` has its own handler: it is what
Telegram sends when someone presses Start in the private chat (with a deep link's payload)."""

ADMIN_COMMANDS: Final = frozenset({"set", "lang", "kick", "end", "start", "add_ai", "remove_ai"})
"""Commands for which the service must know whether the user administers the group (`getChatMember`)."""


def chat_ref(chat: Chat) -> ChatRef:
    private = chat.type == Chat.PRIVATE
    title = chat.title or chat.full_name or chat.username or ""
    return ChatRef(PLATFORM, str(chat.id), title, private)


def user_ref(user: User, *, is_admin: bool | None = None) -> UserRef:
    name = user.full_name.strip() or (f"@{user.username}" if user.username else str(user.id))
    return UserRef(PLATFORM, str(user.id), name, user.language_code, is_admin)


def command_of(text: str, chat: ChatRef, user: UserRef) -> Command | None:
    """The command a message holds (`/bid 120`, `/play@bot QS`, `pas` in a private chat), else None."""
    return parse_text(text, chat, user)


def addressed_elsewhere(text: str, bot_username: str) -> bool:
    """`/cmd@otherbot`: a command for another bot in the same group."""
    head = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    if "@" not in head:
        return False
    return head.split("@", 1)[1].lower() != bot_username.lower()
