"""Active tables and players: those with a command in the last few minutes, across all processes.

Tables live in Redis, not in a process, and a webhook replica sees a random share of each chat's
updates, so no process can count them alone. Each process adds the table and user ids it handled to a
HyperLogLog per minute in Redis (one pipelined round trip per flush, not per command); every process
then reports the same estimate (standard error 0.81%) of the union over the window. Scrape with `max()`
across processes, not `sum()`.

With the memory store (one process by definition) the ids are counted exactly in memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Protocol

from redis.asyncio import Redis, RedisCluster

__all__ = ["Activity", "LocalActivity", "RedisActivity"]


class Activity(Protocol):
    def touch(self, table_id: str | None, user_key: str | None) -> None:
        """Note a command at this table by this (human) user."""

    async def sample(self) -> tuple[int, int]:
        """(active tables, active players) over the window; flushes what `touch` collected."""

    async def close(self) -> None: ...


class LocalActivity:
    """Exact counts for one process."""

    def __init__(self, window: float = 900.0, clock: Callable[[], float] = time.time) -> None:
        self.window = window
        self._clock = clock
        self._tables: dict[str, float] = {}
        self._users: dict[str, float] = {}

    def touch(self, table_id: str | None, user_key: str | None) -> None:
        now = self._clock()
        if table_id:
            self._tables[table_id] = now
        if user_key:
            self._users[user_key] = now

    async def sample(self) -> tuple[int, int]:
        since = self._clock() - self.window
        for seen in (self._tables, self._users):
            for key in [k for k, t in seen.items() if t < since]:
                del seen[key]
        return len(self._tables), len(self._users)

    async def close(self) -> None:
        return None


class RedisActivity:
    """HyperLogLogs per minute under `<prefix>:{ops}:...` (one hash slot, so PFCOUNT can merge them)."""

    def __init__(
        self,
        client: Redis | RedisCluster,
        *,
        prefix: str = "thousand",
        window: float = 900.0,
        bucket: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._r = client
        self._prefix = prefix
        self.window = window
        self.bucket = bucket
        self._clock = clock
        self._tables: set[str] = set()
        self._users: set[str] = set()

    @classmethod
    def from_url(cls, url: str, *, cluster: bool = False, **options: Any) -> RedisActivity:
        common: dict[str, Any] = {
            "decode_responses": True,
            "socket_timeout": 2.0,
            "socket_connect_timeout": 1.0,
        }
        client: Redis | RedisCluster = (
            RedisCluster.from_url(url, **common) if cluster else Redis.from_url(url, **common)
        )
        return cls(client, **options)

    def _key(self, kind: str, index: int) -> str:
        return f"{self._prefix}:{{ops}}:active:{kind}:{index}"

    def touch(self, table_id: str | None, user_key: str | None) -> None:
        if table_id:
            self._tables.add(table_id)
        if user_key:
            self._users.add(user_key)

    async def sample(self) -> tuple[int, int]:
        now = self._clock()
        current = math.floor(now / self.bucket)
        buckets = range(current - math.ceil(self.window / self.bucket) + 1, current + 1)
        ttl = int(self.window + 2 * self.bucket)
        tables, users = self._tables, self._users
        self._tables, self._users = set(), set()
        pipe = self._r.pipeline(transaction=False)
        for kind, ids in (("tables", tables), ("players", users)):
            if ids:
                key = self._key(kind, current)
                pipe.pfadd(key, *sorted(ids))
                pipe.expire(key, ttl)
        pipe.pfcount(*(self._key("tables", i) for i in buckets))
        pipe.pfcount(*(self._key("players", i) for i in buckets))
        try:
            results = await pipe.execute()
        except Exception:
            # Not counted this time: keep the ids for the next flush.
            self._tables |= tables
            self._users |= users
            raise
        return int(results[-2]), int(results[-1])

    async def close(self) -> None:
        await self._r.aclose()
