"""The sharded lower-bound deadline index (issue 26): what a move costs on a cluster, how the shards
spread over the masters, the lower-bound invariant under interleaved writers, leases, a lost shard
repaired by the sweep, and the migration of the old global index.

The interleavings drive the store's own scripts step by step on a standalone server in cluster-safe
mode (the index writes are then separate steps, as on a cluster), so a step can be put between two
others at will."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import redis
from redis_server import LocalRedisCluster

from bot.storage import Deadline, KeyLayout, RedisStore
from bot.storage.redis_scripts import DEADLINE, INDEX

TTL = 60.0


@pytest.fixture
async def split(redis_url: str, redis_prefix: str) -> AsyncIterator[RedisStore]:
    """Cluster-safe mode on one server: every index write is a step of its own."""
    store = RedisStore.from_url(redis_url, prefix=redis_prefix, cluster_safe=True)
    yield store
    await store.close()


@pytest.fixture
async def cluster_store(redis_cluster: LocalRedisCluster, redis_prefix: str) -> AsyncIterator[RedisStore]:
    store = RedisStore.from_url(redis_cluster.url, prefix=redis_prefix, cluster=True)
    yield store
    await store.close()


async def counted(store: RedisStore, action: Callable[[], Awaitable[object]]) -> int:
    before = store.round_trips
    await action()
    return store.round_trips - before


async def entry(store: RedisStore, table_id: str) -> tuple[float | None, int | None]:
    """The table's index entry: (score, generation)."""
    due, gen = store.keys.due_of(table_id)
    score, g = await store.pipeline([["ZSCORE", due, table_id], ["HGET", gen, table_id]])
    return (None if score is None else float(score)), (None if g is None else int(g))


async def check(store: RedisStore, table_id: str, now: float, gen: str = "0") -> list[str]:
    """A claimer's table step for a taken entry (its index write is left to the test)."""
    reply: list[str] = await store.script(
        DEADLINE, [store.keys.table(table_id)], ["check", table_id, repr(now), gen]
    )
    return reply


async def index(store: RedisStore, table_id: str, op: str, *args: str) -> None:
    await store._scripts([(INDEX, list(store.keys.due_of(table_id)), [op, table_id, *args])])


# --- cost and spread -----------------------------------------------------------------------------------


async def test_a_move_with_a_later_deadline_is_one_round_trip_on_a_cluster(cluster_store: RedisStore) -> None:
    store = cluster_store
    t = "tg:-100"
    await store.save(t, 0, "a", ttl_seconds=TTL, event="e", chat_key=t, deadline=Deadline(1000.0, "t0"))
    per_move = [
        await counted(
            store,
            lambda i=i: store.save(  # type: ignore[misc]
                t,
                i,
                f"doc {i}",
                ttl_seconds=TTL,
                event="e",
                chat_key=t,
                deadline=Deadline(1000.0 + i, f"t{i}"),
            ),
        )
        for i in range(1, 21)
    ]
    assert per_move == [1] * 20
    # An earlier deadline than the index holds needs the shard too: one more, to the shard's node.
    earlier = await counted(
        store, lambda: store.save(t, 21, "x", ttl_seconds=TTL, chat_key=t, deadline=Deadline(500.0, "early"))
    )
    assert earlier == 2
    assert (await entry(store, t))[0] == 500.0
    assert await store.claim_due(10, now=600.0) == [(t, "early")]


async def test_the_index_spreads_over_every_master(
    cluster_store: RedisStore, redis_cluster: LocalRedisCluster
) -> None:
    store = cluster_store
    tables = [f"tg:-{1000 + i}" for i in range(90)]
    await asyncio.gather(
        *(
            store.save(t, 0, "a", ttl_seconds=TTL, chat_key=t, deadline=Deadline(5000.0 + i, "x"))
            for i, t in enumerate(tables)
        )
    )
    shards_used = {store.keys.deadline_shard(t) for t in tables}
    assert len(shards_used) >= 3
    per_master = []
    for node in redis_cluster.nodes:
        with redis.Redis(port=node.port, decode_responses=True) as client:
            per_master.append(len(list(client.scan_iter(match=f"{store.keys.prefix}:*:due", count=1000))))
    assert all(n > 0 for n in per_master), per_master
    assert sorted(await store.tables_with_deadlines(200)) == sorted(tables)


