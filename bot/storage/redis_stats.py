"""Statistics (one hash per scope) and rating boards (a sorted set and its last-rated times) on Redis."""

from __future__ import annotations

from collections.abc import Mapping

from bot.storage import redis_scripts as lua
from bot.storage.checks import check_id
from bot.storage.redis_base import RedisBase, _ms, _num

__all__ = ["RedisStats"]


class RedisStats(RedisBase):
    """`StatsStore` on Redis."""

    async def add_stats(self, scope_key: str, fields: Mapping[str, float]) -> None:
        check_id("stats scope", scope_key)
        if not fields:
            return
        ttl = self._retention.stats_seconds
        args: list[str] = ["" if ttl is None else str(_ms(ttl))]
        for name, value in fields.items():
            args += [name, _num(value)]
        await self.script(lua.STATS, [self.keys.stats(scope_key)], args)

    async def get_stats(self, scope_key: str) -> dict[str, float]:
        check_id("stats scope", scope_key)
        raw: Mapping[str, str] = await self.call("HGETALL", self.keys.stats(scope_key))
        return {name: float(value) for name, value in raw.items()}

    async def set_rating(self, board_key: str, member: str, rating: float) -> None:
        check_id("board key", board_key)
        ttl, cap = self._retention.stats_seconds, self._retention.board_max
        keys = [self.keys.board(board_key), self.keys.board_seen(board_key)]
        args = [member, _num(rating), "" if ttl is None else _ms(ttl), "" if cap is None else cap]
        await self.script(lua.RATING, keys, args)

    async def get_rating(self, board_key: str, member: str) -> float | None:
        check_id("board key", board_key)
        score = await self.call("ZSCORE", self.keys.board(board_key), member)
        return None if score is None else float(score)

    async def top(self, board_key: str, n: int) -> list[tuple[str, float]]:
        check_id("board key", board_key)
        if n <= 0:
            return []
        flat = await self.call("ZREVRANGE", self.keys.board(board_key), 0, n - 1, "WITHSCORES")
        if flat and isinstance(flat[0], list | tuple):
            return [(m, float(s)) for m, s in flat]
        return [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]
