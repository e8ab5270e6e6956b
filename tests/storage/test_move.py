"""`Store.move_table` (a Telegram group upgraded to a supergroup gets a new chat id): on the memory store,
Redis standalone (one atomic script), Redis in cluster-safe split mode and a real 3-node Redis Cluster
(copy-then-delete with compare-and-set across slots)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis_server import LocalRedisCluster

from bot.storage import Deadline, KeyLayout, MemoryStore, RedisStore, Store, VersionConflict

TTL = 60.0
OLD, NEW = "tg:-4000000001", "tg:-1002000000001"


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis", "redis-split", "redis-cluster"])
async def store(request: pytest.FixtureRequest, redis_prefix: str) -> AsyncIterator[Store]:
    name: str = request.param
    built: Store
    if name == "memory":
        built = MemoryStore(clock=Clock())
    else:
        if name == "redis-cluster":
            local: LocalRedisCluster = request.getfixturevalue("redis_cluster")
            url = local.url
        else:
            url = request.getfixturevalue("redis_url")
        built = RedisStore.from_url(
            url, prefix=redis_prefix, cluster=name == "redis-cluster", cluster_safe=name != "redis"
        )
    yield built
    await built.close()


async def _table(store: Store, *, users: tuple[str, ...] = ("tg:1", "tg:2")) -> int:
    version = await store.save(
        OLD, 0, '{"id": "old"}', ttl_seconds=TTL, event="e1", chat_key=OLD, users_added=users
    )
    return await store.save(
        OLD,
        version,
        '{"id": "old", "n": 2}',
        ttl_seconds=TTL,
        event="e2",
        chat_key=OLD,
        deadline=Deadline(2_000_000.5, "serial.7:a"),
    )


async def test_move_carries_table_events_indexes_and_deadline(store: Store) -> None:
    assert KeyLayout.slot(KeyLayout().table(OLD)) != KeyLayout.slot(KeyLayout().table(NEW))
    version = await _table(store)
    await store.move_table(
        OLD, NEW, version, '{"id": "new"}', ttl_seconds=TTL, chat_keys=(OLD, NEW), user_keys=["tg:1", "tg:2"]
    )
    moved = await store.load(NEW)
    assert moved is not None and (moved.version, moved.document) == (version, '{"id": "new"}')
    assert await store.load(OLD) is None
    assert await store.read_events(NEW) == ["e1", "e2"]
    assert await store.read_events(OLD) == []
    assert await store.table_for_chat(NEW) == NEW
    assert await store.table_for_chat(OLD) is None
    assert await store.tables_for_user("tg:1") == {NEW}
    assert await store.tables_for_user("tg:2") == {NEW}
    assert await store.moved_to(OLD) == NEW
    assert await store.moved_to(NEW) is None
    assert await store.claim_due(10, 2_000_001.0) == [(NEW, "serial.7:a")]
    # The moved table goes on with its compare-and-set from the version it kept.
    assert await store.save(NEW, version, "after", ttl_seconds=TTL, chat_key=NEW) == version + 1


async def test_move_refuses_a_changed_table_and_changes_nothing(store: Store) -> None:
    version = await _table(store)
    await store.save(OLD, version, "newer", ttl_seconds=TTL, chat_key=OLD)
    with pytest.raises(VersionConflict) as caught:
        await store.move_table(
            OLD, NEW, version, "moved", ttl_seconds=TTL, chat_keys=(OLD, NEW), user_keys=["tg:1"]
        )
    assert caught.value.table_id == OLD and caught.value.actual == version + 1
    loaded = await store.load(OLD)
    assert loaded is not None and loaded.document == "newer"
    assert await store.load(NEW) is None
    assert await store.read_events(NEW) == []
    assert await store.table_for_chat(OLD) == OLD
    assert await store.table_for_chat(NEW) is None
    assert await store.tables_for_user("tg:1") == {OLD}
    assert await store.moved_to(OLD) is None
    assert await store.next_deadline() == 2_000_000.5


async def test_move_never_overwrites_a_table_at_the_new_id(store: Store) -> None:
    version = await _table(store)
    await store.save(NEW, 0, "someone opened one there", ttl_seconds=TTL, chat_key=NEW)
    with pytest.raises(VersionConflict) as caught:
        await store.move_table(OLD, NEW, version, "moved", ttl_seconds=TTL, chat_keys=(OLD, NEW))
    assert caught.value.table_id == NEW
    there = await store.load(NEW)
    assert there is not None and there.document == "someone opened one there"
    here = await store.load(OLD)
    assert here is not None and here.version == version
    assert await store.table_for_chat(OLD) == OLD
    assert await store.moved_to(OLD) is None


async def test_second_move_of_the_same_chat_is_a_conflict_on_the_old_id(store: Store) -> None:
    """Two processes handling the two service messages of one upgrade both try to move the table."""
    version = await _table(store)
    await store.move_table(OLD, NEW, version, "moved", ttl_seconds=TTL, chat_keys=(OLD, NEW))
    with pytest.raises(VersionConflict) as caught:
        await store.move_table(OLD, NEW, version, "moved again", ttl_seconds=TTL, chat_keys=(OLD, NEW))
    assert caught.value.table_id == OLD
    moved = await store.load(NEW)
    assert moved is not None and moved.document == "moved"
    assert await store.moved_to(OLD) == NEW


async def test_move_of_a_table_without_chat_or_deadline(store: Store) -> None:
    """A chat's settings are a table of their own, with no chat index, users or deadline."""
    await store.save(f"settings:{OLD}", 0, '{"preset": "russian"}', ttl_seconds=TTL)
    await store.move_table(f"settings:{OLD}", f"settings:{NEW}", 1, '{"preset": "russian"}', ttl_seconds=TTL)
    moved = await store.load(f"settings:{NEW}")
    assert moved is not None and moved.document == '{"preset": "russian"}'
    assert await store.load(f"settings:{OLD}") is None
    assert await store.next_deadline() is None


async def test_what_a_move_writes_expires_with_the_moved_table(store: Store) -> None:
    """The moved table, its events, its chat index and the old id's `moved` pointer live as long as the
    table's TTL: not for ever (nothing would ever clean them), not shorter (the pointer finds the table
    for buttons drawn before the move)."""
    version = await _table(store)
    await store.move_table(
        OLD, NEW, version, '{"id": "new"}', ttl_seconds=TTL, chat_keys=(OLD, NEW), user_keys=["tg:1", "tg:2"]
    )
    if isinstance(store, MemoryStore):
        clock = store._clock
        assert isinstance(clock, Clock)
        clock.now += TTL - 1
        assert await store.load(NEW) is not None and await store.read_events(NEW) == ["e1", "e2"]
        assert await store.moved_to(OLD) == NEW and await store.table_for_chat(NEW) == NEW
        clock.now += 2
        assert await store.load(NEW) is None and await store.read_events(NEW) == []
        assert await store.moved_to(OLD) is None and await store.table_for_chat(NEW) is None
        return
    assert isinstance(store, RedisStore)
    keys = store.keys
    raw = store._r  # the store's own client: on the cluster it finds each key's node
    written = {
        "table": keys.table(NEW),
        "stream": keys.stream(NEW),
        "chat": keys.chat(NEW),
        "moved": keys.moved(OLD),
    }
    for kind, key in written.items():
        left = int(await raw.pttl(key))
        assert 0 < left <= TTL * 1000, f"{kind} ({key}): PTTL {left}"