async def test_the_busiest_master_carries_at_most_40_percent_of_the_commands(
    cluster_store: RedisStore, redis_cluster: LocalRedisCluster
) -> None:
    """60 tables, 10 moves each, every move pushing the deadline later (as turns do)."""
    store = cluster_store

    def processed() -> list[int]:
        counts = []
        for node in redis_cluster.nodes:
            with redis.Redis(port=node.port) as client:
                counts.append(int(client.info("stats")["total_commands_processed"]))
        return counts

    tables = [f"tg:-{2000 + i}" for i in range(60)]
    await store.ping()
    before = processed()
    for move in range(10):
        await asyncio.gather(
            *(
                store.save(
                    t,
                    move,
                    f"m{move}",
                    ttl_seconds=TTL,
                    event="e",
                    chat_key=t,
                    deadline=Deadline(9000.0 + move, "x"),
                )
                for t in tables
            )
        )
        await store.claim_due(50, now=100.0)  # a poller ticking meanwhile (nothing due)
    after = processed()
    share = [(a - b) for a, b in zip(after, before, strict=True)]
    busiest = max(share) / sum(share)
    print(f"commands per master: {share}, busiest {busiest:.0%}")
    assert busiest <= 0.40


# --- the lower bound under interleavings --------------------------------------------------------------


async def test_a_claimers_late_reindex_never_lifts_an_earlier_deadline(split: RedisStore) -> None:
    """Claimer: takes the entry, reads dw = 100 (not due) and is about to put it back at 100. Meanwhile a
    save sets 60 (earlier than the index: it puts 60 with a newer generation). The claimer's put lands
    last: the generation keeps the entry at 60, or it would fire 40 s late."""
    store, t = split, "tg:-1"
    await store.save(t, 0, "a", ttl_seconds=TTL, deadline=Deadline(10.0, "first"))
    await store.save(t, 1, "b", ttl_seconds=TTL, deadline=Deadline(100.0, "second"))  # index stays at 10
    assert (await entry(store, t))[0] == 10.0
    state, score, gen = await check(store, t, now=20.0)
    assert (state, float(score)) == ("later", 100.0)
    await store.save(t, 2, "c", ttl_seconds=TTL, deadline=Deadline(60.0, "third"))
    await index(store, t, "put", score, gen)  # the claimer's put, late
    assert (await entry(store, t))[0] == 60.0
    assert await store.claim_due(10, now=61.0) == [(t, "third")]


async def test_a_claimers_reindex_first_then_the_save(split: RedisStore) -> None:
    store, t = split, "tg:-1"
    await store.save(t, 0, "a", ttl_seconds=TTL, deadline=Deadline(10.0, "first"))
    await store.save(t, 1, "b", ttl_seconds=TTL, deadline=Deadline(100.0, "second"))
    _state, score, gen = await check(store, t, now=20.0)
    await index(store, t, "put", score, gen)
    await store.save(t, 2, "c", ttl_seconds=TTL, deadline=Deadline(60.0, "third"))
    assert (await entry(store, t))[0] == 60.0
    assert await store.claim_due(10, now=59.0) == []
    assert await store.claim_due(10, now=61.0) == [(t, "third")]


async def test_a_late_drop_never_removes_a_newer_deadline(split: RedisStore) -> None:
    """Claimer: the table had no deadline (dropped by a save), so it drops the entry; before that drop
    lands a new deadline is set and indexed. The drop of the older generation must not remove it."""
    store, t = split, "tg:-1"
    await store.save(t, 0, "a", ttl_seconds=TTL, deadline=Deadline(10.0, "first"))
    await store.save(t, 1, "b", ttl_seconds=TTL, drop_deadline=True)  # the entry stays, stale
    state, gen = await check(store, t, now=20.0)
    assert state == "none"
    await store.set_deadline(t, 30.0, "new")  # di was forgotten by the check: indexed again
    await index(store, t, "drop", gen)  # the claimer's drop, late
    assert (await entry(store, t))[0] == 30.0
    assert await store.claim_due(10, now=31.0) == [(t, "new")]


