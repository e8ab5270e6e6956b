"""Handed-over messages on Redis: a hash per table and platform, an index per platform."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from bot.storage import redis_scripts as lua
from bot.storage.base import HANDOVER_TTL, HandedOver
from bot.storage.checks import check_handover, check_id
from bot.storage.redis_base import RedisBase, _ms, _num

__all__ = ["RedisHandOver"]


class RedisHandOver(RedisBase):
    """`HandOverStore` on Redis."""

    @property
    def keeps_after_exit(self) -> bool:
        return True

    async def hand_over(self, messages: Sequence[HandedOver], *, ttl_seconds: float = HANDOVER_TTL) -> int:
        """Per table: one script in the table's slot keeps the messages (newest version per name), then
        the platform's index learns of the table. In that order, so a taker (which leaves the index
        first, then empties the table's hash) never misses a message: one handed over while it takes
        is either taken with the rest or indexed again after."""
        check_handover(messages, ttl_seconds)
        by_table: dict[tuple[str, str], list[HandedOver]] = {}
        for message in messages:
            by_table.setdefault((message.platform, message.table_id), []).append(message)
        ttl = _ms(ttl_seconds)
        kept = 0
        for (platform, table_id), group in by_table.items():
            args: list[Any] = [ttl]
            for message in group:
                version = "" if message.version is None else str(message.version)
                args += [message.slot_name, version, message.encode()]
            kept += int(await self.script(lua.HANDOVER, [self.keys.handover(table_id, platform)], args))
            # Scored by when (for the order of taking); an entry whose hash expired is dropped by the
            # next taker, which finds nothing there.
            index = self.keys.handover_index(platform)
            await self.pipeline([["ZADD", index, _num(time.time()), table_id], ["PEXPIRE", index, ttl]])
        return kept

    async def take_handed_over(self, platform: str, limit: int = 100) -> list[HandedOver]:
        check_id("platform", platform)
        if limit <= 0:
            return []
        index = self.keys.handover_index(platform)
        tables = await self.call("ZRANGE", index, 0, limit - 1)  # one round trip when there is nothing
        if not tables:
            return []
        taken: list[HandedOver] = []
        for table_id in tables:
            # Out of the index first, then the messages: a message handed over meanwhile indexes the
            # table again (see `hand_over`).
            await self.call("ZREM", index, table_id)
            flat = await self.script(lua.TAKE, [self.keys.handover(table_id, platform)], [])
            for i in range(1, len(flat), 2):
                _, _, value = flat[i].partition("\n")
                message = HandedOver.decode(value)
                if message is not None:
                    taken.append(message)
        return sorted(taken, key=lambda m: (m.order, m.audience))
