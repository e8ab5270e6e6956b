"""Turn pings: when a player's turn comes and their hand cannot notify them, they are mentioned once in the
table's channel, with a bare mention and the "My hand" button (the ping holds no text of the service). One
ping at most stands in the channel, whichever processes ping it: `@ping` holds it, `@turn` the latest turn
announced, and a ping drawn for an older turn is not posted after its wait."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable

import discord

from bot.model import Message

from . import i18n as L
from .budget import ChannelBudget, LatestOnly
from .content import Body
from .layout import Key, hand_id
from .refs import PingRef, Refs
from .routing import table_id

__all__ = ["CLAIMED", "LANG", "PING", "TURN", "TurnPings", "turn_of", "turn_version"]

PING = "@ping"
TURN = "@turn"
"""The latest turn announced in the channel (`<table version>:<user id>`): a ping drawn for an older one is
not posted after its wait."""
CLAIMED = "-"
"""`@ping` after its ping was taken out to be deleted (and before the next one is in)."""
LANG = "@lang"
"""The channel's language as its last table message was posted in: turn pings are channel messages, so
they are written in it (not in the pinged player's language) also when a call has no group message."""


def turn_of(message: Message) -> str | None:
    """An opaque identity of the turn a hand announces: a digest of its buttons' payloads (which carry the
    table version), so that one turn is pinged once. None for a hand without buttons (not their turn)."""
    payloads = [button.payload for row in message.buttons for button in row]
    if not payloads:
        return None
    return hashlib.sha1("\n".join(payloads).encode()).hexdigest()[:16]


def turn_version(value: str | None, serial: str | None) -> int:
    """The table version of an `@turn` reference (`<version>:<who>:<serial>`); -1 when there is none, or
    when it is another game's (a chat's next game counts its versions from 1 again)."""
    parts = (value or "").split(":")
    if not parts[0].isdigit():
        return -1
    if serial and len(parts) > 2 and parts[2] and parts[2] != serial:
        return -1
    return int(parts[0])


Post = Callable[[int, Body, discord.AllowedMentions], Awaitable[int | None]]
"""Posts a body in a channel with these mentions; the message id (None when refused)."""
Delete = Callable[[int, int], Awaitable[None]]
"""Deletes one of the bot's channel messages (channel id, message id)."""


class TurnPings:
    """The turn pings of every channel this process delivers to (one per `Outbox`)."""

    def __init__(
        self,
        refs: Refs,
        budget: Callable[[], ChannelBudget],
        latest: LatestOnly,
        post: Post,
        delete: Delete,
    ) -> None:
        self.refs = refs
        self.budget = budget
        """The outbox's channel budget, read at each ping (the hand-over replaces it at install)."""
        self.latest = latest
        self.post = post
        self.delete = delete

    async def ping(
        self,
        channel_id: int,
        uid: int,
        lang: str | None,
        text: str,
        *,
        turn: str | None,
        of: Message,
    ) -> None:
        """Mention the user in the channel once per turn, with the My hand button; the old ping goes first,
        so that the channel holds one ping at most.

        `text` is one of the adapter's own msgids with a `{mention}` field, never service text. A channel
        message, so in the channel's language: `lang` (the call's group messages'), else the one its table
        message was posted in, else English.

        The ping waits for the channel's budget; after the wait the channel's references are read again,
        and a ping drawn for a turn older than the one announced meanwhile (`@turn`, by any process) is
        dropped. The old ping is taken out of `@ping` by an atomic swap, and only the one who took it out
        deletes it: each ping is deleted exactly once, whichever processes ping the channel."""
        version, serial = of.version, of.serial
        if not await self.announce(channel_id, of, str(uid)):
            return
        slot = (channel_id, PING)
        ticket = self.latest.ticket(slot)
        try:
            async with self.latest.lock(slot):
                if not self.latest.is_latest(slot, ticket):
                    return  # a later ping of this channel is queued behind us
                if self.done(await self.refs.channel(channel_id), uid, turn, version, serial):
                    return
                # The old ping goes first, before the wait: it names someone who no longer has to act,
                # and the new one is posted the moment the budget allows (a deletion between the two
                # would delay the post past its slot).
                if not await self.take(channel_id, of):
                    return
                while True:
                    if not await self.budget().acquire(
                        channel_id, lambda: self.latest.is_latest(slot, ticket)
                    ):
                        return
                    refs = await self.refs.channel(channel_id)
                    if self.done(refs, uid, turn, version, serial):
                        return
                    if PingRef.parse(refs.get(PING)) is None:
                        break
                    # Another process pinged while we waited: its ping goes first, and the post waits for
                    # a slot again (a deletion between a slot and its post would send the post late).
                    if not await self.take(channel_id, of):
                        return
                lang = lang or refs.get(LANG) or "en"
                lab = L.labels(lang)
                body = Body(
                    content=lab._(text).format(mention=f"<@{uid}>"),
                    rows=[[Key(lab._(L.MY_HAND), hand_id(table_id(channel_id)), "primary")]],
                )
                mentions = discord.AllowedMentions(users=[discord.Object(uid)])
                message_id = await self.post(channel_id, body, mentions)
                if message_id is not None:
                    ping = PingRef(message_id, uid, turn or "-", version, serial or "")
                    await self.put(channel_id, ping)
        finally:
            self.latest.done(slot, ticket)

    async def announce(self, channel_id: int, of: Message, who: str) -> bool:
        """Record in `@turn` (before any wait) that the turn of table version `version` is being announced;
        False when a later turn was announced already (by this process or another)."""
        version = of.version
        if version is None:
            return True
        announced = await self.refs.set_channel(channel_id, TURN, f"{version}:{who}:{of.serial or ''}")
        if turn_version(announced, of.serial) > version:
            await self.refs.set_channel(channel_id, TURN, announced or "")
            return False
        return True

    @staticmethod
    def done(
        refs: dict[str, str], uid: int, turn: str | None, version: int | None, serial: str | None
    ) -> bool:
        """This turn was pinged already, or a later turn was announced (the ping would name someone who no
        longer has to act)."""
        if version is not None and turn_version(refs.get(TURN), serial) > version:
            return True
        current = PingRef.parse(refs.get(PING))
        if current is None:
            return False
        if current.newer_than(version, serial):
            return True
        return turn is not None and current.user_id == uid and current.turn == turn

    async def take(self, channel_id: int, of: Message) -> bool:
        """Take the channel's ping out of `@ping` and delete it (before the next is posted: one ping at most
        in the channel). False, with the ping left in place, when it is newer than `of`."""
        taken = await self.refs.set_channel(channel_id, PING, CLAIMED)
        old = PingRef.parse(taken)
        if old is not None and old.newer_than(of.version, of.serial):
            await self.put(channel_id, old)
            return False
        if old is not None:
            await self.delete(channel_id, old.message_id)
        return True

    async def put(self, channel_id: int, ping: PingRef) -> None:
        """Swap `ping` into `@ping`; the ping swapped out (another process's, posted meanwhile) is deleted
        by us, or, when it is newer than ours, put back while ours is deleted."""
        keep = ping
        taken = PingRef.parse(await self.refs.set_channel(channel_id, PING, ping.dump()))
        while taken is not None and taken.newer_than(keep.version, keep.serial):
            keep = taken
            taken = PingRef.parse(await self.refs.set_channel(channel_id, PING, keep.dump()))
        if taken is not None and taken.message_id != keep.message_id:
            await self.delete(channel_id, taken.message_id)

    async def elsewhere(self, channel_id: int, of: Message) -> None:
        """A turn was announced without a channel ping (by DM): the channel's older ping names someone who
        no longer has to act, so it goes now (the next ping would have deleted it anyway)."""
        if not await self.announce(channel_id, of, "-"):
            return
        async with self.latest.lock((channel_id, PING)):
            current = PingRef.parse((await self.refs.channel(channel_id)).get(PING))
            if current is not None and not current.newer_than(of.version, of.serial):
                await self.take(channel_id, of)

    async def drop(self, channel_id: int, final: Message) -> None:
        """The game is over: its last ping goes, and a ping still waiting for the budget (in any process)
        is not posted after it (`@turn` holds the final message's version)."""
        await self.announce(channel_id, final, "end")
        async with self.latest.lock((channel_id, PING)):
            old = PingRef.parse(await self.refs.set_channel(channel_id, PING, CLAIMED))
            if old is not None:
                await self.delete(channel_id, old.message_id)