async def test_a_drop_first_then_the_new_deadline(split: RedisStore) -> None:
    store, t = split, "tg:-1"
    await store.save(t, 0, "a", ttl_seconds=TTL, deadline=Deadline(10.0, "first"))
    await store.save(t, 1, "b", ttl_seconds=TTL, drop_deadline=True)
    _state, gen = await check(store, t, now=20.0)
    await index(store, t, "drop", gen)
    assert await entry(store, t) == (None, None)
    await store.set_deadline(t, 30.0, "new")
    assert await store.claim_due(10, now=31.0) == [(t, "new")]


async def test_a_deadline_set_after_a_claim_overrides_the_lease(split: RedisStore) -> None:
    """A claim leases the entry to now + 30; the service then sets the next deadline 15 s on, later than
    the old one. The entry must come down to it (the claim forgot di), or it fires 15 s late."""
    store, t = split, "tg:-1"
    await store.save(t, 0, "a", ttl_seconds=TTL, deadline=Deadline(10.0, "first"))
    assert await store.claim_due(10, now=10.0, lease_seconds=30.0) == [(t, "first")]
    assert (await entry(store, t))[0] == 40.0
    await store.set_deadline(t, 25.0, "next")
    assert await store.claim_due(10, now=26.0, lease_seconds=30.0) == [(t, "next")]


async def test_a_leased_deadline_fires_once_more_after_the_lease_and_only_once(
    split: RedisStore, redis_url: str, redis_prefix: str
) -> None:
    store, t = split, "tg:-1"
    others = [RedisStore.from_url(redis_url, prefix=redis_prefix, cluster_safe=True) for _ in range(3)]
    try:
        await store.save(t, 0, "a", ttl_seconds=TTL, deadline=Deadline(10.0, "turn"))
        assert await store.claim_due(10, now=10.0, lease_seconds=30.0) == [(t, "turn")]
        assert await store.claim_due(10, now=39.0, lease_seconds=30.0) == []  # leased: the claimer works
        # The claimer died: after the lease, four pollers at once; one of them gets it.
        claims = await asyncio.gather(
            *(s.claim_due(10, now=41.0, lease_seconds=30.0) for s in [store, *others])
        )
        assert sorted(c for batch in claims for c in batch) == [(t, "turn")]
        await store.save(t, 1, "b", ttl_seconds=TTL, deadline=Deadline(200.0, "after"))  # the turn is played
        assert await store.claim_due(10, now=150.0, lease_seconds=30.0) == []
        assert await store.claim_due(10, now=200.0, lease_seconds=30.0) == [(t, "after")]
    finally:
        for other in others:
            await other.close()


# --- repair and migration ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["standalone", "cluster"])
async def test_a_lost_shard_is_repaired_by_the_sweep_and_its_deadlines_fire(
    where: str, request: pytest.FixtureRequest, redis_prefix: str
) -> None:
    if where == "cluster":
        local: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        store = RedisStore.from_url(local.url, prefix=redis_prefix, cluster=True)
        ports = [node.port for node in local.nodes]
    else:
        url: str = request.getfixturevalue("redis_url")
        store = RedisStore.from_url(url, prefix=redis_prefix)
        ports = [int(url.rsplit(":", 1)[1].split("/")[0])]
    try:
        tables = [f"tg:-{3000 + i}" for i in range(40)]
        for i, t in enumerate(tables):
            await store.save(t, 0, "a", ttl_seconds=TTL, chat_key=t, deadline=Deadline(100.0 + i, f"tok{i}"))
        await store.save("settings:tg:-1", 0, "no deadline", ttl_seconds=TTL)
        assert await store.repair_deadlines() == 0  # nothing wrong: nothing done
        # A node lost with its part of the index: shard 0 and every shard on the first master.
        lost = [store.keys.due(0), store.keys.due_gen(0)]
        for port in ports[:1]:
            with redis.Redis(port=port, decode_responses=True) as client:
                lost += list(client.scan_iter(match=f"{redis_prefix}:*:due*", count=1000))
        with redis.Redis(port=ports[0]) as client:  # shard 0's slot is on the first master too
            for key in set(lost):
                client.delete(key)
        missing = [t for t in tables if (await entry(store, t))[0] is None]
        assert missing
        claimed = await store.claim_due(100, now=1000.0, lease_seconds=30.0)
        assert {t for t, _ in claimed} == set(tables) - set(missing)  # the lost ones would never fire
        assert await store.repair_deadlines(batch=7) == len(missing)
        again = await store.claim_due(100, now=1000.0, lease_seconds=30.0)
        assert sorted(again) == sorted((t, f"tok{tables.index(t)}") for t in missing)
        assert await store.repair_deadlines() == 0  # leased entries are no damage
    finally:
        await store.close()


