"""Public tables and the queue on Discord: everything by direct message.

A public table (`pub:…`) has no channel: each seated person reads its "group" messages privately
(`bot.public.fanout`), and the queue's status message (key `queue`) is private too. So every `Private`
message of a public table (`Message.table` names it, relayed ones too) and the status message go by DM,
whatever the person chose for their hands at channel tables (`/thousand hand dm`): one DM per key,
edited in place, a `notify` one posted anew (the old one deleted), never an older version over a newer
one (`dms.DirectMessages` keeps each key's version). The table is one message per deal (its key names
the deal), the hand one message, as in a channel. A public hand has no "Hand here" switch: there is no
channel.

A press in the DM whose answer is the pressed message's next state (the status after Keep waiting, the
hand after a move) is answered by updating that message: one call, and the interaction's answer. Not a
new message that follows another new one (the next deal's hand after the deal's result): drawn into the
pressed message it would stand above the result; it is posted below it, in the order produced. The
presser's other messages go by DM like everyone else's; refusals (`Sender`) stay ephemeral answers.

References of messages posted once per deal or game (a deal's table, result, score sheet, phrase) are
kept for the latest of each kind only (`@dm:<kind>`), so a player's DM references stay few; an edit of
a forgotten key drawn before the latest one of its kind is dropped, never posted again.

Closed DMs (50007): nothing of a public table can be shown. `/thousand play` then refuses to queue
(`Interactions.direct`); a person who closes them mid-game misses their turns and a computer takes the
seat after two, as for anyone away, until `/thousand back`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from bot.model import Message, Private
from bot.public.fanout import is_public
from bot.render_queue import QUEUE_KEY

from . import PLATFORM
from . import i18n as L
from .budget import LatestOnly
from .content import Body, render
from .layout import Key
from .refs import MessageRef, Refs
from .reply import Reply

__all__ = ["DirectRoute", "by_dm"]

log = logging.getLogger("thousand.discord.dm")

ONCE_PER_KIND: Final = frozenset({"table", "result", "final", "phrase"})
"""Kinds whose earlier keys are forgotten when a newer message of the kind is posted."""

SendDM = Callable[[int, Message, Body], Awaitable[bool]]


def by_dm(m: Message) -> bool:
    """A message that goes by DM only: the queue's status, and every private message of a public table."""
    if not isinstance(m.audience, Private) or m.audience.user.platform != PLATFORM:
        return False
    return m.key == QUEUE_KEY or (m.table is not None and is_public(m.table))


def _uid(m: Message) -> int | None:
    if not isinstance(m.audience, Private):
        return None
    try:
        return int(m.audience.user.user_id)
    except ValueError:
        return None


def _posted(m: Message) -> bool:
    """A message posted anew in the DM (not an edit of one already there)."""
    return m.key is None or m.notify


class DirectRoute:
    """Sends `by_dm` messages; one per `Outbox`."""

    def __init__(
        self,
        refs: Refs,
        latest: LatestOnly,
        send_dm: SendDM,
        web_link: Callable[[Message], str | None] | None = None,
    ) -> None:
        self.refs = refs
        self.latest = latest
        self._send_dm = send_dm
        self.web_link = web_link

    def body(self, m: Message) -> Body:
        extra: list[Key] = []
        if m.kind == "hand" and self.web_link is not None:
            url = self.web_link(m)
            if url is not None:
                extra.append(Key(L.labels(m.language)._(L.OPEN_TABLE), "l|web", url=url))
        return render(m, extra=extra)

    async def answer_pressed(self, reply: Reply, messages: Sequence[Message]) -> list[Message]:
        """Draw the presser's message for the pressed DM message's key into it, as the interaction's answer;
        the messages left to send."""
        pressed = reply.component_message
        if pressed is None or not reply.in_dm:
            return list(messages)
        uid = reply.user_id
        for i, m in enumerate(messages):
            if m.key is None or _uid(m) != uid:
                continue
            if m.notify and any(_posted(x) for x in messages[:i] if _uid(x) == uid):
                # A new message to come before it (the deal's result before the next deal's hand): drawn
                # into the pressed message, above that one, it would be read out of order. Posted below.
                continue
            found = await self.refs.dm(uid, m.key)
            if found is None or found[1].message_id != pressed.id:
                continue
            rest = [x for x in messages if x is not m]
            ref = MessageRef(pressed.id, m.version)
            async with self.latest.lock(("dm", uid, m.key)):
                replaced = await self.refs.set_dm(uid, m.key, pressed.channel.id, ref)
                if replaced is not None and replaced.newer_than(m.version):
                    # Another call drew a later state into it already: it stays.
                    await self.refs.set_dm(uid, m.key, pressed.channel.id, replaced)
                    return rest
                await reply.update(self.body(m))
            return rest
        return list(messages)

    async def send(self, m: Message) -> bool:
        """Send or edit the DM of `m`; False when the person cannot be sent DMs (or it failed)."""
        uid = _uid(m)
        if uid is None:
            return True
        marker = f"@dm:{m.kind}" if m.key is not None and m.kind in ONCE_PER_KIND else None
        if marker is not None and not m.notify and await self._forgotten(uid, m, marker):
            return True
        if not await self._send_dm(uid, m, self.body(m)):
            return False
        if marker is not None and m.notify and m.key is not None:
            scope = self.refs.dm_scope(uid)
            previous = await self.refs.store.set_ref(scope, marker, m.key, ttl_seconds=self.refs.channel_ttl)
            if previous is not None and previous != m.key:
                await self.refs.forget_dm(uid, previous)
        return True

    async def _forgotten(self, uid: int, m: Message, marker: str) -> bool:
        """An edit of a key with no DM reference while the latest message of its kind is of a later
        version: drawn before that one (its reference was forgotten), so not posted again."""
        assert m.key is not None
        refs = await self.refs.store.get_refs(self.refs.dm_scope(uid))
        if m.key in refs:
            return False
        latest_key = refs.get(marker)
        if latest_key is None or latest_key == m.key:
            return False
        latest = MessageRef.parse(refs.get(latest_key, "").partition(":")[2])
        return latest is not None and (latest.newer_than(m.version) or m.version is None)
