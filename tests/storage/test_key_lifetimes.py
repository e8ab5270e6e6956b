"""Nothing in Redis grows with games or users for ever: the real service plays real games on a real
redis-server with lifetimes of about a second, then every key it (and the adapters' calls) left has a TTL,
each kind is in the key inventory of docs/OPERATIONS.md, and once the lifetimes pass nothing is left."""

from __future__ import annotations

import asyncio
import random
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bot"))  # botkit: the service's test kit

from botkit import Clock, Harness, errors, make_user, quiet_settings

from bot.handlers import Handlers
from bot.model import ChatRef
from bot.ops.runtime import retention_of
from bot.service import Service
from bot.settings import Settings
from bot.storage import MemoryStore, RedisStore, SendBucket

ROOT = Path(__file__).resolve().parents[2]
ALA, BARTEK, CELINA = (make_user(i, admin=True) for i in range(3))
# The global keys: one each per deployment, emptied (so gone) when nothing is due.
GLOBAL_KINDS = {"due", "token"}


def short_lived() -> Settings:
    # Long enough that a slow machine still plays a game within them (a table must not expire between
    # two moves), short enough that the test waits a few seconds.
    return quiet_settings(
        lobby_ttl=2.0,
        game_ttl=2.0,
        finished_ttl=0.5,
        settings_ttl=2.0,
        stats_ttl=2.0,
        lobby_idle_seconds=0.5,
    )


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


def kind_of(key: str) -> str:
    """`thousand:{tag}:kind` (or `...:{sends}:log:<bucket>`): the kind."""
    return key.split("}:", 1)[1].split(":", 1)[0]


async def lifetimes(raw: aioredis.Redis, prefix: str) -> dict[str, int]:
    """Every key under the prefix and its PTTL (-1: no expiry; -2: expired since the scan saw it)."""
    keys = [k async for k in raw.scan_iter(match=f"{prefix}:*", count=500)]
    return {k: int(await raw.pttl(k)) for k in keys}


async def play_to_the_end(h: Harness, users: dict[int, object]) -> None:
    rng = random.Random(5)
    for _ in range(3000):
        _, doc = await h.doc()
        assert doc is not None
        if doc.status == "finished":
            return
        assert await h.play_turn(rng, users, sensible=True)  # type: ignore[arg-type]
    raise AssertionError("the game did not end")


async def test_after_games_expire_nothing_is_left_and_nothing_lives_without_a_ttl(
    redis_url: str, redis_prefix: str, raw: aioredis.Redis
) -> None:
    settings = short_lived()
    store = RedisStore.from_url(redis_url, prefix=redis_prefix, retention=retention_of(settings))
    service = Service(store, settings, handlers=Handlers)
    try:
        for n in range(2):
            chat = ChatRef("t", f"-{700 + n}", f"Group {n}")
            h = Harness(service, store, Clock(), chat=chat)
            assert not errors(await h.text(ALA, "/set barrel off"))
            assert not errors(await h.text(ALA, "/set target 100"))
            await h.open_table([ALA, BARTEK], computers=1)
            await play_to_the_end(h, {0: ALA, 1: BARTEK})
            assert await store.get_stats(f"user:{ALA.key}")  # statistics and ratings were written
            assert await store.top("rating", 5)
        # A lobby nobody starts, a language preference, and what the adapters keep.
        lobby = Harness(service, store, Clock(), chat=ChatRef("t", "-799", "Idle"))
        assert not errors(await lobby.text(CELINA, "/new"))
        assert not errors(await lobby.text(ALA, "/join"))
        dm = ChatRef("t", CELINA.user_id, "", private=True)
        assert not errors(await lobby.text(CELINA, "/lang pl", chat=dm))
        await store.set_ref("tg:-700", "table:1", "5:3", ttl_seconds=0.5)
        assert (
            await store.acquire_sends([SendBucket("tg:chat:-700", 20, 1.0), SendBucket("all", 30, 1.0)]) == 0
        )
        await store.hold_sends("tg:chat:-701", 0.5)

        alive = await lifetimes(raw, redis_prefix)
        kinds = {kind_of(k) for k in alive}
        assert {
            "table",
            "stream",
            "chat",
            "user",
            "stats",
            "board",
            "seen",
            "refs",
            "log",
            "hold",
        } <= kinds, kinds
        forever = sorted(k for k, ttl in alive.items() if ttl == -1 and kind_of(k) not in GLOBAL_KINDS)
        assert forever == [], forever
        # Each kind is in the key inventory of the operations guide.
        guide = (ROOT / "docs" / "OPERATIONS.md").read_text()
        inventory = guide[guide.index("### Keys and their lifetimes") :]
        for kind in kinds:
            assert re.search(rf"`[^`]*\}}:{kind}\b[^`]*`", inventory), kind

        # Past every lifetime (the longest: a user index, 2 x GAME_TTL after its last extension), and
        # after the timer loop fired what was due, nothing is left.
        await asyncio.sleep(2 * settings.game_ttl + 0.3)
        await service.tick()
        assert [k async for k in raw.scan_iter(match=f"{redis_prefix}:*")] == []
    finally:
        await service.close()
        await store.close()


