"""A restart loses no channel message: what waits for the channel budget when the process stops is handed
over to the store, and a live process sends it.

Discord delivery is not queued: a channel send waits for the shared channel budget (`budget`) inside the
update or timer tick that caused it, and the stop sequence waits for those (the drain). Most waits end
within the budget's 5 s window, so for `DELIVER_ON_STOP` seconds after the stop request nothing changes.
Then the budget gives way (`GivingWayBudget`: its waits end at once, and `acquire` says no), and
`Outbox._to_channel` passes the refused message to `Handover.refused`, which keeps it in the store
(`Store.hand_over`, platform `dc`, under the channel's table id, with the table version; the message in
the relay codec's JSON); the update then ends and the process stops. A stopping process keeps only
channel messages (tables, results, lobbies, notes to the channel); a turn ping cut short is not kept
(the next process pings the next turn, and the player's hand has their turn), nor are private hands
(they are not budgeted: never waiting).

Every live process looks every `POLL_SECONDS` (`Handover.start`, with `bot.relay.handover`'s poller):
each message taken goes through `Outbox.deliver` as if the service had just sent it, one channel's in
order, inside an update of the stop sequence (so a process stopping while it sends them hands them over
again). Before that, a message whose key the channel already shows at its version or a newer one is
dropped: it was sent meanwhile (by this hand-over taken twice, or the interaction path), and an older
state never replaces a newer one (`Outbox._outdated` checks the rest after every wait).

With a store that dies with the process (memory), nothing can be handed over: the refused messages are
counted as lost (`GracefulShutdown.undelivered`: exit status 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from bot.model import Button, ChatRef, Group, Message
from bot.ops.shutdown import GracefulShutdown, ShuttingDown
from bot.relay.handover import POLL_SECONDS, HandoverPoller, neutral_message, neutral_payload
from bot.storage import HandedOver, StorageError, Store

from .budget import ChannelBudget
from .delivery import Outbox
from .refs import MessageRef

if TYPE_CHECKING:
    from .client import ThousandBot

__all__ = [
    "DELIVER_ON_STOP",
    "HANDOVER_PLATFORM",
    "POLL_SECONDS",
    "GivingWayBudget",
    "Handover",
    "install",
    "message_of",
    "payload_of",
]

log = logging.getLogger("thousand.discord.handover")

HANDOVER_PLATFORM: Final = "dc"
"""`HandedOver.platform` of Discord's messages."""
DELIVER_ON_STOP: Final = 5.0
"""Seconds after the stop request during which channel sends still wait for the budget (one window)."""
SETTLE_SECONDS: Final = 3.0
"""At the flush, how long to wait for sends still in the budget to give way and be handed over."""


def payload_of(m: Message) -> str:
    """A channel message as the store keeps it (`message_of` reads it back): the relay codec's JSON."""
    assert isinstance(m.audience, Group)
    return neutral_payload(m)


def message_of(handed: HandedOver) -> Message | None:
    """The channel message a stopping process handed over; None if it is not one of ours or does not
    parse. Images and files are not kept (`refused` hands over only messages without them)."""
    if handed.platform != HANDOVER_PLATFORM:
        return None
    m = neutral_message(handed)
    if m is None:
        m = _legacy_message_of(handed.payload, handed.key, handed.version)
    return m if m is not None and isinstance(m.audience, Group) else None


def _legacy_message_of(payload: str, key: str | None, version: int | None) -> Message | None:
    """A payload in the form this adapter wrote before it used the relay codec, which a process of the
    previous release may hand over during a rolling upgrade. To go with the release after this one."""
    try:
        data = json.loads(payload)
        platform, chat_id, title = data["chat"]
        buttons = tuple(tuple(Button(str(label), str(p)) for label, p in row) for row in data["buttons"])
        return Message(
            Group(ChatRef(str(platform), str(chat_id), str(title))),
            str(data["text"]),
            key,
            buttons=buttons,
            notify=bool(data["notify"]),
            language=str(data["language"]),
            kind=str(data["kind"]),
            heading=str(data["heading"]),
            version=version,
            series=data["series"],
            optional=bool(data["optional"]),
        )
    except (ValueError, KeyError, TypeError):
        return None


