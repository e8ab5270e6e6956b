"""The matchmaking queue in one process's memory: local play, tests, and the reference the Redis scripts
are checked against (both run tests/matchmaking/test_queue_contract.py)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from bot.matchmaking.base import MatchQueue
from bot.matchmaking.model import (
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
    Ratings,
    all_pools,
    pool_ratings,
    pool_size,
    pools_for,
)

__all__ = ["MemoryQueue"]


@dataclass(slots=True)
class _Expiring:
    value: str
    until: float


class MemoryQueue(MatchQueue):
    """`MatchQueue` in memory. `clock` is the time source (tests move a fake one)."""

    def __init__(self, config: MatchConfig | None = None, clock: Callable[[], float] = time.time) -> None:
        self.config = config or MatchConfig()
        self._clock = clock
        self._entries: dict[str, Entry] = {}
        self._seats: dict[str, _Expiring] = {}
        self._blocks: dict[str, dict[str, float]] = {}
        self._alive: dict[str, float] = {}
        self._leaves: dict[str, _Expiring] = {}
        self._matches: dict[str, tuple[Match, float]] = {}
        self._pending: dict[str, float] = {}

    def _now(self, now: float | None) -> float:
        return self._clock() if now is None else now

    def _entry(self, key: str) -> Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires <= self._clock():
            del self._entries[key]
            return None
        return entry

    def _seat(self, key: str) -> str | None:
        seat = self._seats.get(key)
        if seat is None or seat.until <= self._clock():
            self._seats.pop(key, None)
            return None
        return seat.value

    def _leave_count(self, key: str) -> int:
        leaves = self._leaves.get(key)
        if leaves is None or leaves.until <= self._clock():
            return 0
        return int(leaves.value)

    async def join(
        self, player: Player, rating: Ratings, options: Options, now: float | None = None
    ) -> JoinResult:
        at = self._now(now)
        table = self._seat(player.key)
        if table is not None:
            return JoinResult(JoinOutcome.SEATED, table_id=table)
        if self._entry(player.key) is not None:
            return JoinResult(JoinOutcome.ALREADY_QUEUED)
        ratings = pool_ratings(rating, options)
        eligible = at + self.config.penalty(self._leave_count(player.key))
        self._entries[player.key] = Entry(
            player,
            next(iter(ratings.values())),
            options,
            at,
            self._clock() + self.config.lifetime(player.key),
            eligible,
            tuple(ratings.items()),
        )
        return JoinResult(JoinOutcome.QUEUED, eligible_at=eligible)

    async def cancel(self, player_key: str) -> CancelResult:
        if self._entry(player_key) is not None:
            del self._entries[player_key]
            return CancelResult(CancelOutcome.CANCELLED)
        table = self._seat(player_key)
        if table is not None:
            return CancelResult(CancelOutcome.MATCHED, table)
        return CancelResult(CancelOutcome.NOT_QUEUED)

    async def status(self, player_key: str, now: float | None = None) -> QueueStatus:
        at = self._now(now)
        entry = self._entry(player_key)
        if entry is None:
            return QueueStatus(queued=False, match_id=self._seat(player_key))
        await self.renew([player_key])
        pools = set(pools_for(entry.options))
        waiting = max(
            # A copy of the keys: `_entry` drops an expired entry as it reads it.
            sum(1 for k in list(self._entries) if self._entry(k) is not None and pool in self._pools_of(k))
            for pool in pools
        )
        waited = at - entry.joined
        return QueueStatus(
            queued=True,
            waited=waited,
            waiting=waiting,
            computers_offered=waited >= self.config.computers_after,
            eligible_at=entry.eligible_at,
        )

    def _pools_of(self, key: str) -> tuple[str, ...]:
        return pools_for(self._entries[key].options)

    async def renew(self, player_keys: Sequence[str]) -> int:
        renewed = 0
        for key in player_keys:
            entry = self._entry(key)
            if entry is not None:
                self._entries[key] = replace(entry, expires=self._clock() + self.config.lifetime(key))
                renewed += 1
        return renewed

    def _blocked(self, a: str, b: str) -> bool:
        now = self._clock()
        return self._blocks.get(a, {}).get(b, 0.0) > now or self._blocks.get(b, {}).get(a, 0.0) > now

    def _is_alive(self, platform: str) -> bool:
        return self._alive.get(platform, 0.0) > self._clock()

    def _form(self, pool: str, chosen: list[Entry], computers: int, at: float) -> Match:
        match_id = f"{uuid.uuid4().hex[:16]}"
        for entry in chosen:
            del self._entries[entry.player.key]
            self._seats[entry.player.key] = _Expiring(match_id, self._clock() + self.config.seat_seconds)
        match = Match(match_id, pool, tuple(chosen), computers, at)
        self._matches[match_id] = (match, self._clock() + self.config.match_record_seconds)
        self._pending[match_id] = at + self.config.build_grace_seconds
        return match

    async def match(self, now: float | None = None) -> list[Match]:
        at = self._now(now)
        config = self.config
        formed: list[Match] = []
        live = [e for k in list(self._entries) if (e := self._entry(k)) is not None]
        waiting_in = {p for e in live for p in pools_for(e.options)}
        pools = [p for p in all_pools() if p in waiting_in]
        for pool in pools:
            size = pool_size(pool)
            # Oldest first; ties by key, as the Redis zset orders them.
            members = sorted(
                (replace(e, rating=e.rating_in(pool)) for e in live if pool in pools_for(e.options)),
                key=lambda e: (e.joined, e.player.key),
            )
            for anchor in members[: config.scan_anchors]:
                if anchor.player.key not in self._entries:
                    continue
                if anchor.eligible_at > at or not self._is_alive(anchor.player.platform):
                    continue
                window = config.window(at - anchor.joined)
                # The nearest on each side, as the Redis script takes them.
                half = -(-config.scan_candidates // 2)
                live_here = [e for e in members if e.player.key in self._entries]
                up = sorted(
                    (e for e in live_here if anchor.rating < e.rating <= anchor.rating + window),
                    key=lambda e: (e.rating, e.player.key),
                )[:half]
                down = sorted(
                    (e for e in live_here if anchor.rating - window <= e.rating <= anchor.rating),
                    key=lambda e: (-e.rating, e.player.key),
                )[: half + 1]  # the anchor itself is among them
                around = [e for e in (*up, *down) if e is not anchor]
                around.sort(key=lambda e: (abs(e.rating - anchor.rating), e.rating, e.player.key))
                chosen = [anchor]
                low = high = anchor.rating
                for candidate in around:
                    if len(chosen) == size:
                        break
                    if candidate is anchor or candidate.eligible_at > at:
                        continue
                    if not self._is_alive(candidate.player.platform):
                        continue
                    if max(high, candidate.rating) - min(low, candidate.rating) > window:
                        continue
                    if any(self._blocked(candidate.player.key, c.player.key) for c in chosen):
                        continue
                    chosen.append(candidate)
                    low, high = min(low, candidate.rating), max(high, candidate.rating)
                if len(chosen) == size:
                    formed.append(self._form(pool, chosen, 0, at))
        return formed

    async def take_with_computers(self, player_key: str, now: float | None = None) -> Match | None:
        at = self._now(now)
        entry = self._entry(player_key)
        if entry is None or at - entry.joined < self.config.computers_after or entry.eligible_at > at:
            return None
        pool = pools_for(entry.options)[0]
        return self._form(pool, [replace(entry, rating=entry.rating_in(pool))], pool_size(pool) - 1, at)

    async def built(self, match_id: str, table_id: str) -> bool:
        self._pending.pop(match_id, None)
        match = await self.get_match(match_id)
        if match is None:
            return False
        for entry in match.players:
            if self._seat(entry.player.key) in (match_id, table_id):
                await self.seat(entry.player.key, table_id)
        return True

    async def unbuilt(self, now: float | None = None, limit: int = 10) -> list[Match]:
        at = self._now(now)
        out: list[Match] = []
        for match_id, due in sorted(self._pending.items(), key=lambda item: (item[1], item[0])):
            if due > at or len(out) == limit:
                break
            match = await self.get_match(match_id)
            if match is None:
                del self._pending[match_id]
                continue
            self._pending[match_id] = at + self.config.build_grace_seconds
            out.append(match)
        return out

    async def get_match(self, match_id: str) -> Match | None:
        record = self._matches.get(match_id)
        if record is None or record[1] <= self._clock():
            return None
        return record[0]

    async def seat(self, player_key: str, table_id: str) -> None:
        self._seats[player_key] = _Expiring(table_id, self._clock() + self.config.seat_seconds)

    async def unseat(self, player_key: str) -> None:
        self._seats.pop(player_key, None)

    async def seated_at(self, player_key: str) -> str | None:
        return self._seat(player_key)

    async def block(self, blocker_key: str, blocked_key: str) -> None:
        if blocker_key == blocked_key:
            raise ValueError("a player cannot block themselves")
        blocks = self._blocks.setdefault(blocker_key, {})
        blocks[blocked_key] = self._clock() + self.config.block_seconds
        until = blocks[blocked_key]  # the whole list lives from its last change, as the Redis set does
        for key in blocks:
            blocks[key] = until

    async def unblock(self, blocker_key: str, blocked_key: str) -> None:
        self._blocks.get(blocker_key, {}).pop(blocked_key, None)

    async def blocked_by(self, player_key: str) -> set[str]:
        now = self._clock()
        return {k for k, until in self._blocks.get(player_key, {}).items() if until > now}

    async def heartbeat(self, platform: str) -> None:
        self._alive[platform] = self._clock() + self.config.heartbeat_seconds

    async def record_leave(self, player_key: str) -> int:
        count = self._leave_count(player_key) + 1
        self._leaves[player_key] = _Expiring(str(count), self._clock() + self.config.leave_memory_seconds)
        return count

    async def close(self) -> None:
        """Nothing to release: the queue is this object."""
