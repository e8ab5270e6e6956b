"""Sending the neutral messages of one service call to Discord.

Who sees what (the service decides audiences; this module only routes them):

- `Group`: the table's channel. A message with a key is one message, edited in place (its id is kept in
  the store, so any process edits what another sent); `notify` posts it afresh. Channel sends draw from
  the shared budget (`budget.ChannelBudget`) and edits of one message coalesce while they wait.
- `Sender`, and `Private` for the user who caused the call: only ever an ephemeral answer to their
  interaction (or the update of the ephemeral/DM message they pressed), never the channel.
- Every `Private` message of a public table, and the queue's status message: by DM only, for the one
  who caused the call too (`dmroute`: there is no channel).
- `Private` for anyone else: their hand is refreshed in place (the ephemeral message they last opened,
  edited with that interaction's token while it is valid, or their DM if they chose DMs). When their turn
  comes they are pinged once in the channel, with a bare mention and the "My hand" button: the ping
  holds no text of the service. Other private notes go by DM or as an ephemeral followup; a warning that
  time runs out, with neither at hand, becomes a bare ping.

So the text of a `Private` or `Sender` message reaches nobody but its user, by construction.

This module routes one call's messages and answers the interaction; the channel's keyed messages are
drawn and kept here too. Beside it: `pings` (turn pings), `dms` (hands and notes by DM), `webhooks`
(interaction tokens), `routing` (addresses, `coalesce`), `dmroute` (public tables and the queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

import discord
from discord.utils import MISSING

from bot.model import Group, Message, Private, Sender
from bot.ops.metrics import Metrics
from bot.storage import StorageError

from . import NAME, PLATFORM
from . import i18n as L
from .budget import ChannelBudget, LatestOnly
from .content import Body, build_view, render
from .dmroute import DirectRoute, by_dm
from .dms import DirectMessages
from .layout import Key, hand_id, mode_id
from .pings import LANG, TurnPings, turn_of
from .refs import MessageRef, Refs
from .reply import AlreadyAnswered, Reply
from .routing import (
    NO_ACCESS_CODES,
    NO_MENTIONS,
    NoAccess,
    channel_of_table,
    coalesce,
    error_kind,
    is_hand_message,
    user_id,
    without_hand_button,
)
from .webhooks import Webhooks

__all__ = ["ANSWER_BY", "Outbox"]

log = logging.getLogger("thousand.discord.delivery")

ANSWER_BY = 2.0
"""Seconds after an interaction arrived beyond which it is deferred before being answered."""


@dataclass(slots=True)
class _Planned:
    mine: list[Message]
    group: list[Message]
    others: list[Message]
    channel_id: int | None = None
    """The table's channel: one service call concerns one table, named by its group messages, else by
    the channel the interaction came from (None: a DM press or a timer without group messages)."""
    language: str | None = None
    """The channel's language, from the call's group messages (None when it has none)."""
    no_access: bool = False
    """A channel send was refused for missing access or permissions (50001, 50013)."""


class Outbox:
    """Delivers service messages; one per process, shared by all interactions and the timer loop."""

    def __init__(
        self,
        client: discord.Client,
        refs: Refs,
        budget: ChannelBudget,
        metrics: Metrics | None = None,
        *,
        clock: Callable[[], float] = time.time,
        web_link: Callable[[Message], str | None] | None = None,
    ) -> None:
        self.web_link = web_link
        """The web table's page address for a hand's reader (a signed, short-lived link), when configured."""
        self.client = client
        self.refs = refs
        self.budget = budget
        self.metrics = metrics
        self.clock = clock
        self.latest = LatestOnly()
        self.pings = TurnPings(refs, lambda: self.budget, self.latest, self._post, self._delete)
        self.webhooks = Webhooks(client, self._failed)
        # The bodies are looked up on the outbox at each call (`_hand_body`: also when replaced later).
        self.dms = DirectMessages(
            client,
            refs,
            self.latest,
            self.pings,
            lambda m, dm: self._hand_body(m, dm=dm),
            self._failed,
            metrics,
        )
        """Hands and notes of channel tables by DM, for those who chose DMs."""
        self.direct = DirectRoute(refs, self.latest, self._dm_body, web_link)
        """Public tables and the queue: by DM only."""
        self.handover: Callable[[Message], Awaitable[None]] | None = None
        """Called with a channel message the budget refused (`handover.install`: a stopping process keeps
        it in the store for the next one)."""

    # --- entry point --------------------------------------------------------------------------------

    async def deliver(self, messages: Sequence[Message], reply: Reply | None = None) -> None:
        """Send everything; the interaction (if any) is answered first, channel sends come after."""
        messages = coalesce(messages)
        direct = [m for m in messages if by_dm(m)]
        plan = self._plan([m for m in messages if not by_dm(m)], reply)
        if reply is not None:
            if direct:
                direct = await self._direct_answer(reply, plan, direct)
            await self._answer(reply, plan)
        for m in plan.group:
            await self._guarded(self._to_channel(m), plan)
        for m in plan.others:
            await self._guarded(self._to_other(m, plan.channel_id, plan.language), plan)
        for m in direct:
            await self._guarded(self._direct(m), plan)
        if plan.no_access and reply is not None:
            # The game goes on (it is stored), but nobody sees it here: tell the one who acted why, in
            # their language (an answer to them carries it; else their Discord locale).
            mine = (m.language for m in messages if isinstance(m.audience, Sender))
            lang = next(mine, None) or L.language_of(reply.interaction.locale) or "en"
            with contextlib.suppress(discord.HTTPException):
                await reply.send_ephemeral(Body(content=L.labels(lang)._(L.NO_ACCESS)))

    async def _direct_answer(self, reply: Reply, plan: _Planned, direct: list[Message]) -> list[Message]:
        """The presser's DM message updated in place when they pressed it; a command given in a channel
        whose own messages all go by DM says so. The messages left to send by DM."""
        try:
            direct = await self.direct.answer_pressed(reply, direct)
            uid = reply.user_id
            mine = [m for m in direct if isinstance(m.audience, Private) and user_id(m.audience.user) == uid]
            if mine and not plan.mine and reply.kind == "command" and not reply.in_dm and not reply.responded:
                await reply.send_ephemeral(Body(content=L.labels(mine[0].language)._(L.DM_SENT)))
        except discord.HTTPException as exc:
            self._failed(exc)
        except StorageError:
            log.warning("storage failed while answering in a DM", exc_info=True)
        return direct

    async def _direct(self, m: Message) -> None:
        if not await self.direct.send(m):
            log.info("a %s message of a public table or the queue could not be sent by DM", m.kind)

    async def _dm_body(self, uid: int, m: Message, body: Body) -> bool:
        return await self.dms.send(uid, m, None, body=body)

    def _plan(self, messages: list[Message], reply: Reply | None) -> _Planned:
        plan = _Planned([], [], [])
        if reply is not None and not reply.in_dm:
            plan.channel_id = reply.interaction.channel_id
        for m in messages:
            audience = m.audience
            if isinstance(audience, Group):
                if audience.chat.platform == PLATFORM:
                    plan.group.append(m)
                    plan.channel_id = channel_of_table(audience.chat.key)
                    plan.language = m.language
                continue
            uid = user_id(audience.user)
            if uid is None:
                continue
            if reply is not None and uid == reply.user_id:
                plan.mine.append(m)
            elif isinstance(audience, Private):
                plan.others.append(m)
            else:
                log.warning("a Sender message without its interaction was dropped (kind %s)", m.kind)
        return plan

    async def _guarded(self, send: Awaitable[None], plan: _Planned) -> None:
        """Run one send; a failure is logged and counted, and never stops the other sends."""
        try:
            await send
        except NoAccess:
            plan.no_access = True
        except discord.HTTPException as exc:
            self._failed(exc)
        except StorageError:
            log.warning("storage failed while delivering a message", exc_info=True)

    def _failed(self, exc: discord.HTTPException) -> None:
        kind = error_kind(exc)
        if self.metrics is not None:
            self.metrics.platform_error(NAME, kind)
        log.warning("Discord refused a send: %s %s", exc.status, exc.code, extra={"status": exc.status})

    # --- the interaction ----------------------------------------------------------------------------

    async def _answer(self, reply: Reply, plan: _Planned) -> None:
        """The first answer within the deadline, then the user's other messages as ephemeral followups.

        A service call that finished just before the deferral point leaves little of the 3 seconds: if the
        first answer is not out `ANSWER_BY` seconds after the interaction arrived (a slow store lookup
        below), a watchdog defers it, and the answer follows."""
        watchdog = asyncio.create_task(reply.defer_by(ANSWER_BY))
        try:
            if await self._result_first(reply, plan):
                return
            await self._update_pressed(reply, plan)
            for m in list(plan.mine):
                plan.mine.remove(m)
                await self._to_invoker(reply, m)
            if not reply.responded and reply.kind == "command":
                await self._public_answer(reply, plan)
        except discord.HTTPException as exc:
            self._failed(exc)
        except StorageError:
            log.warning("storage failed while answering an interaction", exc_info=True)
        except NoAccess:
            plan.no_access = True
        finally:
            watchdog.cancel()
            fallback = L.labels(plan.group[0].language if plan.group else "en")._(L.DONE)
            try:
                await reply.finish(fallback)
            except discord.HTTPException as exc:
                self._failed(exc)

    async def _result_first(self, reply: Reply, plan: _Planned) -> bool:
        """A call that ended a deal shows the deal's result before anyone sees the next deal's hand, the
        one who made the last move included. True when the interaction was answered here.

        In the table's channel, the first answer is the result itself, public (an interaction answer: at
        once, and outside the channel's send budget); the mover's new hand then goes where any player's
        goes (their open hand edited with its token, or their DM). Elsewhere (a press in a DM, or an
        interaction deferred already), the interaction is deferred and the result posted before the
        mover's hand is drawn."""
        result = next((m for m in plan.group if m.kind == "result" and m.notify), None)
        if result is None or not isinstance(result.audience, Group):
            return False
        channel_id = int(result.audience.chat.chat_id)
        if not reply.responded and not reply.in_dm and reply.interaction.channel_id == channel_id:
            try:
                message_id = await reply.send_public(self._channel_body(result))
            except AlreadyAnswered:
                message_id = None  # deferred by the watchdog meanwhile: posted below
            else:
                plan.group.remove(result)
                if result.key is not None and message_id is not None:
                    await self._remember(channel_id, result, message_id)
                for m in list(plan.mine):
                    plan.mine.remove(m)
                    if m.kind == "hand" and isinstance(m.audience, Private):
                        await self._mover_hand(reply, m, channel_id)
                    else:
                        await reply.send_ephemeral(render(m, in_place=True))
                return True
        await reply.defer()
        plan.group.remove(result)
        await self._guarded(self._to_channel(result), plan)
        return False

    async def _mover_hand(self, reply: Reply, m: Message, channel_id: int) -> None:
        """The mover's hand after their interaction was answered with a deal's result: their DM, else the
        hand they have open (edited with its token), else a new ephemeral hand."""
        uid = reply.user_id
        if await self.refs.wants_dm(uid) and await self.dms.send(uid, m, reply):
            return
        body = self._hand_body(m, dm=False)
        ref = await self.refs.hand(uid, channel_id)
        if ref is not None and await self.webhooks.edit(ref.token, ref.message_id, body):
            await self.refs.set_hand(uid, channel_id, ref.token, ref.message_id, ref.at, m.version)
            return
        message_id = await reply.send_ephemeral(body)
        if message_id is not None:
            await self.refs.set_hand(uid, channel_id, reply.token, message_id, self.clock(), m.version)

    async def _update_pressed(self, reply: Reply, plan: _Planned) -> None:
        """A press answered by editing the pressed message itself (one call, no channel send)."""
        pressed = reply.component_message
        if pressed is None:
            return
        if not is_hand_message(pressed):
            refs = await self.refs.channel(pressed.channel.id)
            for m in plan.group:
                ref = MessageRef.parse(refs.get(m.key)) if m.key is not None else None
                if m.key is not None and not m.notify and ref is not None and ref.message_id == pressed.id:
                    plan.group.remove(m)
                    if ref.newer_than(m.version):
                        return  # another process already showed a later version
                    await reply.update(self._channel_body(m))
                    await self.refs.set_channel(
                        pressed.channel.id, m.key, MessageRef(pressed.id, m.version).dump()
                    )
                    return
            return
        for m in plan.mine:
            if m.kind != "hand" or not isinstance(m.audience, Private):
                continue
            if reply.in_dm:
                plan.mine.remove(m)
                if m.key is not None:
                    ref = MessageRef(pressed.id, m.version)
                    replaced = await self.refs.set_dm(reply.user_id, m.key, pressed.channel.id, ref)
                    if replaced is not None and replaced.newer_than(m.version):
                        # Another call already drew a later hand into the DM: it stays.
                        await self.refs.set_dm(reply.user_id, m.key, pressed.channel.id, replaced)
                        return
                await reply.update(self._hand_body(m, dm=True))
                return
            if await self.refs.wants_dm(reply.user_id):
                return  # delivered by DM in `_to_invoker`
            plan.mine.remove(m)
            await reply.update(self._hand_body(m, dm=False))
            await self.refs.set_hand(
                reply.user_id, pressed.channel.id, reply.token, pressed.id, self.clock(), m.version
            )
            return

    async def _to_invoker(self, reply: Reply, m: Message) -> None:
        channel_id = reply.interaction.channel_id
        if m.kind == "hand" and isinstance(m.audience, Private) and not reply.in_dm and channel_id:
            if await self.refs.wants_dm(reply.user_id) and await self.dms.send(reply.user_id, m, reply):
                if not reply.answered:
                    await reply.send_ephemeral(Body(content=L.labels(m.language)._(L.DM_SENT)))
                return
            message_id = await reply.send_ephemeral(self._hand_body(m, dm=False))
            if message_id is not None:
                await self.refs.set_hand(
                    reply.user_id, channel_id, reply.token, message_id, self.clock(), m.version
                )
            return
        in_place = not reply.in_dm
        body = self._hand_body(m, dm=reply.in_dm) if m.kind == "hand" else render(m, in_place=in_place)
        await reply.send_ephemeral(body)

    async def _public_answer(self, reply: Reply, plan: _Planned) -> None:
        """A command whose only output is a new channel message answers with that message."""
        for m in plan.group:
            channel_id = int(m.audience.chat.chat_id) if isinstance(m.audience, Group) else 0
            interaction_channel = reply.interaction.channel_id
            if channel_id != interaction_channel:
                continue
            if m.key is not None and not m.notify:
                refs = await self.refs.channel(channel_id)
                if m.key in refs:
                    continue
            try:
                message_id = await reply.send_public(self._channel_body(m))
            except AlreadyAnswered:
                return  # deferred meanwhile: the message goes to the channel like the others
            plan.group.remove(m)
            if m.key is not None and message_id is not None:
                await self._remember(channel_id, m, message_id)
            return

    # --- the channel --------------------------------------------------------------------------------

    def _channel_body(self, m: Message) -> Body:
        extra: list[Key] = []
        if m.kind == "table" and isinstance(m.audience, Group):
            chat = m.audience.chat
            # Discord's own "My hand" (answered with an ephemeral hand at once) stands in for the
            # service's, so the table shows one such button, not two.
            m = replace(m, buttons=without_hand_button(m.buttons))
            extra.append(Key(L.labels(m.language)._(L.MY_HAND), hand_id(chat.key), "primary"))
        return render(m, extra=extra)

    def _hand_body(self, m: Message, *, dm: bool) -> Body:
        lab = L.labels(m.language)
        switch = Key(lab._(L.HAND_HERE), mode_id(False)) if dm else Key(lab._(L.HAND_BY_DM), mode_id(True))
        extra = [switch]
        url = self.web_link(m) if self.web_link is not None else None
        if url is not None:
            extra.append(Key(lab._(L.OPEN_TABLE), "l|web", url=url))
        return render(m, extra=extra, in_place=not dm)

    async def _remember(self, channel_id: int, m: Message, message_id: int) -> None:
        """Keep the message id for `m.key`. Keys are opaque, so the reference of the previous message of the
        same kind (the last deal's table, the last lobby) is found through `@<kind>` and forgotten: it will
        not be edited again, and the channel's references stay few.

        The reference is swapped in atomically: when another process posted a newer message for the same
        key meanwhile (a rare race of two first posts), that one stays and ours is deleted, so the newest
        message of a key shows the newest state."""
        assert m.key is not None
        refs = await self.refs.channel(channel_id)
        marker = f"@{m.kind}"
        previous = refs.get(marker)
        replaced = MessageRef.parse(
            await self.refs.set_channel(channel_id, m.key, MessageRef(message_id, m.version).dump())
        )
        if replaced is not None and replaced.message_id != message_id and replaced.newer_than(m.version):
            await self.refs.set_channel(channel_id, m.key, replaced.dump())
            await self._delete(channel_id, message_id)
            return
        if previous is not None and previous != m.key:
            await self.refs.forget_channel(channel_id, previous)
        if previous != m.key:
            await self.refs.set_channel(channel_id, marker, m.key)
        if refs.get(LANG) != m.language:
            await self.refs.set_channel(channel_id, LANG, m.language)

    @staticmethod
    def _outdated(refs: dict[str, str], m: Message) -> bool:
        """`m` would show an older state than the channel already shows (or will: a later message of its
        kind replaced its key): its own reference holds a newer version, or its kind's latest message is
        another key of a newer version (the next deal's table is out: the last deal's is not posted
        again)."""
        assert m.key is not None
        existing = MessageRef.parse(refs.get(m.key))
        if existing is not None and existing.newer_than(m.version):
            return True
        latest_key = refs.get(f"@{m.kind}")
        if latest_key is None or latest_key == m.key:
            return False
        latest = MessageRef.parse(refs.get(latest_key))
        if existing is None and not m.notify and latest is not None and m.version is None:
            return True  # an edit of a forgotten key without a version to compare: never reposted
        return latest is not None and latest.newer_than(m.version)

    async def _to_channel(self, m: Message) -> None:
        """One channel message. Every wait (the lock of its key, the send budget) is followed by a fresh
        look at what the channel shows: a message drawn from an older state than one shown is dropped,
        never posted or edited over the newer one (`_outdated`)."""
        assert isinstance(m.audience, Group)
        channel_id = int(m.audience.chat.chat_id)
        body = self._channel_body(m)
        if m.key is None:
            if await self.budget.acquire(channel_id):
                await self._post(channel_id, body)
            elif self.handover is not None:
                await self.handover(m)
            if m.kind == "final":
                await self.pings.drop(channel_id, m)
            return
        key = m.key
        lock_key = (channel_id, key)
        ticket = self.latest.ticket(lock_key)
        edit_only = not m.notify
        try:
            async with self.latest.lock(lock_key):
                if edit_only and not self.latest.is_latest(lock_key, ticket):
                    return  # a newer edit of this message is queued behind us
                if self._outdated(await self.refs.channel(channel_id), m):
                    return  # drawn before what is on screen (another process was faster)
                wanted = (lambda: self.latest.is_latest(lock_key, ticket)) if edit_only else (lambda: True)
                if not await self.budget.acquire(channel_id, wanted):
                    if self.handover is not None:
                        await self.handover(m)
                    return
                refs = await self.refs.channel(channel_id)
                if self._outdated(refs, m):
                    return
                existing = MessageRef.parse(refs.get(key))
                if edit_only and existing is not None:
                    # Claim the version before the edit: of two processes editing at once, the older
                    # learns of the newer here and steps back.
                    version = m.version if m.version is not None else existing.version
                    claimed = MessageRef(existing.message_id, version)
                    replaced = MessageRef.parse(await self.refs.set_channel(channel_id, key, claimed.dump()))
                    if replaced is not None and replaced.newer_than(m.version):
                        await self.refs.set_channel(channel_id, key, replaced.dump())
                        return
                    if await self._edit(channel_id, existing.message_id, body):
                        return
                message_id = await self._post(channel_id, body)
                if message_id is not None:
                    await self._remember(channel_id, m, message_id)
        finally:
            self.latest.done(lock_key, ticket)
        if m.kind == "final":
            await self.pings.drop(channel_id, m)

    async def _post(
        self,
        channel_id: int,
        body: Body,
        mentions: discord.AllowedMentions = NO_MENTIONS,
    ) -> int | None:
        channel = self.client.get_partial_messageable(channel_id)
        try:
            sent = await channel.send(
                body.content,
                embeds=body.embeds or MISSING,
                files=body.discord_files() or MISSING,
                view=build_view(body.rows) or MISSING,
                allowed_mentions=mentions,
            )
        except discord.HTTPException as exc:
            self._failed(exc)
            if isinstance(exc, discord.Forbidden) and exc.code in NO_ACCESS_CODES:
                raise NoAccess from exc
            return None
        return sent.id

    async def _edit(self, channel_id: int, message_id: int, body: Body) -> bool:
        """Edit a channel message; False when it is gone (deleted by someone), so the caller reposts."""
        message = self.client.get_partial_messageable(channel_id).get_partial_message(message_id)
        try:
            await message.edit(
                content=body.content,
                embeds=body.embeds,
                attachments=body.discord_files() or MISSING,
                view=build_view(body.rows),
                allowed_mentions=NO_MENTIONS,
            )
        except discord.NotFound:
            return False
        except discord.HTTPException as exc:
            self._failed(exc)
        return True

    # --- other users --------------------------------------------------------------------------------

    async def _to_other(self, m: Message, channel_id: int | None, channel_lang: str | None = None) -> None:
        assert isinstance(m.audience, Private)
        uid = user_id(m.audience.user)
        if uid is None:
            return
        if channel_id is None:
            channel_id = await self._channel_of_user(uid)
        if m.kind == "hand" and m.alert:
            # A warning with the hand: the hand is redrawn quietly and the warning goes as it always did.
            await self._other_hand(uid, replace(m, notify=False, alert=""), channel_id, channel_lang)
            m = replace(m, kind="warning", text=m.alert, key=None, buttons=(), alert="")
        if m.kind == "hand":
            await self._other_hand(uid, m, channel_id, channel_lang)
            return
        if await self.refs.wants_dm(uid) and await self.dms.send(uid, m, None, channel_id=channel_id):
            return
        if channel_id is None:
            log.info("a private %s message for a user without a Discord table was dropped", m.kind)
            return
        hand = await self.refs.hand(uid, channel_id)
        if hand is not None and await self.webhooks.followup(hand.token, render(m, in_place=True)):
            return
        if m.kind == "warning":
            await self.pings.ping(channel_id, uid, channel_lang, L.HURRY, turn=None, of=m)

    async def _other_hand(
        self, uid: int, m: Message, channel_id: int | None, channel_lang: str | None
    ) -> None:
        turn = turn_of(m) if m.notify else None
        if await self.refs.wants_dm(uid) and await self.dms.send(
            uid, m, None, turn=turn, channel_id=channel_id
        ):
            if turn is not None and channel_id is not None:
                await self.pings.elsewhere(channel_id, m)
            return  # a new DM notifies by itself
        if channel_id is None:
            return
        async with self.latest.lock(("hand", uid, channel_id)):
            # Read after the lock: two deliveries to one open hand never cross (an older hand is not
            # drawn over a newer one).
            ref = await self.refs.hand(uid, channel_id)
            if ref is not None and not (
                ref.version is not None and m.version is not None and m.version < ref.version
            ):
                if await self.webhooks.edit(ref.token, ref.message_id, self._hand_body(m, dm=False)):
                    if m.version is not None:
                        await self.refs.set_hand(
                            uid, channel_id, ref.token, ref.message_id, ref.at, m.version
                        )
                else:
                    await self.refs.forget_hand(uid, channel_id)
        if turn is not None:
            await self.pings.ping(channel_id, uid, channel_lang, L.YOUR_TURN, turn=turn, of=m)

    async def _delete(self, channel_id: int, message_id: int) -> None:
        """Delete one of the bot's channel messages. Callers own what they delete (each message is deleted
        once), so Unknown Message (404, 10008) means someone else removed it: logged, not retried."""
        message = self.client.get_partial_messageable(channel_id).get_partial_message(message_id)
        try:
            await message.delete()
        except discord.NotFound:
            log.info("message %s was already gone from channel %s", message_id, channel_id)
        except discord.HTTPException as exc:
            self._failed(exc)

    async def _channel_of_user(self, uid: int) -> int | None:
        """The channel of the user's one Discord table (None if they sit at none or at several)."""
        channels = {
            c
            for t in await self.refs.store.tables_for_user(f"{PLATFORM}:{uid}")
            if (c := channel_of_table(t)) is not None
        }
        return channels.pop() if len(channels) == 1 else None

    # --- webhooks (interaction tokens) --------------------------------------------------------------
