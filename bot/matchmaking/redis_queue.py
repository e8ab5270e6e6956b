"""The matchmaking queue on Redis: every process of every platform shares it and may run the matcher.

Every key is tagged `{mm}` (`<prefix>:{mm}:<kind>:<id>`), so each script's keys are in one hash slot and
Redis runs each script whole, one at a time: that is what makes a match happen exactly once and keeps a
cancelled, expired, blocked or unreachable player out of it, with no lock held across round trips. On a
Redis Cluster the whole queue lives on one node. The load allows it: a join, a cancel, a status or a
renewal is one short script, a match call a few hundred commands at most (`MatchConfig.scan_*` bound
it), and players arrive at most a few hundred per second, far below what one Redis core serves (the
bench measures this). Scripts name other `{mm}` keys of the same slot from a head passed in ARGV, which
Redis Cluster serves because the slot is the declared key's (documented in docs/SERVICE.md).

Round trips per queued player (bench/matchmaking.py counts them): join 1, cancel 1, status 1, renewals
batched per process (1 per call for all its waiting players), matching amortised across every player
of a call.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence

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
)
from bot.storage import RedisStore
from bot.storage.redis_scripts import Script

__all__ = ["RedisQueue", "all_pools"]

_JOIN = Script.named("mm_join")
_CANCEL = Script.named("mm_cancel")
_STATUS = Script.named("mm_status")
_RENEW = Script.named("mm_renew")
_MATCH = Script.named("mm_match")
_TAKE = Script.named("mm_take")
_LEAVE = Script.named("mm_leave")
_BLOCK = Script.named("mm_block")
_BUILT = Script.named("mm_built")
_UNBUILT = Script.named("mm_unbuilt")
_RENEW_BATCH = 500


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _num(value: float) -> str:
    return repr(float(value))


class RedisQueue(MatchQueue):
    """`MatchQueue` on Redis, through a `RedisStore`'s connections: its reconnects, its error mapping
    (`StorageUnavailable`), its cluster handling and its round-trip counter serve the queue too."""

    def __init__(self, store: RedisStore, *, config: MatchConfig | None = None) -> None:
        self._store = store
        self.config = config or MatchConfig()
        self.head = f"{store.keys.prefix}:{{mm}}:"
        self._pools = all_pools()

    @classmethod
    def from_url(
        cls, url: str, *, prefix: str = "thousand", cluster: bool = False, config: MatchConfig | None = None
    ) -> RedisQueue:
        """A queue with its own store (connections configured as `RedisStore.from_url` does)."""
        return cls(RedisStore.from_url(url, prefix=prefix, cluster=cluster), config=config)

    @property
    def round_trips(self) -> int:
        return self._store.round_trips

    def key(self, kind: str, ident: str) -> str:
        """`<prefix>:{mm}:<kind>:<ident>`; kinds: e, pool, wait, seat, block, alive, leaves, match
        (and `<prefix>:{mm}:pending`, the matches not yet confirmed built)."""
        return f"{self.head}{kind}:{ident}"

    async def join(
        self, player: Player, rating: Ratings, options: Options, now: float | None = None
    ) -> JoinResult:
        at = time.time() if now is None else now
        c = self.config
        ratings = pool_ratings(rating, options)
        first = next(iter(ratings.values()))
        entry = Entry(player, first, options, at, 0.0, 0.0)
        reply = await self._store.script(
            _JOIN,
            [self.key("e", player.key)],
            [
                self.head,
                player.key,
                _num(at),
                entry.encode(),
                _num(first),
                _ms(c.lifetime(player.key)),
                player.platform,
                c.leave_free,
                _num(c.leave_penalty_seconds),
                _num(c.leave_penalty_max),
                *(part for pool, value in ratings.items() for part in (pool, _num(value))),
            ],
        )
        if reply[0] == "seated":
            return JoinResult(JoinOutcome.SEATED, table_id=reply[1])
        if reply[0] == "already":
            return JoinResult(JoinOutcome.ALREADY_QUEUED)
        return JoinResult(JoinOutcome.QUEUED, eligible_at=float(reply[1]))

    async def cancel(self, player_key: str) -> CancelResult:
        reply = await self._store.script(_CANCEL, [self.key("e", player_key)], [self.head, player_key])
        if reply[0] == "cancelled":
            return CancelResult(CancelOutcome.CANCELLED)
        if reply[0] == "matched":
            return CancelResult(CancelOutcome.MATCHED, reply[1])
        return CancelResult(CancelOutcome.NOT_QUEUED)

    async def status(self, player_key: str, now: float | None = None) -> QueueStatus:
        at = time.time() if now is None else now
        lifetime = _ms(self.config.lifetime(player_key))
        reply = await self._store.script(
            _STATUS, [self.key("e", player_key)], [self.head, player_key, lifetime]
        )
        if reply[0] == "queued":
            waited = at - float(reply[1])
            return QueueStatus(
                queued=True,
                waited=waited,
                waiting=int(reply[3]),
                computers_offered=waited >= self.config.computers_after,
                eligible_at=float(reply[2]),
            )
        return QueueStatus(queued=False, match_id=reply[1] if reply[0] == "matched" else None)

    async def renew(self, player_keys: Sequence[str]) -> int:
        renewed = 0
        for start in range(0, len(player_keys), _RENEW_BATCH):
            batch = player_keys[start : start + _RENEW_BATCH]
            args = [self.head, _ms(self.config.entry_seconds), *batch]
            renewed += int(await self._store.script(_RENEW, [self.key("alive", "-")], args))
        return renewed

    async def match(self, now: float | None = None) -> list[Match]:
        at = time.time() if now is None else now
        c = self.config
        records = await self._store.script(
            _MATCH,
            [self.key("match", "-")],
            [
                self.head,
                _num(at),
                uuid.uuid4().hex[:16],
                _num(c.spread_base),
                _num(c.spread_per_second),
                _num(c.spread_max),
                c.scan_anchors,
                c.scan_candidates,
                _ms(c.seat_seconds),
                _ms(c.match_record_seconds),
                _num(c.build_grace_seconds),
                *self._pools,
            ],
        )
        return [_decode_match(r) for r in records]

    async def take_with_computers(self, player_key: str, now: float | None = None) -> Match | None:
        at = time.time() if now is None else now
        c = self.config
        record = await self._store.script(
            _TAKE,
            [self.key("e", player_key)],
            [
                self.head,
                player_key,
                _num(at),
                _num(c.computers_after),
                uuid.uuid4().hex[:16],
                _ms(c.seat_seconds),
                _ms(c.match_record_seconds),
                _num(c.build_grace_seconds),
            ],
        )
        return _decode_match(record) if record else None

    async def built(self, match_id: str, table_id: str) -> bool:
        args = [self.head, match_id, table_id, _ms(self.config.seat_seconds)]
        return int(await self._store.script(_BUILT, [self.key("match", match_id)], args)) >= 0

    async def unbuilt(self, now: float | None = None, limit: int = 10) -> list[Match]:
        at = time.time() if now is None else now
        args = [self.head, _num(at), _num(self.config.build_grace_seconds), limit]
        records = await self._store.script(_UNBUILT, [f"{self.head}pending"], args)
        return [_decode_match(r) for r in records]

    async def get_match(self, match_id: str) -> Match | None:
        record = await self._store.call("GET", self.key("match", match_id))
        return _decode_match(record) if record else None

    async def seat(self, player_key: str, table_id: str) -> None:
        await self._store.call(
            "SET", self.key("seat", player_key), table_id, "PX", _ms(self.config.seat_seconds)
        )

    async def unseat(self, player_key: str) -> None:
        await self._store.call("DEL", self.key("seat", player_key))

    async def seated_at(self, player_key: str) -> str | None:
        value: str | None = await self._store.call("GET", self.key("seat", player_key))
        return value

    async def block(self, blocker_key: str, blocked_key: str) -> None:
        if blocker_key == blocked_key:
            raise ValueError("a player cannot block themselves")
        args = ["add", blocked_key, _ms(self.config.block_seconds)]
        await self._store.script(_BLOCK, [self.key("block", blocker_key)], args)

    async def unblock(self, blocker_key: str, blocked_key: str) -> None:
        await self._store.script(_BLOCK, [self.key("block", blocker_key)], ["del", blocked_key, 0])

    async def blocked_by(self, player_key: str) -> set[str]:
        members = await self._store.call("SMEMBERS", self.key("block", player_key))
        return set(members)

    async def heartbeat(self, platform: str) -> None:
        await self._store.call(
            "SET", self.key("alive", platform), _num(time.time()), "PX", _ms(self.config.heartbeat_seconds)
        )

    async def record_leave(self, player_key: str) -> int:
        args = [_ms(self.config.leave_memory_seconds)]
        return int(await self._store.script(_LEAVE, [self.key("leaves", player_key)], args))

    async def close(self) -> None:
        await self._store.close()


def _decode_match(record: str) -> Match:
    data = json.loads(record)
    entries = []
    for pk, encoded, rating, joined, eligible in data["pl"]:
        player, options = Entry.decode_parts(encoded)
        assert player.key == pk
        entries.append(Entry(player, float(rating), options, float(joined), 0.0, float(eligible)))
    return Match(str(data["id"]), str(data["pool"]), tuple(entries), int(data["c"]), float(data["f"]))
