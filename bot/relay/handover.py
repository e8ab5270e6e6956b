"""Taking what a stopping process handed over, for any chat platform.

A process that stops with messages still waiting for a chat's send budget keeps them in the store
(`Store.hand_over`, under its platform's name). Every live process of that platform (not only one that
starts: in a rolling restart the new process is up before the old one is told to stop) looks every
`POLL_SECONDS` (`HandoverPoller`) and passes what it takes to its adapter's `take` (which queues or sends
it). Each message is taken by one process. With a store that dies with the process (memory) there is
never anything to take, and no poller runs.

What a platform hands over is its own: Telegram keeps its queued sends as drawn (`adapters/telegram`),
Discord the neutral channel messages, written with the relay codec (`neutral_payload`, `neutral_message`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from bot.model import Message
from bot.relay.codec import decode_message, encode_message
from bot.storage import HandedOver, StorageError, Store

__all__ = [
    "POLL_SECONDS",
    "TABLES_PER_LOOK",
    "HandoverPoller",
    "Take",
    "neutral_message",
    "neutral_payload",
]

log = logging.getLogger("thousand.handover")

POLL_SECONDS: Final = 1.0
"""How often a live process looks for handed-over messages: one store round trip when there are none.
A message handed over waits at most this long (plus the budget it was waiting for) for a new sender."""

TABLES_PER_LOOK: Final = 200
"""Tables whose handed-over messages one look takes, at most (the next look takes the rest)."""

Take = Callable[[list[HandedOver]], Awaitable[int]]
"""The adapter's side: queue or send the messages taken (in their order); how many it took."""


def neutral_payload(m: Message) -> str:
    """A neutral message as a hand-over keeps it (the relay codec's JSON)."""
    return encode_message(m)


def neutral_message(handed: HandedOver) -> Message | None:
    """The neutral message `neutral_payload` wrote; None when the payload is not one."""
    try:
        return decode_message(handed.payload)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


class HandoverPoller:
    """Takes one platform's handed-over messages into this process, while it runs."""

    def __init__(
        self,
        store: Store,
        platform: str,
        take: Take,
        *,
        interval: float = POLL_SECONDS,
        tables: int = TABLES_PER_LOOK,
        name: str = "handover",
    ) -> None:
        self.store = store
        self.platform = platform
        self.take = take
        self.interval = interval
        self.tables = tables
        self.name = name
        self.taken = 0
        """Messages taken over so far."""
        self._task: asyncio.Task[None] | None = None
        self._stopped = asyncio.Event()

    async def take_once(self) -> int:
        """Take what is there now and pass it on; how many were taken (0 when the store is unreachable)."""
        try:
            handed = await self.store.take_handed_over(self.platform, self.tables)
        except StorageError:
            log.warning("store unavailable: handed-over messages not taken this time", exc_info=True)
            return 0
        if not handed:
            return 0
        taken = await self.take(handed)
        self.taken += taken
        if taken:
            log.info("%d message(s) a stopped process handed over are taken here (%s)", taken, self.platform)
        return taken

    def start(self) -> None:
        """Look now and then every `interval` seconds (wall time) until `stop`; nothing with a store that
        dies with the process."""
        if self._task is None and self.store.keeps_after_exit:
            self._stopped.clear()
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        """Stop looking (a stopping process takes nothing more: it would have to hand it over again).
        A look under way is finished, not cut: what it took is passed on, not lost in between."""
        task, self._task = self._task, None
        self._stopped.set()
        if task is not None:
            await task

    async def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                await self.take_once()
            except Exception:
                log.exception("taking handed-over messages failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.interval)
