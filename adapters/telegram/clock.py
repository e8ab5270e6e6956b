"""The adapter's notion of time: POSIX seconds and a way to wait.

Production uses the system clock and `asyncio.sleep`. Tests hand in a clock whose `sleep` moves time
forward instead of waiting, shared with the fake Bot API's flood control and the memory store, so a
whole game that a real limiter would stretch over minutes runs in seconds, with the same budgets checked
against the same clock on both sides.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    def now(self) -> float:
        """POSIX seconds."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Let `seconds` pass."""
        ...

    @property
    def explicit(self) -> bool:
        """Whether stores should be given `now` from this clock (a virtual clock) rather than use their
        own (the Redis server's `TIME`, one clock for every process)."""
        ...


class SystemClock:
    """Wall-clock time; stores keep their own clock."""

    explicit = False

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))