async def test_an_index_above_the_deadline_is_lowered_by_the_sweep(split: RedisStore) -> None:
    store, t = split, "tg:-1"
    await store.save(t, 0, "a", ttl_seconds=TTL, deadline=Deadline(50.0, "x"))
    due, _ = store.keys.due_of(t)
    await store.call("ZADD", due, "500", t)  # a bug, or a lost write and a stale entry
    assert await store.claim_due(10, now=60.0) == []
    assert await store.repair_deadlines() == 1
    assert await store.claim_due(10, now=60.0) == [(t, "x")]


async def test_the_old_global_index_is_moved_to_the_tables(split: RedisStore) -> None:
    store = split
    k = store.keys
    await store.save("tg:-1", 0, "a", ttl_seconds=TTL)
    await store.save("tg:-2", 0, "a", ttl_seconds=TTL, deadline=Deadline(70.0, "newer"))
    # What a version before issue 26 left: one global zset and its tokens.
    await store.pipeline(
        [
            ["ZADD", k.legacy_deadlines(), "40", "tg:-1", "45", "tg:-2", "50", "tg:-gone"],
            ["HSET", k.legacy_deadline_tokens(), "tg:-1", "old.3:a", "tg:-2", "old.2:a", "tg:-gone", "x"],
        ]
    )
    assert await store.repair_deadlines() == 1  # tg:-1; tg:-2 has its own, tg:-gone no table
    assert await store.call("EXISTS", k.legacy_deadlines(), k.legacy_deadline_tokens()) == 0
    assert await store.claim_due(10, now=100.0) == [("tg:-1", "old.3:a"), ("tg:-2", "newer")]


async def test_a_moved_table_takes_its_deadline_along(
    split: RedisStore, redis_url: str, redis_prefix: str
) -> None:
    for store in (split, RedisStore.from_url(redis_url, prefix=redis_prefix + "-all")):
        await store.save("tg:-1", 0, "a", ttl_seconds=TTL, deadline=Deadline(40.0, "turn"))
        await store.move_table("tg:-1", "tg:-1001", 1, "moved", ttl_seconds=TTL)
        assert await entry(store, "tg:-1") == (None, None)
        assert (await entry(store, "tg:-1001"))[0] == 40.0
        assert await store.claim_due(10, now=50.0) == [("tg:-1001", "turn")]
        if store is not split:
            await store.close()


def test_shard_tags_cover_the_slot_range_evenly() -> None:
    for shards in (1, 3, 12, 16):
        keys = KeyLayout("p", shards)
        slots = [KeyLayout.slot(keys.due(i)) for i in range(shards)]
        assert [s * shards // 16384 for s in slots] == list(range(shards))


async def test_a_table_opened_again_under_its_id_outranks_what_its_predecessor_left(
    split: RedisStore,
) -> None:
    """The old table changed its deadline often (a high generation) and expired with its entry left in
    the index; the new one under the same id must still be indexed: generations follow the clock."""
    store, t = split, "tg:-1"
    version = 0
    for i in range(5):
        version = await store.save(t, version, "old", ttl_seconds=0.3, deadline=Deadline(10.0 - i, "old"))
    await asyncio.sleep(0.5)  # expired, its entry (at 6.0) still in the index
    await store.save(t, 0, "new", ttl_seconds=TTL, deadline=Deadline(100.0, "new"))
    assert await store.claim_due(10, now=50.0, lease_seconds=30.0) == []  # the old entry: put back at 100
    assert (await entry(store, t))[0] == 100.0
    assert await store.claim_due(10, now=100.0, lease_seconds=30.0) == [(t, "new")]