async def test_the_memory_store_lets_go_of_everything_expired_too() -> None:
    clock = Clock()
    settings = short_lived()
    store = MemoryStore(clock=clock, retention=retention_of(settings))
    service = Service(store, settings, handlers=Handlers, clock=clock)
    try:
        h = Harness(service, store, clock, chat=ChatRef("t", "-1", "Group"))
        assert not errors(await h.text(ALA, "/set barrel off"))
        assert not errors(await h.text(ALA, "/set target 100"))
        await h.open_table([ALA, BARTEK], computers=1)
        await play_to_the_end(h, {0: ALA, 1: BARTEK})
        lobby = Harness(service, store, clock, chat=ChatRef("t", "-2", "Idle"))
        assert not errors(await lobby.text(CELINA, "/new"))
        await store.set_ref("t:-1", "table:1", "1", ttl_seconds=1.0)
        await store.acquire_sends([SendBucket("c", 5, 1.0)])
        held = [store._tables, store._users, store._stats, store._boards, store._refs, store._sends]
        assert all(held)
        clock.advance(120.0)
        await service.tick()  # closes the idle lobby (kept FINISHED_TTL more)
        clock.advance(120.0)
        await store.add_stats("probe", {"n": 1})  # any write sweeps
        assert [len(d) for d in held] == [0, 0, 1, 0, 0, 0]
    finally:
        await service.close()


@pytest.mark.parametrize("split", [False, True], ids=["atomic", "cluster-safe"])
async def test_a_moved_table_keeps_its_players_indexes_alive(
    redis_url: str, redis_prefix: str, raw: aioredis.Redis, split: bool
) -> None:
    from bot.storage import Retention

    store = RedisStore.from_url(
        redis_url, prefix=redis_prefix, cluster_safe=split, retention=Retention(user_index_seconds=0.3)
    )
    old, new, users = "tg:-400", "tg:-100400", ["tg:1", "tg:2"]
    try:
        version = await store.save(old, 0, "lobby", ttl_seconds=0.2, chat_key=old, users_added=users)
        await store.move_table(
            old, new, version, "moved", ttl_seconds=2.0, chat_keys=(old, new), user_keys=users
        )
        for user in users:
            assert await raw.pttl(store.keys.user(user)) > 1500  # at least the moved table's TTL
        # Its next save lists the same players and extends their indexes with the game.
        await store.save(new, version, "game", ttl_seconds=2.0, chat_key=new)
        for user in users:
            assert await raw.pttl(store.keys.user(user)) > 3500  # twice the table's TTL
        await asyncio.sleep(0.5)  # past the horizon the lobby gave them
        assert await store.tables_for_user("tg:1") == {new}
    finally:
        await store.close()


@pytest.mark.parametrize("split", [False, True], ids=["atomic", "cluster-safe"])
async def test_a_moved_table_leaves_no_key_without_a_ttl(
    redis_url: str, redis_prefix: str, raw: aioredis.Redis, split: bool
) -> None:
    """A table moved to a new id (a group upgraded to a supergroup): the copy, its events, its chat index,
    the old id's `moved` pointer and the players' indexes all expire, and once they did nothing is left."""
    from bot.storage import Retention

    store = RedisStore.from_url(
        redis_url, prefix=redis_prefix, cluster_safe=split, retention=Retention(user_index_seconds=0.3)
    )
    old, new, users = "tg:-500", "tg:-100500", ["tg:1", "tg:2"]
    try:
        version = await store.save(
            old, 0, "lobby", ttl_seconds=1.0, event="e1", chat_key=old, users_added=users
        )
        version = await store.save(old, version, "game", ttl_seconds=1.0, event="e2", chat_key=old)
        await store.move_table(
            old, new, version, "moved", ttl_seconds=1.0, chat_keys=(old, new), user_keys=users
        )
        assert await store.read_events(new) == ["e1", "e2"] and await store.moved_to(old) == new
        alive = await lifetimes(raw, redis_prefix)
        assert {"table", "stream", "chat", "moved", "user"} <= {kind_of(k) for k in alive}, alive
        forever = sorted(k for k, ttl in alive.items() if ttl == -1)
        assert forever == [], forever
        await asyncio.sleep(1.3)
        assert [k async for k in raw.scan_iter(match=f"{redis_prefix}:*")] == []
    finally:
        await store.close()
