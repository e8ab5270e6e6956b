"""The storage contract shared by the Redis store (production) and the memory store (local play, tests).

Storage knows nothing about the game. It keeps, per table, one versioned document (a JSON string written
by the service) with a time to live and an event stream, plus indexes (chat -> table, user -> tables),
turn deadlines, statistics, ratings and send budgets. Every method that changes a table is a
compare-and-set on the table's version, so several bot processes sharing one store can never lose or
double an action: the loser of a race gets `VersionConflict`, reloads and decides again.

Times (`now`, deadline `when`, send budgets) are POSIX seconds as floats. When `now` is omitted the store
uses its own clock: the server's `TIME` for Redis (one clock for all processes), the injected clock for
the memory store.

The contract is composed of one part per concern, each in its own module: `TableStore` (tables.py: the
documents, streams and indexes), `DeadlineStore` (deadlines.py), `StatsStore` (stats.py: statistics and
ratings), `RefStore` (refs.py: message references), `BudgetStore` (budgets.py: send budgets and hits) and
`HandOverStore` (handover.py); `Store` joins them and adds the plumbing. The argument checks every
implementation runs are in checks.py, the errors in errors.py.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from bot.storage.budgets import BudgetStore, SendBucket
from bot.storage.deadlines import Deadline, DeadlineStore
from bot.storage.errors import StorageError, StorageUnavailable, StorageUncertain, VersionConflict
from bot.storage.handover import HANDOVER_TTL, HandedOver, HandOverStore
from bot.storage.refs import RefStore
from bot.storage.stats import StatsStore
from bot.storage.tables import DEFAULT_STREAM_MAXLEN, StoredTable, TableStore

__all__ = [
    "DEFAULT_RETENTION",
    "DEFAULT_STREAM_MAXLEN",
    "HANDOVER_TTL",
    "Deadline",
    "HandedOver",
    "Retention",
    "SendBucket",
    "StorageError",
    "StorageUnavailable",
    "StorageUncertain",
    "Store",
    "StoredTable",
    "VersionConflict",
]


@dataclass(frozen=True, slots=True)
class Retention:
    """How long what grows with users lives (tables carry their own TTL in each `save`).

    - `user_index_seconds`: a user's table index lives at least this long after they join a table, and
      is extended whenever a table listing them would outlive it (then to twice that table's TTL, or
      this, whichever is longer). So it never expires under a live table, and goes within this time
      once every table listing the user is gone. Dead table ids are pruned whenever it is read.
    - `stats_seconds`: a statistics hash lives this long after its last addition, a rating board this
      long after its last rating, and a member not rated for this long leaves the board (None: forever).
    - `board_max`: members kept per rating board; past it, the least recently rated go (None: no cap).
    """

    user_index_seconds: float = 14 * 24 * 3600.0
    stats_seconds: float | None = 365 * 24 * 3600.0
    board_max: int | None = 100_000

    def __post_init__(self) -> None:
        if self.user_index_seconds <= 0:
            raise ValueError("user_index_seconds must be positive")
        if self.stats_seconds is not None and self.stats_seconds <= 0:
            raise ValueError("stats_seconds must be positive (or None)")
        if self.board_max is not None and self.board_max < 1:
            raise ValueError("board_max must be at least 1 (or None)")


DEFAULT_RETENTION = Retention()


class Store(TableStore, DeadlineStore, StatsStore, RefStore, BudgetStore, HandOverStore):
    """What the service may ask of storage. Implementations: `RedisStore`, `MemoryStore`.

    Round trips (Redis, common case): `load` 1, `save` 1 (standalone Redis: 1, or 2 when the table's
    new expiry passes its users' index horizon, about once per `Retention.user_index_seconds / 2` of a
    long game; cluster mode: 1 when no user index changes, the chat key tags the same slot as the table
    id and the deadline is not earlier than the one the index holds for the table, else 2; with
    `wait_replicas` the WAIT rides in the save's own request, so no more), `claim_due` 1 when nothing
    is due (2 when something is, 3 on a cluster), `set_deadline` 1 (cluster: 2 when the new deadline
    is earlier than the indexed one), `acquire_sends` 1, `delete` 1 (cluster: up to 3),
    `tables_for_user` 2, the rest 1.
    """

    # --- plumbing -----------------------------------------------------------------------------------

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise `StorageUnavailable` unless the store answers."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections. The store must not be used afterwards."""

    @property
    @abc.abstractmethod
    def round_trips(self) -> int:
        """Requests sent to the server so far (0 forever for the memory store), for benchmarks."""
