"""Public games: a queue of players wanting one, and the matcher forming tables from it (issue 20).

`MatchQueue` (base) is the contract; `MemoryQueue` keeps it in one process, `RedisQueue` across every
process of every platform. A table builder calls `match()` periodically (any process may), builds the
public table of each returned `Match`, then `seat`s its players at the table id. See docs/SERVICE.md,
"Public tables: queue and ladder".
"""

from bot.matchmaking.base import MatchQueue
from bot.matchmaking.memory import MemoryQueue
from bot.matchmaking.model import (
    ANY_PRESET,
    PACES,
    CancelOutcome,
    CancelResult,
    Entry,
    JoinOutcome,
    JoinResult,
    Match,
    MatchConfig,
    Options,
    Player,
    QueueStatus,
    all_pools,
    pools_for,
)
from bot.matchmaking.redis_queue import RedisQueue

__all__ = [
    "ANY_PRESET",
    "PACES",
    "CancelOutcome",
    "CancelResult",
    "Entry",
    "JoinOutcome",
    "JoinResult",
    "Match",
    "MatchConfig",
    "MatchQueue",
    "MemoryQueue",
    "Options",
    "Player",
    "QueueStatus",
    "RedisQueue",
    "all_pools",
    "pools_for",
]
