"""Where tables, indexes, deadlines, statistics and send budgets live: Redis in production, memory for
local play. See `base.Store` for the contract and `keys` for the Redis key layout."""

from bot.storage.base import (
    DEFAULT_RETENTION,
    DEFAULT_STREAM_MAXLEN,
    HANDOVER_TTL,
    Deadline,
    HandedOver,
    Retention,
    SendBucket,
    StorageError,
    StorageUnavailable,
    StorageUncertain,
    Store,
    StoredTable,
    VersionConflict,
)
from bot.storage.counting import RoundTripCounter
from bot.storage.keys import KeyLayout
from bot.storage.memory import MemoryStore
from bot.storage.redis_store import RedisStore

__all__ = [
    "DEFAULT_RETENTION",
    "DEFAULT_STREAM_MAXLEN",
    "HANDOVER_TTL",
    "Deadline",
    "HandedOver",
    "KeyLayout",
    "MemoryStore",
    "RedisStore",
    "Retention",
    "RoundTripCounter",
    "SendBucket",
    "StorageError",
    "StorageUnavailable",
    "StorageUncertain",
    "Store",
    "StoredTable",
    "VersionConflict",
]
