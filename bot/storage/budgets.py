"""Budgets shared by every process: sends per window (a platform's rate limits, `SendBucket`) and hits
per fixed window (one person's commands)."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BudgetStore", "SendBucket"]


@dataclass(frozen=True, slots=True)
class SendBucket:
    """At most `limit` sends in any window of `window` seconds, shared by every process."""

    key: str
    limit: int
    window: float

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError("a send bucket needs limit >= 1")
        if self.window <= 0:
            raise ValueError("a send bucket needs window > 0")
        if not self.key:
            raise ValueError("a send bucket needs a key")


class BudgetStore(abc.ABC):
    """Send budgets and hit counters."""

    # --- send budget --------------------------------------------------------------------------------

    @abc.abstractmethod
    async def acquire_sends(self, buckets: Sequence[SendBucket], now: float | None = None) -> float:
        """Try to take one send from every bucket at once.

        Returns 0.0 when the send may go now (and records it in every bucket), else the seconds to wait
        before trying again (nothing recorded). Atomic across processes: no bucket ever records more than
        `limit` sends in any window of `window` seconds, provided callers' `now` does not go backwards
        (omit it to use the store's clock, the Redis server's for all processes).
        """

    async def acquire_send(
        self, bucket_key: str, limit: int, window_seconds: float, now: float | None = None
    ) -> float:
        """`acquire_sends` for a single bucket."""
        return await self.acquire_sends([SendBucket(bucket_key, limit, window_seconds)], now)

    @abc.abstractmethod
    async def hold_sends(self, bucket_key: str, seconds: float, now: float | None = None) -> None:
        """Refuse sends through the bucket for `seconds` (a platform's 429 retry_after), for all processes."""

    # --- request budgets ----------------------------------------------------------------------------

    @abc.abstractmethod
    async def count_hit(self, key: str, window: float) -> tuple[int, float]:
        """Count one hit on `key` (one person's commands in one chat, say): how many hits the key's current
        window holds, this one included, and the seconds until that window ends.

        A window opens with the first hit after the previous one closed and lasts `window` seconds (a fixed
        window: a budget of N lets through at most 2N hits in any `window` seconds, across a window's end).
        Atomic across processes: concurrent callers each get a different count. Times are the store's
        own (the Redis server's, the memory store's clock)."""
