"""The matchmaking queue's contract, kept by `MemoryQueue` (one process, local play and tests) and
`RedisQueue` (production: every process of every platform shares it and may run the matcher).

Guarantees both keep (tests/matchmaking/test_queue_contract.py checks them on both):
- a player is in the queue at most once, and never while seated at a public table (`seat`);
- `match` forms each table exactly once: a matched player leaves the queue in the same atomic step
  that seats them, so no player is ever at two tables, even with every process matching at once;
- a cancelled or expired entry is never matched; `cancel` after a match answers MATCHED with its id;
- two players where either blocked the other are never at one table;
- a player whose platform has no live process (no fresh `heartbeat`) is not matched;
- a player with recent leaves becomes eligible later (`MatchConfig.penalty`).

Times are POSIX seconds; `now=None` means the current time (tests pass their own).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from bot.matchmaking.model import (
    CancelResult,
    JoinResult,
    Match,
    MatchConfig,
    Options,
    Player,
    QueueStatus,
    Ratings,
)

__all__ = ["MatchQueue"]


class MatchQueue(abc.ABC):
    """A queue of players wanting a public game, and the matcher forming tables from it."""

    config: MatchConfig

    @abc.abstractmethod
    async def join(
        self, player: Player, rating: Ratings, options: Options, now: float | None = None
    ) -> JoinResult:
        """Queue the player (QUEUED), or say why not: ALREADY_QUEUED, SEATED (with the table).
        `rating`: the player's ladder rating, one per preset (`{"polish": 1612.0, ...}`, required for
        "any") or one number for all. ValueError for a mapping missing a preset the options allow."""

    @abc.abstractmethod
    async def cancel(self, player_key: str) -> CancelResult:
        """Leave the queue at any moment; MATCHED (and the match id) if a match was formed first."""

    @abc.abstractmethod
    async def status(self, player_key: str, now: float | None = None) -> QueueStatus:
        """How many wait in the player's pool and for how long; renews the entry (the player is there)."""

    @abc.abstractmethod
    async def renew(self, player_keys: Sequence[str]) -> int:
        """Keep these waiting entries alive (one call for all of a process's waiting players); returns
        how many were still queued."""

    @abc.abstractmethod
    async def match(self, now: float | None = None) -> list[Match]:
        """Form the tables that can be formed now. Safe to call from every process at once: each table
        is returned to exactly one caller, which builds it and confirms with `built` (if it dies first,
        `unbuilt` hands the match to another process after `config.build_grace_seconds`)."""

    @abc.abstractmethod
    async def take_with_computers(self, player_key: str, now: float | None = None) -> Match | None:
        """After `config.computers_after` seconds of waiting: a match of this player alone, computers in
        the other seats. None if the player is not queued (any more), or has not waited long enough."""

    @abc.abstractmethod
    async def built(self, match_id: str, table_id: str) -> bool:
        """The match's table exists: seat its players at `table_id` (one step) and stop offering the
        match to `unbuilt`. False if the match record expired. Players unseated meanwhile stay unseated."""

    @abc.abstractmethod
    async def unbuilt(self, now: float | None = None, limit: int = 10) -> list[Match]:
        """Matches not confirmed `built` within `config.build_grace_seconds` of forming (or of their last
        hand-out here), leased to this caller for another grace. Call it periodically from every process;
        building must be idempotent per match id (derive the table id from it), as two processes may
        build one match when the first is slow rather than dead."""

    @abc.abstractmethod
    async def get_match(self, match_id: str) -> Match | None:
        """A formed match, while its record lives (`config.match_record_seconds`)."""

    @abc.abstractmethod
    async def seat(self, player_key: str, table_id: str) -> None:
        """Record that the player sits at a public table (refuses `join` until `unseat`/expiry)."""

    @abc.abstractmethod
    async def unseat(self, player_key: str) -> None:
        """The player's public table is over (or they left it): they may queue again."""

    @abc.abstractmethod
    async def seated_at(self, player_key: str) -> str | None:
        """The match or table id the player sits at, if any."""

    @abc.abstractmethod
    async def block(self, blocker_key: str, blocked_key: str) -> None:
        """Never seat these two together again (kept `config.block_seconds` after the last block)."""

    @abc.abstractmethod
    async def unblock(self, blocker_key: str, blocked_key: str) -> None: ...

    @abc.abstractmethod
    async def blocked_by(self, player_key: str) -> set[str]: ...

    @abc.abstractmethod
    async def heartbeat(self, platform: str) -> None:
        """A live process of `platform` says so; call every `config.heartbeat_seconds / 3`."""

    @abc.abstractmethod
    async def record_leave(self, player_key: str) -> int:
        """The player left a started public game; returns their recent leaves."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections (nothing for memory)."""
