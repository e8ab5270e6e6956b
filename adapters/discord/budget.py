"""The channel send budget: at most about 5 channel messages (posts and edits) per 5 seconds per table,
shared by every process through the store, and edits of one message coalesced while they wait.

Discord allows 5 message creations per 5 s per channel and answers 429 beyond; discord.py obeys those
answers (its rate-limit handling is left on), but a bot that keeps to the budget never meets them, and
the budget is shared: a timer firing in one process and a button press handled in another draw from the
same bucket. Interaction responses and followups are not channel sends (Discord limits them per
interaction) and do not draw from it.

While a send waits, a newer edit of the same message makes it pointless: `LatestOnly` lets the waiting
one drop out, so a burst of moves costs one edit of the table, not one per move.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Final

from bot.ops.metrics import Metrics
from bot.storage import SendBucket, StorageUnavailable, Store

from . import NAME

__all__ = ["ChannelBudget", "LatestOnly"]

CHANNEL_LIMIT: Final = 5
CHANNEL_WINDOW: Final = 5.0
MARGIN: Final = 0.1
"""The budget's windows are this much longer than Discord's: Discord counts its window from when the first
request of a burst reached it, the budget from when the first was allowed to leave, and the two differ by
network time; without a margin, the last send of a window can arrive a moment early and meet a 429."""
GLOBAL_LIMIT: Final = 40
GLOBAL_WINDOW: Final = 1.0
"""Discord's global limit is 50 requests per second per bot; the rest is left for interaction calls."""


class ChannelBudget:
    """Waits until the channel (and the bot as a whole) may send one more message."""

    def __init__(
        self,
        store: Store,
        metrics: Metrics | None = None,
        *,
        limit: int = CHANNEL_LIMIT,
        window: float = CHANNEL_WINDOW,
        global_limit: int = GLOBAL_LIMIT,
        global_window: float = GLOBAL_WINDOW,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.store = store
        self.metrics = metrics
        self.limit = limit
        self.window = window
        self._global = SendBucket("discord:global", global_limit, global_window * (1 + MARGIN))
        self._sleep = sleep

    def buckets(self, channel_id: int) -> list[SendBucket]:
        window = self.window * (1 + MARGIN)
        return [SendBucket(f"discord:chan:{channel_id}", self.limit, window), self._global]

    async def acquire(self, channel_id: int, still_wanted: Callable[[], bool] = lambda: True) -> bool:
        """Wait for a send slot; False (nothing taken) when `still_wanted()` turns false while waiting.

        If the store cannot be reached the send goes ahead: discord.py's own rate-limit handling still
        protects the bot, and a game message should not be lost because Redis blinked.
        """
        buckets = self.buckets(channel_id)
        start = time.monotonic()
        waited = False
        while True:
            if not still_wanted():
                return False
            try:
                wait = await self.store.acquire_sends(buckets)
            except StorageUnavailable:
                return True
            if wait <= 0:
                if waited and self.metrics is not None:
                    self.metrics.rate_limited(NAME, time.monotonic() - start)
                return True
            waited = True
            await self._sleep(min(wait, self.window))

    async def hold(self, channel_id: int, seconds: float) -> None:
        """Refuse the channel's sends for `seconds` in every process (after a 429 from Discord)."""
        with contextlib.suppress(StorageUnavailable):
            await self.store.hold_sends(f"discord:chan:{channel_id}", seconds)


class LatestOnly:
    """Tickets per key: only the newest holder of a key's ticket is still wanted."""

    def __init__(self) -> None:
        self._latest: dict[Hashable, int] = {}
        self._counter = 0
        self._locks: dict[Hashable, asyncio.Lock] = {}
        self._users: dict[Hashable, int] = {}

    def ticket(self, key: Hashable) -> int:
        self._counter += 1
        self._latest[key] = self._counter
        return self._counter

    def is_latest(self, key: Hashable, ticket: int) -> bool:
        return self._latest.get(key) == ticket

    def done(self, key: Hashable, ticket: int) -> None:
        if self._latest.get(key) == ticket:
            del self._latest[key]

    def lock(self, key: Hashable) -> _KeyLock:
        """A lock per key, so two sends of one message never cross on the way (dropped when unused)."""
        return _KeyLock(self, key)


class _KeyLock:
    def __init__(self, owner: LatestOnly, key: Hashable) -> None:
        self._owner = owner
        self._key = key

    async def __aenter__(self) -> None:
        owner, key = self._owner, self._key
        lock = owner._locks.get(key)
        if lock is None:
            lock = owner._locks[key] = asyncio.Lock()
        owner._users[key] = owner._users.get(key, 0) + 1
        await lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        owner, key = self._owner, self._key
        owner._locks[key].release()
        owner._users[key] -= 1
        if owner._users[key] == 0:
            del owner._users[key]
            del owner._locks[key]
