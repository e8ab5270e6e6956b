"""Direct messages: a player's hand (or a note) in their DM, one per key, edited in place, never an older
table version over a newer one; closed DMs (50007) switch the player back to ephemeral hands."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import discord
from discord.utils import MISSING

from bot.model import Message
from bot.ops.metrics import Metrics

from . import NAME
from . import i18n as L
from .budget import LatestOnly
from .content import Body, build_view, render
from .pings import TurnPings
from .refs import MessageRef, Refs
from .reply import Reply
from .routing import NO_MENTIONS

__all__ = ["DirectMessages"]


class DirectMessages:
    """Sends and edits the DMs of channel tables' players (one per `Outbox`)."""

    def __init__(
        self,
        client: discord.Client,
        refs: Refs,
        latest: LatestOnly,
        pings: TurnPings,
        hand_body: Callable[[Message, bool], Body],
        failed: Callable[[discord.HTTPException], None],
        metrics: Metrics | None = None,
    ) -> None:
        self.client = client
        self.refs = refs
        self.latest = latest
        self.pings = pings
        self.hand_body = hand_body
        """Draws a hand (`dm`: for a DM); looked up on the outbox at each call."""
        self.failed = failed
        self.metrics = metrics

    async def send(
        self,
        uid: int,
        m: Message,
        reply: Reply | None,
        *,
        turn: str | None = None,
        channel_id: int | None = None,
        body: Body | None = None,
    ) -> bool:
        """Send or edit the user's DM for `m` (drawn as `body` when given); False (and DMs switched off)
        when they refuse DMs.

        A DM of an older table version than the one in the DM is never sent, posted afresh or not: the
        reference is read after the lock of the user's key (two deliveries to one DM never cross), and the
        one written after the send says whether another process delivered a newer one meanwhile (then
        ours goes).

        `turn`: the turn `m` announces, so that the note about closed DMs counts as its ping."""
        if m.key is None:
            return await self._send(uid, m, reply, turn=turn, channel_id=channel_id, body=body)
        async with self.latest.lock(("dm", uid, m.key)):
            return await self._send(uid, m, reply, turn=turn, channel_id=channel_id, body=body)

    async def _send(
        self,
        uid: int,
        m: Message,
        reply: Reply | None,
        *,
        turn: str | None,
        channel_id: int | None,
        body: Body | None = None,
    ) -> bool:
        if body is None:
            body = self.hand_body(m, True) if m.kind == "hand" else render(m)
        try:
            channel = await self.client.create_dm(discord.Object(uid))
            found = await self.refs.dm(uid, m.key) if m.key is not None else None
            existing = found[1] if found is not None else None
            if existing is not None and existing.newer_than(m.version):
                return True  # an older hand than the one in the DM: nothing to do
            if existing is not None and not m.notify:
                message = channel.get_partial_message(existing.message_id)
                try:
                    await message.edit(
                        content=body.content,
                        embeds=body.embeds,
                        view=build_view(body.rows),
                        allowed_mentions=NO_MENTIONS,
                    )
                    if m.key is not None and m.version != existing.version:
                        ref = MessageRef(existing.message_id, m.version)
                        await self.refs.set_dm(uid, m.key, channel.id, ref)
                    return True
                except discord.NotFound:
                    existing = None
            sent = await channel.send(
                body.content,
                embeds=body.embeds or MISSING,
                files=body.discord_files() or MISSING,
                view=build_view(body.rows) or MISSING,
                allowed_mentions=NO_MENTIONS,
            )
        except discord.Forbidden as exc:
            if exc.code != 50007:
                self.failed(exc)
                return False
            await self._closed(uid, m, reply, turn, channel_id)
            return False
        if m.key is not None:
            replaced = await self.refs.set_dm(uid, m.key, channel.id, MessageRef(sent.id, m.version))
            gone = replaced if replaced is not None and replaced.message_id != sent.id else None
            if gone is not None and gone.newer_than(m.version):
                # Another process delivered a newer DM meanwhile: it stays, ours goes.
                await self.refs.set_dm(uid, m.key, channel.id, gone)
                gone = MessageRef(sent.id, m.version)
            if gone is not None:
                with contextlib.suppress(discord.HTTPException):
                    await channel.get_partial_message(gone.message_id).delete()
        return True

    async def _closed(
        self, uid: int, m: Message, reply: Reply | None, turn: str | None, channel_id: int | None
    ) -> None:
        """The user refuses DMs (50007): switch them back to ephemeral hands and tell them how to play."""
        if self.metrics is not None:
            self.metrics.platform_error(NAME, "dm_closed")
        await self.refs.set_wants_dm(uid, False)
        if reply is not None and reply.user_id == uid:
            text = L.labels(m.language)._(L.DM_CLOSED).format(mention=f"<@{uid}>")
            await reply.send_ephemeral(Body(content=text))
            return
        if channel_id is None and reply is not None and not reply.in_dm:
            channel_id = reply.interaction.channel_id
        if channel_id is not None:
            await self.pings.ping(channel_id, uid, None, L.DM_CLOSED, turn=turn, of=m)
