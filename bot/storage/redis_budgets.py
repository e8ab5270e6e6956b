"""Send budgets (a log per bucket and its hold) and hit counters on Redis, each one script."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from bot.storage import redis_scripts as lua
from bot.storage.base import SendBucket
from bot.storage.checks import bucket_list, check_id, check_window
from bot.storage.redis_base import RedisBase, _ms, _num

__all__ = ["RedisBudgets"]


class RedisBudgets(RedisBase):
    """`BudgetStore` on Redis."""

    async def acquire_sends(self, buckets: Sequence[SendBucket], now: float | None = None) -> float:
        checked = bucket_list(buckets)
        keys: list[str] = []
        args: list[Any] = ["" if now is None else _num(now), uuid.uuid4().hex]
        for bucket in checked:
            keys += [self.keys.send_log(bucket.key), self.keys.send_hold(bucket.key)]
            args += [bucket.limit, _num(bucket.window)]
        wait = await self.script(lua.SENDS, keys, args)
        return max(0.0, float(wait))

    async def hold_sends(self, bucket_key: str, seconds: float, now: float | None = None) -> None:
        check_id("bucket key", bucket_key)
        if seconds <= 0:
            return
        args = ["" if now is None else _num(now), _num(seconds)]
        await self.script(lua.HOLD, [self.keys.send_hold(bucket_key)], args)

    # --- request budgets ----------------------------------------------------------------------------

    async def count_hit(self, key: str, window: float) -> tuple[int, float]:
        check_window(key, window)
        count, left_ms = await self.script(lua.HIT, [self.keys.hits(key)], [_ms(window)])
        return int(count), max(0, int(left_ms)) / 1000.0
