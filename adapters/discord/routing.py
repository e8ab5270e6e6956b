"""Where a neutral message goes on Discord, and the small facts delivery reads: a channel's table id, a user's
id, a hand message, the kind of a refusal. `coalesce` makes one message per (audience, key) of a call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import discord

from bot.commands import PayloadError, decode_payload
from bot.model import Button, Message, UserRef

from . import PLATFORM

__all__ = [
    "NO_ACCESS_CODES",
    "NO_MENTIONS",
    "NoAccess",
    "channel_of_table",
    "coalesce",
    "error_kind",
    "is_hand_message",
    "table_id",
    "user_id",
    "without_hand_button",
]

NO_MENTIONS = discord.AllowedMentions.none()


def coalesce(messages: Sequence[Message]) -> list[Message]:
    """One message per (audience, key): the last one, notifying if any of them did. In the place of the
    first, unless the last is posted anew (`notify`) and other keyed messages for the same reader come
    between: then in its own place, after them (the next deal's hand below the deal's result)."""
    out: list[Message | None] = []
    index: dict[tuple[object, str], int] = {}
    for m in messages:
        if m.key is None:
            out.append(m)
            continue
        k = (m.audience, m.key)
        i = index.get(k)
        if i is None:
            index[k] = len(out)
            out.append(m)
            continue
        earlier = out[i]
        assert earlier is not None
        merged = replace(m, notify=m.notify or earlier.notify)
        between = out[i + 1 :]
        if m.notify and any(
            x is not None and x.key is not None and x.audience == m.audience for x in between
        ):
            out[i] = None
            index[k] = len(out)
            out.append(merged)
        else:
            out[i] = merged
    return [m for m in out if m is not None]


def table_id(channel_id: int) -> str:
    """The table id of a channel (`ChatRef.key`)."""
    return f"{PLATFORM}:{channel_id}"


def channel_of_table(table_id: str) -> int | None:
    platform, _, chat = table_id.partition(":")
    if platform != PLATFORM:
        return None
    try:
        return int(chat)
    except ValueError:
        return None


def user_id(user: UserRef) -> int | None:
    if user.platform != PLATFORM:
        return None
    try:
        return int(user.user_id)
    except ValueError:
        return None


class NoAccess(Exception):
    """The bot may not post or edit in the channel (missing access or permissions)."""


NO_ACCESS_CODES = frozenset({50001, 50013})


def without_hand_button(rows: tuple[tuple[Button, ...], ...]) -> tuple[tuple[Button, ...], ...]:
    kept = (tuple(b for b in row if payload_name(b.payload) != "hand") for row in rows)
    return tuple(row for row in kept if row)


def payload_name(payload: str) -> str | None:
    try:
        return decode_payload(payload)[0]
    except PayloadError:
        return None


def is_hand_message(message: discord.Message) -> bool:
    """A hand: an ephemeral message, or one with the hand-delivery switch (a hand in a DM)."""
    if message.flags.ephemeral:
        return True
    for row in message.components:
        for child in getattr(row, "children", ()):
            custom_id = getattr(child, "custom_id", None)
            if isinstance(custom_id, str) and custom_id.startswith("m|"):
                return True
    return False


def error_kind(exc: discord.HTTPException) -> str:
    if isinstance(exc, discord.Forbidden):
        return "forbidden"
    if isinstance(exc, discord.NotFound):
        return "not_found"
    if isinstance(exc, discord.DiscordServerError):
        return "server"
    if exc.status == 429:
        return "rate_limited"
    return "bad_request"
