"""Whether the bot may write to a user privately, and the deep links that make it possible.

Telegram refuses a bot's first private message to someone who never pressed Start (403 "bot can't
initiate conversation") and every message to someone who blocked it. Hands are private, so nobody may
take a seat without a working private chat: the adapter remembers, in the store shared by all processes,
who started the bot (`/start`, any private message) and who blocked it (a 403, a `my_chat_member` update),
and sends everyone else through a deep link `t.me/<bot>?start=<payload>` whose payload says what to do
once they press Start (join the table in group X, open a table in group X).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from bot.storage import Store

__all__ = ["Reach", "StartIntent", "parse_start", "private_scope", "start_link", "start_payload"]

_OK: Final = "ok"
_BLOCKED: Final = "blocked"
_NAME: Final = "dm"
_PAYLOAD: Final = re.compile(r"([jn])(-?\d{1,20})(?:_([a-z0-9]{1,30}))?")

Action = Literal["join", "new"]
_CODES: Final[dict[Action, str]] = {"join": "j", "new": "n"}
_ACTIONS: Final[dict[str, Action]] = {"j": "join", "n": "new"}


def private_scope(user_id: str | int) -> str:
    """The store scope of a user's private chat with the bot (message references, reachability)."""
    return f"tg:{user_id}"


@dataclass(frozen=True, slots=True)
class StartIntent:
    """What a deep link asked for: `join` or `new` at the group `chat_id`, with an optional argument."""

    action: Action
    chat_id: str
    arg: str | None = None


def start_payload(action: Action, chat_id: str | int, arg: str | None = None) -> str:
    """The `start` parameter of a deep link (1-64 characters of A-Z a-z 0-9 _ -)."""
    payload = f"{_CODES[action]}{chat_id}"
    if arg and re.fullmatch(r"[a-z0-9]{1,30}", arg):
        payload += f"_{arg}"
    return payload[:64]


def parse_start(payload: str | None) -> StartIntent | None:
    """The intent of a `/start <payload>`; None for a plain Start or anything else."""
    if not payload:
        return None
    match = _PAYLOAD.fullmatch(payload.strip())
    if match is None:
        return None
    return StartIntent(_ACTIONS[match.group(1)], match.group(2), match.group(3))


def start_link(bot_username: str, payload: str | None = None) -> str:
    """`https://t.me/<bot>?start=<payload>`: opens the private chat; Start sends `/start <payload>`."""
    base = f"https://t.me/{bot_username}"
    return f"{base}?start={payload}" if payload else base


class Reach:
    """Who the bot may write to, kept with the user's private chat references (one read gives both)."""

    def __init__(self, store: Store, *, ttl_seconds: float = 365 * 24 * 3600) -> None:
        self.store = store
        self.ttl_seconds = ttl_seconds

    async def known(self, user_id: str | int) -> bool | None:
        """True: started and not blocked since; False: blocked (or never started, as a 403 said); None:
        the bot never heard of a private chat with them."""
        value = (await self.store.get_refs(private_scope(user_id))).get(_NAME)
        if value is None:
            return None
        return value == _OK

    async def mark(self, user_id: str | int, reachable: bool) -> None:
        await self.store.set_ref(
            private_scope(user_id), _NAME, _OK if reachable else _BLOCKED, ttl_seconds=self.ttl_seconds
        )
