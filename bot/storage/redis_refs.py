"""Platform message references on Redis: one hash per scope."""

from __future__ import annotations

from collections.abc import Mapping

from bot.storage import redis_scripts as lua
from bot.storage.checks import check_id
from bot.storage.redis_base import RedisBase

__all__ = ["RedisRefs"]


class RedisRefs(RedisBase):
    """`RefStore` on Redis."""

    async def get_refs(self, scope_key: str) -> dict[str, str]:
        check_id("refs scope", scope_key)
        raw: Mapping[str, str] = await self.call("HGETALL", self.keys.refs(scope_key))
        return dict(raw)

    async def set_ref(self, scope_key: str, name: str, value: str, *, ttl_seconds: float) -> str | None:
        check_id("refs scope", scope_key)
        key = self.keys.refs(scope_key)
        previous = await self.script(lua.SET_REF, [key], [name, value, max(1, int(ttl_seconds * 1000))])
        return previous if isinstance(previous, str) else None

    async def delete_ref(self, scope_key: str, name: str) -> None:
        check_id("refs scope", scope_key)
        await self.call("HDEL", self.keys.refs(scope_key), name)
