"""The Redis store: what several bot processes share in production.

Every change that must be atomic is one Lua script (EVALSHA, falling back to EVAL once after NOSCRIPT,
e.g. after a Redis restart), so a save costs one round trip and no lock or WATCH is ever held while
the service talks to a chat platform.

The store is one class joined from a part per concern, each in its module over `redis_base.RedisBase`
(the client, requests, scripts, pipelines): `redis_tables` (documents, streams, indexes, moves; the
replicas' acknowledgement of a save in `redis_wait`), `redis_deadlines` (turn deadlines and their
sharded index), `redis_stats` (statistics and ratings), `redis_refs` (message references),
`redis_budgets` (send budgets and hits) and `redis_handover` (handed-over messages); the scripts are
`redis_scripts`, the keys `keys.KeyLayout`. Each module's docstring says how its part keeps its keys.
"""

from __future__ import annotations

from bot.storage.base import Store
from bot.storage.redis_budgets import RedisBudgets
from bot.storage.redis_deadlines import RedisDeadlines
from bot.storage.redis_handover import RedisHandOver
from bot.storage.redis_refs import RedisRefs
from bot.storage.redis_stats import RedisStats
from bot.storage.redis_tables import RedisTables

__all__ = ["RedisStore"]


class RedisStore(RedisTables, RedisDeadlines, RedisStats, RedisRefs, RedisBudgets, RedisHandOver, Store):
    """`Store` on Redis. Build it with `RedisStore.from_url`, which configures reconnects and counting
    (`RedisBase.__init__` says what each argument means)."""
