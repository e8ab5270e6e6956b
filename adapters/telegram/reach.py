"""Whether the bot may write to a user privately, and the deep links that make it possible.

Telegram refuses a bot's first private message to someone who never pressed Start (403 "bot can't
initiate conversation") and every message to someone who blocked it. Hands are private, so nobody may
take a seat without a working private chat: the adapter remembers, in the store shared by all processes,
who started the bot (`/start`, any private message) and who blocked it (a 403, a `my_chat_member` update),
and sends everyone else through a deep link `t.me/<bot>?start=<payload>` whose payload says what to do
once they press Start (join the table in group X, open a table in group X).

Anyone can type `/start j-100123` into the private chat: a payload is a request from a stranger until
proven otherwise. So every payload is HMAC-signed with the deployment's link key (`link_key`: LINK_SECRET,
else derived from the bot token), and the signature covers the action, the group, the user the link was
made for (the one who pressed Join or New in the group: a callback answer's URL is per user) and an
expiry. A link that was forged, altered, made for someone else or for another group, or is too old, is
refused (`BadLink`) without a word about the group. See docs/TELEGRAM.md, "Deep links".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Final, Literal

from bot.storage import Store

__all__ = [
    "LINK_SECONDS",
    "BadLink",
    "Reach",
    "StartIntent",
    "link_key",
    "parse_start",
    "private_scope",
    "start_link",
    "start_payload",
]

_OK: Final = "ok"
_BLOCKED: Final = "blocked"
_NAME: Final = "dm"
_MAC_CHARS: Final = 16
"""The signature: 12 bytes of HMAC-SHA256 (96 bits), 16 characters of URL-safe base64."""
_HEAD: Final = re.compile(r"([jn])(-?[0-9]{1,20})_([0-9a-z]{1,8})(?:_([a-z0-9]{1,12}))?")
_ARG: Final = re.compile(r"[a-z0-9]{1,12}")
_CHARS: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")

LINK_SECONDS: Final = 15 * 60
"""How long a deep link works after the press that made it (the lobby's idle time)."""

Action = Literal["join", "new"]
_CODES: Final[dict[Action, str]] = {"join": "j", "new": "n"}
_ACTIONS: Final[dict[str, Action]] = {"j": "join", "n": "new"}


def private_scope(user_id: str | int) -> str:
    """The store scope of a user's private chat with the bot (message references, reachability)."""
    return f"tg:{user_id}"


class BadLink(ValueError):
    """A deep-link payload that is not one this deployment signed for this user, or is out of date."""


@dataclass(frozen=True, slots=True)
class StartIntent:
    """What a deep link asked for: `join` or `new` at the group `chat_id`, with an optional argument."""

    action: Action
    chat_id: str
    arg: str | None = None


def link_key(secret: str | None, bot_token: str) -> bytes:
    """The key deep links are signed with: LINK_SECRET when set, else derived from the bot token (every
    process of one bot derives the same key; a new token makes old links invalid, as a new secret does)."""
    if secret:
        return hashlib.sha256(b"thousand deep links\0" + secret.encode()).digest()
    return hmac.new(b"thousand deep links", bot_token.encode(), hashlib.sha256).digest()


def _to36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = digits[d] + out
        if n == 0:
            return out


def _mac(key: bytes, code: str, chat_id: str, user_id: str, expires: str, arg: str) -> str:
    message = "\0".join((code, chat_id, user_id, expires, arg)).encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()[:12]
    return base64.urlsafe_b64encode(digest).decode()


def start_payload(
    key: bytes,
    action: Action,
    chat_id: str | int,
    user_id: str | int,
    *,
    now: float,
    arg: str | None = None,
    seconds: float = LINK_SECONDS,
) -> str:
    """The `start` parameter of a deep link for `user_id` to `action` at the group `chat_id` until
    `now + seconds` (at most 64 characters of A-Z a-z 0-9 _ -, as Telegram allows)."""
    code = _CODES[action]
    expires = _to36(int(now + seconds))
    extra = arg if arg and _ARG.fullmatch(arg) else ""
    mac = _mac(key, code, str(chat_id), str(user_id), expires, extra)
    payload = f"{code}{chat_id}_{expires}{'_' + extra if extra else ''}_{mac}"
    if not _CHARS.fullmatch(payload):
        raise ValueError("a deep link does not fit Telegram's 64 characters")
    return payload


def parse_start(key: bytes, payload: str | None, user_id: str | int, *, now: float) -> StartIntent | None:
    """The intent of a `/start <payload>` sent by `user_id`; None for a plain Start. Raises `BadLink` for
    anything else: a payload of no link, a forged or altered one, one made for another user, an old one."""
    if not payload or not payload.strip():
        return None
    text = payload.strip()
    if len(text) < _MAC_CHARS + 2 or text[-_MAC_CHARS - 1] != "_":
        raise BadLink("not a signed link")
    head, mac = text[: -_MAC_CHARS - 1], text[-_MAC_CHARS:]
    match = _HEAD.fullmatch(head)
    if match is None:
        raise BadLink("malformed link")
    code, chat_id, expires, arg = match.group(1), match.group(2), match.group(3), match.group(4)
    expected = _mac(key, code, chat_id, str(user_id), expires, arg or "")
    if not hmac.compare_digest(expected, mac):
        raise BadLink("signature does not match (forged, altered, or made for someone else)")
    if int(expires, 36) < now:
        raise BadLink("expired")
    return StartIntent(_ACTIONS[code], chat_id, arg)


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
