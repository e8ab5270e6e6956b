"""Nothing the matchmaker or the ladder writes lives for ever: after joins, renewals, a match, a
take-with-computers, a cancel, blocks, leaves, heartbeats and rated games, every key under the prefix has
a TTL, each kind is in the key inventory of docs/OPERATIONS.md, and with short lifetimes nothing is left
once they pass."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import redis.asyncio as aioredis

from bot.matchmaking import MatchConfig, Options, Player, RedisQueue
from bot.matchmaking.ladder_store import LadderConfig, RedisLadder
from bot.storage import RedisStore

ROOT = Path(__file__).resolve().parents[2]


def kind_of(key: str) -> str:
    return key.split("}:", 1)[1].split(":", 1)[0]


async def test_every_key_has_a_lifetime_is_listed_and_goes(redis_url: str, redis_prefix: str) -> None:
    short = MatchConfig(
        entry_seconds=1.0,
        seat_seconds=1.0,
        block_seconds=1.0,
        heartbeat_seconds=1.0,
        leave_memory_seconds=1.0,
        match_record_seconds=1.0,
        computers_after=0.0,
    )
    queue = RedisQueue.from_url(redis_url, prefix=redis_prefix, config=short)
    ladder = RedisLadder(
        RedisStore.from_url(redis_url, prefix=redis_prefix),
        LadderConfig(rating_seconds=1.0, marker_seconds=1.0),
    )
    raw = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        now = time.time()
        await queue.heartbeat("tg")
        await queue.block("tg:1", "tg:9")
        await queue.record_leave("tg:8")
        for n in range(8):
            await queue.join(Player("tg", str(n), f"P{n}"), 1500, Options("any", 3, "normal"), now)
        await queue.renew(["tg:0", "tg:5"])
        assert len(await queue.match(now)) == 2
        await queue.cancel("tg:6")
        assert await queue.take_with_computers("tg:7", now) is not None
        await queue.join(Player("dc", "1", "D"), 1500, Options("russian", 4, "slow"), now)  # stays
        for game in range(15):  # mixed results, enough for established ratings: the top exists
            scores = {f"tg:{p}": (game + p) % 3 * 50 for p in (1, 2, 3)}
            await ladder.apply_game("polish", f"g{game}", scores, {})
        keys = [k async for k in raw.scan_iter(match=f"{redis_prefix}:*")]
        kinds = {kind_of(k) for k in keys}
        assert kinds == {
            "e",
            "pool",
            "wait",
            "seat",
            "match",
            "pending",
            "block",
            "alive",
            "leaves",
            "r",
            "h",
            "top",
            "game",
        }
        assert all([await raw.pttl(k) > 0 for k in keys]), [k for k in keys]
        inventory = (ROOT / "docs" / "OPERATIONS.md").read_text()
        inventory = inventory[inventory.index("### Keys and their lifetimes") :]
        for kind in kinds:
            assert re.search(rf"`[^`]*\}}:{kind}\b[^`]*`", inventory), kind
        await asyncio.sleep(1.2)
        assert [k async for k in raw.scan_iter(match=f"{redis_prefix}:*")] == []
    finally:
        await raw.aclose()
        await queue.close()
        await ladder.close()
