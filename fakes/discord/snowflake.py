"""Snowflake ids shaped like Discord's, so timestamps and shard routing derived from them are real."""

from __future__ import annotations

import itertools
import time

DISCORD_EPOCH_MS = 1_420_070_400_000


class SnowflakeFactory:
    """Mints increasing snowflakes: discord.py reads creation times from them (e.g. for delete sub-limits)."""

    def __init__(self, worker: int = 1, process: int = 0) -> None:
        self._worker = worker & 0x1F
        self._process = process & 0x1F
        self._counter = itertools.count()
        self._last = 0

    def next(self) -> int:
        ts = int(time.time() * 1000) - DISCORD_EPOCH_MS
        value = (ts << 22) | (self._worker << 17) | (self._process << 12) | (next(self._counter) & 0xFFF)
        # Never go backwards even if the counter wraps within one millisecond.
        if value <= self._last:
            value = self._last + 1
        self._last = value
        return value


def snowflake_time_ms(snowflake: int) -> int:
    """Unix milliseconds encoded in a snowflake."""
    return (snowflake >> 22) + DISCORD_EPOCH_MS


def shard_for_guild(guild_id: int, shard_count: int) -> int:
    """Discord's sharding formula: which shard receives a guild's events."""
    return (guild_id >> 22) % shard_count