class Handover:
    """Both sides of the hand-over for one Discord process."""

    def __init__(
        self,
        store: Store,
        outbox: Outbox,
        shutdown: GracefulShutdown,
        *,
        deliver_for: float = DELIVER_ON_STOP,
        interval: float = POLL_SECONDS,
    ) -> None:
        self.store = store
        self.outbox = outbox
        self.shutdown = shutdown
        self.deliver_for = deliver_for
        self.interval = interval
        self.handed_over = 0
        self.lost = 0
        self.dropped = 0
        """Taken-over messages the channel already showed (at their version or a newer one)."""
        self.waiting = 0
        """Channel sends waiting for the budget right now (`GivingWayBudget`), and refused messages
        being written to the store: the flush waits for both before the store closes."""
        self._give_way = asyncio.Event()
        self.poller = HandoverPoller(
            store, HANDOVER_PLATFORM, self._take, interval=interval, name="discord-handover"
        )
        self._timer: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self._seq = itertools.count(1)

    @property
    def giving_way(self) -> bool:
        """The process is stopping and its channel sends no longer wait for the budget."""
        return self._give_way.is_set()

    # --- the stopping side --------------------------------------------------------------------------

    async def sleep(self, seconds: float) -> None:
        """The budget's sleep: cut short when the sends give way."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._give_way.wait(), max(0.0, seconds))

    async def begin_stop(self) -> None:
        """A stop hook (intake): take nothing more, and give way `deliver_for` seconds from now."""
        await self.stop_taking()
        if self._timer is None and not self.giving_way:
            self._timer = asyncio.get_running_loop().create_task(self._give_way_later())

    async def _give_way_later(self) -> None:
        await asyncio.sleep(self.deliver_for)
        self._give_way.set()

    async def settle(self) -> None:
        """A flush hook: updates in flight are done (or abandoned); what still waits gives way now and is
        handed over before the store closes."""
        self._give_way.set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_SECONDS
        while self.waiting > 0 and loop.time() < deadline:
            await asyncio.sleep(0.02)
        if self._timer is not None:
            self._timer.cancel()

    async def refused(self, m: Message) -> None:
        """`Outbox._to_channel`'s hook: the budget refused `m`. Kept for another process when that was
        because this one is stopping (else a newer message of its key took its place: nothing to do)."""
        if not self.giving_way or not isinstance(m.audience, Group):
            return
        if m.image is not None or m.document is not None:
            self._lose(1, "a chart or file")  # not kept: too big for a hand-over, and redrawn on request
            return
        if not self.store.keeps_after_exit:
            self._lose(1, "the store dies with the process")
            return
        self.waiting += 1
        try:
            await self._keep(m)
        finally:
            self.waiting -= 1

    async def _keep(self, m: Message) -> None:
        assert isinstance(m.audience, Group)
        handed = HandedOver(
            HANDOVER_PLATFORM,
            m.audience.chat.key,
            m.audience.chat.chat_id,
            m.key,
            m.version,
            next(self._seq),
            payload_of(m),
        )
        try:
            await self.store.hand_over([handed])
        except StorageError:
            log.exception("a channel message could not be handed over")
            self._lose(1, "the store refused it")
            return
        self.handed_over += 1
        log.info(
            "a channel message waiting for the budget was handed over to the next process",
            extra={"event": "shutdown", "count": 1, "outcome": "handed_over"},
        )

    def _lose(self, count: int, why: str) -> None:
        self.lost += count
        self.shutdown.undelivered(count)
        log.error(
            "%d channel message(s) waiting for the budget are lost: %s",
            count,
            why,
            extra={"event": "shutdown", "count": count, "outcome": "lost"},
        )

    # --- the taking side ----------------------------------------------------------------------------

    @property
    def taken(self) -> int:
        """Handed-over messages taken by this process so far."""
        return self.poller.taken

    def start(self) -> None:
        """Look for handed-over messages now and every `interval` seconds, until the stop."""
        self.poller.start()

    async def stop_taking(self) -> None:
        await self.poller.stop()  # a look under way ends: what it took is being sent, inside an update

    async def _take(self, handed: list[HandedOver]) -> int:
        """Send what the poller took (one task per channel, in order); how many."""
        by_channel: dict[str, list[Message]] = {}
        for h in handed:
            m = message_of(h)
            if m is None:
                log.warning("a handed-over message does not parse: dropped")
                continue
            by_channel.setdefault(h.table_id, []).append(m)
        for messages in by_channel.values():
            task = asyncio.get_running_loop().create_task(self._send(messages))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        return sum(len(v) for v in by_channel.values())

    async def _send(self, messages: list[Message]) -> None:
        try:
            async with self.shutdown.update():
                for m in messages:
                    if await self._shown(m):
                        self.dropped += 1
                        continue
                    await self.outbox.deliver([m])
        except ShuttingDown:
            # Taken just as this process began to stop: handed over again for the next one.
            self._give_way.set()
            for m in messages:
                await self.refused(m)
        except Exception:
            log.exception("sending handed-over messages failed")

    async def _shown(self, m: Message) -> bool:
        """The channel shows `m`'s key at its version or a newer one: sent already, or replaced."""
        if m.key is None or m.version is None or not isinstance(m.audience, Group):
            return False
        refs = await self.outbox.refs.channel(int(m.audience.chat.chat_id))
        ref = MessageRef.parse(refs.get(m.key))
        return ref is not None and ref.version is not None and ref.version >= m.version


class GivingWayBudget(ChannelBudget):
    """The channel budget of a process with a hand-over: like `ChannelBudget`, but once the process gives
    way, waits end at once and `acquire` says no (the message is handed over instead)."""

    def __init__(self, inner: ChannelBudget, handover: Handover) -> None:
        super().__init__(
            inner.store, inner.metrics, limit=inner.limit, window=inner.window, sleep=handover.sleep
        )
        self._global = inner._global  # the same bot-wide bucket
        self.handover = handover

    async def acquire(self, channel_id: int, still_wanted: Callable[[], bool] = lambda: True) -> bool:
        handover = self.handover

        def wanted() -> bool:
            return not handover.giving_way and still_wanted()

        handover.waiting += 1
        try:
            return await super().acquire(channel_id, wanted)
        finally:
            handover.waiting -= 1


def install(
    bot: ThousandBot, *, deliver_for: float = DELIVER_ON_STOP, interval: float = POLL_SECONDS
) -> Handover:
    """Give a `ThousandBot` the hand-over: its outbox's budget gives way at the stop and hands refused
    channel messages over; stop hooks registered with its runtime. Call `start()` once it runs."""
    runtime = bot.runtime
    outbox: Outbox = bot.outbox
    handover = Handover(runtime.store, outbox, runtime.shutdown, deliver_for=deliver_for, interval=interval)
    budget = GivingWayBudget(outbox.budget, handover)
    bot.budget = outbox.budget = budget
    outbox.handover = handover.refused
    runtime.shutdown.on_stop_intake("discord hand-over", handover.begin_stop)
    # Flush hooks run newest first: this one before the client and the store close.
    runtime.shutdown.on_flush("discord hand-over", handover.settle)
    return handover
