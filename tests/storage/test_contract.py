"""One contract, every store: the memory store, the Redis store on a real redis-server (standalone and in
cluster-safe split mode), and the Redis store on a real 3-node Redis Cluster.

Time: the memory store runs on a fake clock that `advance` moves; Redis runs on real time (TTL tests use
sub-second TTLs). Tests that need a particular "now" pass it explicitly, which both stores accept.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace

import pytest
from kit import Clock
from redis_server import LocalRedisCluster

from bot.storage import (
    DEFAULT_RETENTION,
    Deadline,
    HandedOver,
    KeyLayout,
    MemoryStore,
    RedisStore,
    Retention,
    SendBucket,
    Store,
    VersionConflict,
)


@dataclass
class Backend:
    name: str
    store: Store
    advance: Callable[[float], Awaitable[None]]
    open_another: Callable[[], Store]
    """Another store on the same data, as a second bot process would have (memory: the same store)."""
    is_redis: bool
    extra: list[Store] = field(default_factory=list)
    scale: float = 1.0
    """Redis keeps real time: its TTLs and waits are this many times the memory store's, so that a step
    of a busy machine (a slow save, a late wake-up) stays well inside every margin a test leaves."""

    def t(self, seconds: float) -> float:
        """`seconds` of the test's timeline in this backend's time."""
        return seconds * self.scale

    def another(self) -> Store:
        store = self.open_another()
        if store is not self.store:
            self.extra.append(store)
        return store


BACKENDS = ["memory", "redis", "redis-split", "redis-cluster"]
REDIS_TIME_SCALE = 3.0


@pytest.fixture(params=BACKENDS)
async def backend(
    request: pytest.FixtureRequest, redis_prefix: str, stream_maxlen: int, retention: Retention
) -> AsyncIterator[Backend]:
    name: str = request.param
    if name == "memory":
        clock = Clock(1_000_000.0)

        async def advance_fake(seconds: float) -> None:
            clock.now += seconds

        memory = MemoryStore(clock=clock, stream_maxlen=stream_maxlen, retention=retention)
        backend = Backend(name, memory, advance_fake, lambda: memory, is_redis=False)
    else:
        if name == "redis-cluster":
            local_cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
            url = local_cluster.url
        else:
            url = request.getfixturevalue("redis_url")
        cluster, split = name == "redis-cluster", name != "redis"

        stats = retention.stats_seconds
        scaled = replace(
            retention,
            user_index_seconds=retention.user_index_seconds * REDIS_TIME_SCALE,
            stats_seconds=None if stats is None else stats * REDIS_TIME_SCALE,
        )

        def open_store() -> Store:
            return RedisStore.from_url(
                url,
                prefix=redis_prefix,
                cluster=cluster,
                cluster_safe=split,
                stream_maxlen=stream_maxlen,
                retention=scaled,
            )

        async def advance_real(seconds: float) -> None:
            await asyncio.sleep(seconds * REDIS_TIME_SCALE)

        backend = Backend(name, open_store(), advance_real, open_store, is_redis=True, scale=REDIS_TIME_SCALE)
    yield backend
    for store in [backend.store, *backend.extra]:
        await store.close()


@pytest.fixture
def stream_maxlen() -> int:
    return 1000


@pytest.fixture
def retention() -> Retention:
    return DEFAULT_RETENTION


TTL = 60.0


# --- tables: compare-and-set ----------------------------------------------------------------------------


async def test_load_of_unknown_table_is_none(backend: Backend) -> None:
    assert await backend.store.load("tg:-1") is None


async def test_versions_start_at_one_and_increment(backend: Backend) -> None:
    store = backend.store
    assert await store.save("tg:-1", 0, '{"n": 1}', ttl_seconds=TTL) == 1
    assert await store.save("tg:-1", 1, '{"n": 2}', ttl_seconds=TTL) == 2
    loaded = await store.load("tg:-1")
    assert loaded is not None
    assert (loaded.table_id, loaded.version, loaded.document) == ("tg:-1", 2, '{"n": 2}')


async def test_stale_or_missing_version_is_refused_and_changes_nothing(backend: Backend) -> None:
    store = backend.store
    await store.save("tg:-1", 0, "a", ttl_seconds=TTL, chat_key="tg:-1")
    await store.save("tg:-1", 1, "b", ttl_seconds=TTL)
    for expected in (0, 1, 3):
        with pytest.raises(VersionConflict) as caught:
            await store.save(
                "tg:-1", expected, "x", ttl_seconds=TTL, event="e", users_added=["u1"], chat_key="tg:-9"
            )
        assert (caught.value.expected, caught.value.actual) == (expected, 2)
    with pytest.raises(VersionConflict) as missing:
        await store.save("tg:-2", 4, "x", ttl_seconds=TTL)
    assert missing.value.actual == 0
    loaded = await store.load("tg:-1")
    assert loaded is not None and (loaded.version, loaded.document) == (2, "b")
    assert await store.read_events("tg:-1") == []
    assert await store.tables_for_user("u1") == set()
    assert await store.table_for_chat("tg:-9") is None
    assert await store.load("tg:-2") is None


async def test_documents_keep_unicode_and_size(backend: Backend) -> None:
    document = '{"names": ["Łucja", "Фёдор", "Ayşe", "🂡"], "pad": "' + "x" * 200_000 + '"}'
    await backend.store.save("dc:42", 0, document, ttl_seconds=TTL)
    loaded = await backend.store.load("dc:42")
    assert loaded is not None and loaded.document == document


async def test_concurrent_creators_only_one_wins(backend: Backend) -> None:
    stores = [backend.store, backend.another()]
    results = await asyncio.gather(
        *(stores[i % 2].save("tg:-7", 0, f"creator {i}", ttl_seconds=TTL) for i in range(10)),
        return_exceptions=True,
    )
    winners = [i for i, r in enumerate(results) if r == 1]
    assert len(winners) == 1
    assert all(isinstance(r, VersionConflict) for i, r in enumerate(results) if i != winners[0])
    loaded = await backend.store.load("tg:-7")
    assert loaded is not None and loaded.document == f"creator {winners[0]}"


async def test_concurrent_read_modify_write_loses_and_doubles_nothing(backend: Backend) -> None:
    """Workers on two 'processes' each add their own actions to a shared log with load + CAS + retry."""
    stores = [backend.store, backend.another()]
    await backend.store.save("tg:-5", 0, "", ttl_seconds=TTL)
    workers, actions = 6, 8

    async def worker(w: int) -> None:
        store = stores[w % 2]
        for a in range(actions):
            while True:
                current = await store.load("tg:-5")
                assert current is not None
                document = f"{current.document}{w}.{a};"
                try:
                    await store.save("tg:-5", current.version, document, ttl_seconds=TTL, event=f"{w}.{a}")
                    break
                except VersionConflict:
                    await asyncio.sleep(0)

    await asyncio.gather(*(worker(w) for w in range(workers)))
    final = await backend.store.load("tg:-5")
    assert final is not None
    log = [entry for entry in final.document.split(";") if entry]
    expected = {f"{w}.{a}" for w in range(workers) for a in range(actions)}
    assert sorted(log) == sorted(expected)  # each action exactly once
    assert final.version == 1 + workers * actions
    assert await backend.store.read_events("tg:-5") == log  # the stream agrees with the document's order


# --- TTL ------------------------------------------------------------------------------------------------


async def test_ttl_is_refreshed_by_each_save_and_expires_everything_with_the_table(
    backend: Backend,
) -> None:
    store = backend.store
    ttl = backend.t(0.6)
    await store.save("tg:-3", 0, "a", ttl_seconds=ttl, event="created", chat_key="tg:-3", users_added=["u"])
    await backend.advance(0.35)
    await store.save("tg:-3", 1, "b", ttl_seconds=ttl, event="moved", chat_key="tg:-3")
    await backend.advance(0.35)  # 0.7 s after the first save: alive only because the second refreshed it
    assert (await store.load("tg:-3")) is not None
    assert await store.read_events("tg:-3") == ["created", "moved"]
    assert await store.table_for_chat("tg:-3") == "tg:-3"
    assert await store.tables_for_user("u") == {"tg:-3"}
    await backend.advance(0.4)
    assert await store.load("tg:-3") is None
    assert await store.read_events("tg:-3") == []
    assert await store.table_for_chat("tg:-3") is None
    assert await store.tables_for_user("u") == set()
    # An expired table can be created afresh.
    assert await store.save("tg:-3", 0, "new", ttl_seconds=TTL) == 1


async def test_ttl_can_shrink_for_a_finished_table(backend: Backend) -> None:
    store = backend.store
    await store.save("tg:-3", 0, "game", ttl_seconds=TTL)
    await store.save("tg:-3", 1, "finished", ttl_seconds=backend.t(0.2))
    await backend.advance(0.35)
    assert await store.load("tg:-3") is None


# --- stream ---------------------------------------------------------------------------------------------


async def test_events_are_appended_in_order_only_with_an_event(backend: Backend) -> None:
    store = backend.store
    version = 0
    for i in range(5):
        version = await store.save("tg:-4", version, str(i), ttl_seconds=TTL, event=f"event {i}")
    version = await store.save("tg:-4", version, "quiet", ttl_seconds=TTL)
    await store.save("tg:-4", version, "empty event", ttl_seconds=TTL, event="")
    assert await store.read_events("tg:-4") == [*(f"event {i}" for i in range(5)), ""]
    assert await store.read_events("tg:-4", count=2) == ["event 4", ""]
    assert await store.read_events("tg:-4", count=0) == []


@pytest.mark.parametrize("stream_maxlen", [10])
async def test_stream_is_trimmed_to_about_maxlen(backend: Backend) -> None:
    store = backend.store
    for i in range(250):
        await store.save("tg:-4", i, str(i), ttl_seconds=TTL, event=str(i))
    events = await store.read_events("tg:-4")
    assert events[-10:] == [str(i) for i in range(240, 250)]
    # Memory trims exactly; Redis trims whole stream nodes (100 entries) with MAXLEN ~.
    assert len(events) <= (110 if backend.is_redis else 10)


# --- indexes --------------------------------------------------------------------------------------------


async def test_chat_index_points_at_the_live_table(backend: Backend) -> None:
    store = backend.store
    assert await store.table_for_chat("tg:-100") is None
    await store.save("tg:-100", 0, "a", ttl_seconds=TTL, chat_key="tg:-100")
    assert await store.table_for_chat("tg:-100") == "tg:-100"
    # A table id that is not the chat key (another slot in a cluster) is indexed too.
    await store.save("tg:-100#2", 0, "b", ttl_seconds=TTL, chat_key="tg:-100")
    assert await store.table_for_chat("tg:-100") == "tg:-100#2"
    # Deleting the older table leaves the newer table's entry alone.
    assert await store.delete("tg:-100", chat_key="tg:-100")
    assert await store.table_for_chat("tg:-100") == "tg:-100#2"
    assert await store.delete("tg:-100#2", chat_key="tg:-100")
    assert await store.table_for_chat("tg:-100") is None


async def test_user_index_follows_added_and_removed_users(backend: Backend) -> None:
    store = backend.store
    v1 = await store.save("tg:-1", 0, "a", ttl_seconds=TTL, users_added=["tg:1", "tg:2"])
    await store.save("tg:-2", 0, "b", ttl_seconds=TTL, users_added=["tg:1"])
    assert await store.tables_for_user("tg:1") == {"tg:-1", "tg:-2"}
    assert await store.tables_for_user("tg:2") == {"tg:-1"}
    await store.save("tg:-1", v1, "a2", ttl_seconds=TTL, users_added=["tg:3"], users_removed=["tg:1"])
    assert await store.tables_for_user("tg:1") == {"tg:-2"}
    assert await store.tables_for_user("tg:3") == {"tg:-1"}
    assert await store.tables_for_user("tg:9") == set()
    # Deleting a table without naming its users still hides it from their index.
    await store.delete("tg:-2")
    assert await store.tables_for_user("tg:1") == set()
    await store.delete("tg:-1", user_keys=["tg:2", "tg:3"])
    assert await store.tables_for_user("tg:2") == set()


@pytest.mark.parametrize("retention", [Retention(user_index_seconds=0.4)])
async def test_user_index_lives_as_long_as_a_table_listing_the_user(backend: Backend) -> None:
    store = backend.store
    # Joined in a lobby (short TTL); the game then lives far longer than the index's own lifetime.
    await store.save("tg:-1", 0, "lobby", ttl_seconds=backend.t(0.3), users_added=["tg:1", "tg:2"])
    await backend.advance(0.1)
    await store.save("tg:-1", 1, "game", ttl_seconds=backend.t(1.5))
    await backend.advance(0.8)  # 0.9 s after the join: past 2 x the lobby TTL and the index lifetime
    assert await store.tables_for_user("tg:1") == {"tg:-1"}
    assert await store.tables_for_user("tg:2") == {"tg:-1"}
    # Another process sees the same.
    assert await backend.another().tables_for_user("tg:1") == {"tg:-1"}
    # A short-lived table the user also joined goes from the index once it expired.
    await store.save("tg:-2", 0, "short", ttl_seconds=backend.t(0.2), users_added=["tg:1"])
    assert await store.tables_for_user("tg:1") == {"tg:-1", "tg:-2"}
    await backend.advance(0.3)
    assert await store.tables_for_user("tg:1") == {"tg:-1"}
    # Leaving stops the refresh for that user only.
    await store.save("tg:-1", 2, "game", ttl_seconds=backend.t(1.5), users_removed=["tg:2"])
    assert await store.tables_for_user("tg:2") == set()
    assert await store.tables_for_user("tg:1") == {"tg:-1"}


async def test_delete_is_compare_and_delete_when_asked(backend: Backend) -> None:
    store = backend.store
    await store.save("tg:-1", 0, "a", ttl_seconds=TTL, event="e", deadline=Deadline(10.0, "t"))
    with pytest.raises(VersionConflict):
        await store.delete("tg:-1", expected_version=2)
    assert await store.load("tg:-1") is not None
    assert await store.delete("tg:-1", expected_version=1)
    assert await store.load("tg:-1") is None
    assert await store.read_events("tg:-1") == []
    assert await store.claim_due(10, now=100.0) == []  # its deadline went with it
    assert not await store.delete("tg:-1")
    with pytest.raises(VersionConflict):
        await store.delete("tg:-1", expected_version=1)


# --- deadlines ------------------------------------------------------------------------------------------


async def open_tables(store: Store, *table_ids: str) -> None:
    """Tables to hang deadlines on: a deadline belongs to a live table."""
    await asyncio.gather(*(store.save(t, 0, "doc", ttl_seconds=TTL) for t in table_ids))


async def test_a_deadline_needs_a_live_table_and_goes_with_it(backend: Backend) -> None:
    store = backend.store
    await store.set_deadline("tg:-1", 10.0, "nobody")
    assert await store.claim_due(10, now=100.0) == []
    assert await store.tables_with_deadlines(10) == []
    await store.save("tg:-2", 0, "a", ttl_seconds=backend.t(0.3), deadline=Deadline(10.0, "t"))
    await store.save("tg:-3", 0, "a", ttl_seconds=TTL)
    await store.set_deadline("tg:-3", 20.0, "u")
    await store.delete("tg:-3")
    await backend.advance(0.5)  # tg:-2 expired
    assert await store.tables_with_deadlines(10) == []
    assert await store.claim_due(10, now=100.0) == []
    assert await store.next_deadline() is None


async def test_deadlines_are_claimed_in_order_once(backend: Backend) -> None:
    store = backend.store
    await open_tables(store, "tg:-1", "tg:-2", "tg:-3")
    await store.set_deadline("tg:-3", 30.0, "turn-3")
    await store.set_deadline("tg:-1", 10.0, "turn-1")
    await store.set_deadline("tg:-2", 20.0, "turn-2")
    assert await store.next_deadline() == 10.0
    assert await store.claim_due(10, now=5.0) == []
    assert await store.claim_due(1, now=25.0) == [("tg:-1", "turn-1")]
    assert await store.claim_due(10, now=25.0) == [("tg:-2", "turn-2")]
    assert await store.claim_due(10, now=25.0) == []
    assert await store.claim_due(0, now=99.0) == []
    assert await store.next_deadline() == 30.0
    assert await store.claim_due(10, now=30.0) == [("tg:-3", "turn-3")]  # due exactly at `when`
    assert await store.next_deadline() is None


async def test_the_tables_with_deadlines_are_listed_earliest_first(backend: Backend) -> None:
    store = backend.store
    assert await store.tables_with_deadlines(10) == []
    await open_tables(store, "tg:-1", "dc:7", "tg:-3")
    await store.set_deadline("tg:-3", 30.0, "turn-3")
    await store.set_deadline("tg:-1", 10.0, "turn-1")
    await store.set_deadline("dc:7", 20.0, "turn-7")
    assert await store.tables_with_deadlines(10) == ["tg:-1", "dc:7", "tg:-3"]
    assert await store.tables_with_deadlines(2) == ["tg:-1", "dc:7"]
    assert await store.tables_with_deadlines(0) == []
    await store.clear_deadline("dc:7")
    assert await store.tables_with_deadlines(10) == ["tg:-1", "tg:-3"]


async def test_setting_a_deadline_replaces_the_tables_previous_one(backend: Backend) -> None:
    store = backend.store
    await open_tables(store, "tg:-1")
    await store.set_deadline("tg:-1", 10.0, "old")
    await store.set_deadline("tg:-1", 50.0, "new")
    assert await store.claim_due(10, now=20.0) == []
    assert await store.claim_due(10, now=50.5) == [("tg:-1", "new")]


async def test_clear_deadline_only_with_a_matching_token(backend: Backend) -> None:
    store = backend.store
    await open_tables(store, "tg:-1")
    await store.set_deadline("tg:-1", 10.0, "turn-7")
    assert not await store.clear_deadline("tg:-1", "turn-6")
    assert await store.next_deadline() == 10.0
    assert await store.clear_deadline("tg:-1", "turn-7")
    assert not await store.clear_deadline("tg:-1")
    await store.set_deadline("tg:-1", 10.0, "turn-8")
    assert await store.clear_deadline("tg:-1")
    assert await store.claim_due(10, now=100.0) == []


async def test_save_sets_and_drops_the_deadline_with_the_document(backend: Backend) -> None:
    store = backend.store
    v = await store.save("tg:-1", 0, "a", ttl_seconds=TTL, deadline=Deadline(10.0, "turn-1"))
    v = await store.save("tg:-1", v, "b", ttl_seconds=TTL)  # neither given: deadline kept
    assert await store.next_deadline() == 10.0
    v = await store.save("tg:-1", v, "c", ttl_seconds=TTL, deadline=Deadline(20.0, "turn-2"))
    assert await store.claim_due(10, now=15.0) == []
    v = await store.save("tg:-1", v, "d", ttl_seconds=TTL, drop_deadline=True)
    assert await store.claim_due(10, now=100.0) == []
    with pytest.raises(ValueError):
        await store.save("tg:-1", v, "e", ttl_seconds=TTL, deadline=Deadline(1.0, "x"), drop_deadline=True)


async def test_a_leased_claim_fires_again_unless_replaced(backend: Backend) -> None:
    store = backend.store
    await open_tables(store, "tg:-1", "tg:-2")
    await store.set_deadline("tg:-1", 10.0, "turn-1")
    await store.set_deadline("tg:-2", 10.0, "turn-1")
    assert await store.claim_due(10, now=10.0, lease_seconds=30.0) == [
        ("tg:-1", "turn-1"),
        ("tg:-2", "turn-1"),
    ]
    assert await store.claim_due(10, now=39.0) == []  # leased
    await store.set_deadline("tg:-2", 100.0, "turn-2")  # the claimer of tg:-2 finished its work
    assert await store.claim_due(10, now=40.0) == [("tg:-1", "turn-1")]  # tg:-1's claimer died


async def test_each_due_deadline_goes_to_exactly_one_of_two_claimers(backend: Backend) -> None:
    first, second = backend.store, backend.another()
    await asyncio.gather(first.ping(), second.ping())  # both connected before the race starts
    count = 300
    await open_tables(first, "tg:-later", *(f"tg:-{i}" for i in range(count)))
    await asyncio.gather(*(first.set_deadline(f"tg:-{i}", 1000.0 + i, f"tok{i}") for i in range(count)))
    await first.set_deadline("tg:-later", 5000.0, "later")
    claims: dict[str, list[tuple[str, str]]] = {"first": [], "second": []}

    async def claimer(name: str, store: Store) -> None:
        while batch := await store.claim_due(7, now=2000.0):
            claims[name] += batch
            await asyncio.sleep(0)

    await asyncio.gather(
        *(claimer(n, s) for n, s in (("first", first), ("second", second)) for _ in range(3))
    )
    everything = claims["first"] + claims["second"]
    assert sorted(everything) == sorted((f"tg:-{i}", f"tok{i}") for i in range(count))
    if backend.is_redis:
        assert claims["first"] and claims["second"]  # both really competed
    assert await first.claim_due(10, now=6000.0) == [("tg:-later", "later")]


# --- statistics and ratings -----------------------------------------------------------------------------


async def test_stats_accumulate_per_scope(backend: Backend) -> None:
    store = backend.store
    assert await store.get_stats("tg:1") == {}
    await store.add_stats("tg:1", {"games": 1, "points": 120.0, "won": 1})
    await store.add_stats("tg:1", {"games": 1, "points": -60.5})
    await store.add_stats("tg:2", {"games": 1})
    await store.add_stats("tg:2", {})
    await asyncio.gather(*(store.add_stats("tg:3", {"moves": 0.25}) for _ in range(40)))
    assert await store.get_stats("tg:1") == {"games": 2.0, "points": 59.5, "won": 1.0}
    assert await store.get_stats("tg:2") == {"games": 1.0}
    assert await store.get_stats("tg:3") == {"moves": 10.0}


@pytest.mark.parametrize("retention", [Retention(stats_seconds=0.5, board_max=3)])
async def test_stats_and_boards_are_bounded_and_expire_after_inactivity(backend: Backend) -> None:
    store = backend.store
    await store.add_stats("user:tg:1", {"games": 1})
    await backend.advance(0.3)
    await store.add_stats("user:tg:1", {"games": 1})  # keeps the scope another 0.5 s
    await backend.advance(0.3)
    assert await store.get_stats("user:tg:1") == {"games": 2.0}
    await backend.advance(0.35)
    assert await store.get_stats("user:tg:1") == {}
    # At most 3 members: the least recently rated go first.
    for member, rating in (("a", 1500.0), ("b", 1400.0), ("c", 1600.0), ("d", 1300.0)):
        await store.set_rating("rating", member, rating)
    assert await store.top("rating", 10) == [("c", 1600.0), ("b", 1400.0), ("d", 1300.0)]
    await store.set_rating("rating", "b", 1450.0)
    await store.set_rating("rating", "e", 1000.0)
    assert {m for m, _ in await store.top("rating", 10)} == {"b", "d", "e"}
    assert await store.get_rating("rating", "c") is None
    # A member not rated within the lifetime leaves while others play on.
    await backend.advance(0.3)
    await store.set_rating("rating", "e", 1010.0)
    await backend.advance(0.3)
    await store.set_rating("rating", "f", 1200.0)
    assert await store.top("rating", 10) == [("f", 1200.0), ("e", 1010.0)]
    # A board nobody rates on expires whole.
    await backend.advance(0.6)
    assert await store.top("rating", 10) == []
    assert await store.get_rating("rating", "f") is None


async def test_top_lists_the_best_ratings_first(backend: Backend) -> None:
    store = backend.store
    assert await store.top("tg:-100", 3) == []
    ratings = {"ann": 1510.5, "bob": 1490.0, "cid": 1600.0, "dan": 1490.0, "eve": 1200.0}
    for member, rating in ratings.items():
        await store.set_rating("tg:-100", member, rating)
    await store.set_rating("tg:-100", "eve", 1700.0)
    await store.set_rating("global", "zed", 9999.0)
    assert await store.top("tg:-100", 4) == [
        ("eve", 1700.0),
        ("cid", 1600.0),
        ("ann", 1510.5),
        ("dan", 1490.0),  # equal ratings: descending member order
    ]
    assert len(await store.top("tg:-100", 100)) == 5
    assert await store.top("tg:-100", 0) == []
    assert await store.get_rating("tg:-100", "bob") == 1490.0
    assert await store.get_rating("tg:-100", "zed") is None


# --- send budget ----------------------------------------------------------------------------------------


async def test_send_budget_allows_the_limit_then_says_how_long_to_wait(backend: Backend) -> None:
    store = backend.store
    t = 1000.0
    assert [await store.acquire_send("chat:1", 3, 1.0, now=t + i * 0.1) for i in range(3)] == [0.0] * 3
    assert await store.acquire_send("chat:1", 3, 1.0, now=t + 0.5) == pytest.approx(0.5)
    assert await store.acquire_send("chat:1", 3, 1.0, now=t + 0.99) == pytest.approx(0.01)
    assert await store.acquire_send("chat:1", 3, 1.0, now=t + 1.0) == 0.0  # the first send left the window
    assert await store.acquire_send("chat:1", 3, 1.0, now=t + 1.0) == pytest.approx(0.1)
    assert await store.acquire_send("chat:2", 3, 1.0, now=t + 1.0) == 0.0  # buckets are independent


async def test_several_buckets_are_taken_all_or_nothing(backend: Backend) -> None:
    store = backend.store
    t = 1000.0

    def buckets(chat: str) -> list[SendBucket]:
        return [
            SendBucket(f"chat:{chat}", 1, 1.0),
            SendBucket("group:g", 3, 60.0),
            SendBucket("all", 30, 1.0),
        ]

    assert await store.acquire_sends(buckets("a"), now=t) == 0.0
    assert await store.acquire_sends(buckets("a"), now=t + 0.1) == pytest.approx(0.9)  # the chat is full
    assert await store.acquire_sends(buckets("b"), now=t + 0.1) == 0.0  # so nothing was recorded elsewhere
    assert await store.acquire_sends(buckets("c"), now=t + 0.2) == 0.0
    assert await store.acquire_sends(buckets("d"), now=t + 0.3) == pytest.approx(59.7)  # the group is full
    with pytest.raises(ValueError):
        await store.acquire_sends([SendBucket("x", 1, 1.0), SendBucket("x", 2, 1.0)], now=t)
    with pytest.raises(ValueError):
        SendBucket("x", 0, 1.0)


async def test_a_hold_refuses_sends_until_it_ends(backend: Backend) -> None:
    store = backend.store
    t = 1000.0
    await store.hold_sends("chat:1", 5.0, now=t)
    await store.hold_sends("chat:1", 1.0, now=t)  # a shorter hold does not shorten the first
    assert await store.acquire_send("chat:1", 10, 1.0, now=t + 1.0) == pytest.approx(4.0)
    assert await store.acquire_send("chat:2", 10, 1.0, now=t + 1.0) == 0.0
    assert await store.acquire_send("chat:1", 10, 1.0, now=t + 5.0) == 0.0


async def test_send_budget_holds_under_concurrent_acquirers(backend: Backend) -> None:
    """Rounds 0.1 s apart; in each, 24 acquirers on two 'processes' race for a 4-per-0.25 s bucket."""
    stores = [backend.store, backend.another()]
    limit, window, base = 4, 0.25, 5000.0
    granted_per_round: list[int] = []
    for r in range(10):
        now = base + r * 0.1
        order = list(range(24))
        random.Random(r).shuffle(order)
        waits = await asyncio.gather(
            *(stores[i % 2].acquire_send("all", limit, window, now=now) for i in order)
        )
        granted_per_round.append(sum(1 for w in waits if w == 0.0))
        assert all(w >= 0.0 for w in waits)
    for r in range(len(granted_per_round)):
        assert sum(granted_per_round[max(0, r - 2) : r + 1]) <= limit  # any 0.25 s window spans 3 rounds
    assert granted_per_round == [4, 0, 0, 4, 0, 0, 4, 0, 0, 4]  # and no capacity is wasted


async def test_server_clock_is_used_when_now_is_omitted(backend: Backend) -> None:
    store = backend.store
    assert await store.acquire_send("chat:1", 1, 30.0) == 0.0
    wait = await store.acquire_send("chat:1", 1, 30.0)
    assert 29.0 < wait <= 30.0
    await open_tables(store, "tg:-1")
    await store.set_deadline("tg:-1", 0.0, "long ago")
    assert await store.claim_due(10) == [("tg:-1", "long ago")]


async def test_ids_must_not_be_empty(backend: Backend) -> None:
    with pytest.raises(ValueError):
        await backend.store.save("", 0, "x", ttl_seconds=TTL)
    with pytest.raises(ValueError):
        await backend.store.save("tg:-1", 0, "x", ttl_seconds=0)


async def test_ping(backend: Backend) -> None:
    await backend.store.ping()


# --- platform message references ------------------------------------------------------------------------


async def test_setting_a_ref_returns_the_one_it_replaced(backend: Backend) -> None:
    """Two processes writing one reference each learn what they displaced, so the second one can remove
    the message the first one posted meanwhile."""
    store, other = backend.store, backend.another()
    assert await store.set_ref("tg:-8", "hand:1", "201", ttl_seconds=5) is None
    assert await other.set_ref("tg:-8", "hand:1", "202", ttl_seconds=5) == "201"
    assert await store.set_ref("tg:-8", "hand:1", "203", ttl_seconds=5) == "202"
    assert await store.set_ref("tg:-8", "hand:2", "204", ttl_seconds=5) is None
    assert await other.get_refs("tg:-8") == {"hand:1": "203", "hand:2": "204"}


async def test_message_refs_are_shared_between_processes_and_expire(backend: Backend) -> None:
    store, other = backend.store, backend.another()
    assert await store.get_refs("tg:-9") == {}
    await store.set_ref("tg:-9", "table", "101", ttl_seconds=backend.t(0.6))
    await other.set_ref("tg:-9", "hand:7", "102", ttl_seconds=backend.t(0.6))
    assert await store.get_refs("tg:-9") == {"table": "101", "hand:7": "102"}
    await other.delete_ref("tg:-9", "table")
    assert await store.get_refs("tg:-9") == {"hand:7": "102"}
    await backend.advance(0.35)
    await store.set_ref("tg:-9", "table", "103", ttl_seconds=backend.t(0.6))  # refreshes the scope's expiry
    await backend.advance(0.35)
    assert await other.get_refs("tg:-9") == {"hand:7": "102", "table": "103"}
    await backend.advance(0.4)
    assert await store.get_refs("tg:-9") == {}
    assert await store.get_refs("tg:-10") == {}


# --- messages handed over by a stopping process -------------------------------------------------------


def _handed(
    table: str, audience: str, key: str | None, version: int | None, order: int, payload: str = ""
) -> HandedOver:
    return HandedOver("tg", table, audience, key, version, order, payload or f"{audience}/{key}/{version}")


async def test_handed_over_messages_are_taken_once_in_order(backend: Backend) -> None:
    store, other = backend.store, backend.another()
    assert store.keeps_after_exit is backend.is_redis
    messages = [
        _handed("tg:-1", "-1", "table", 7, 1, "Deal 2 · ♥"),
        _handed("tg:-1", "-1", "result:1:1", 7, 2),
        _handed("tg:-2", "-2", "table", 3, 3),
        _handed("tg:-1", "5", "hand:tg:-1", 7, 4),
        _handed("tg:-1", "-1", None, None, 5),
    ]
    assert await store.hand_over(messages) == 5
    taken = await other.take_handed_over("tg")
    assert taken == messages  # every field as handed over, in the order they were queued
    assert await store.take_handed_over("tg") == []
    assert await other.take_handed_over("tg") == []


async def test_a_handed_over_key_keeps_its_newest_version(backend: Backend) -> None:
    store, other = backend.store, backend.another()
    assert await store.hand_over([_handed("tg:-1", "-1", "table", 5, 1, "five")]) == 1
    # Another process stopping later with an older state of the same message: dropped.
    assert await other.hand_over([_handed("tg:-1", "-1", "table", 4, 2, "four")]) == 0
    assert await other.hand_over([_handed("tg:-1", "-1", "table", 6, 3, "six")]) == 1
    # Unkeyed messages and other audiences stay side by side; versions unknown always replace.
    assert (
        await store.hand_over([_handed("tg:-1", "-1", None, 4, 4), _handed("tg:-1", "-1", None, 4, 5)]) == 2
    )
    assert await store.hand_over([_handed("tg:-1", "9", "table", 1, 6)]) == 1
    taken = await store.take_handed_over("tg")
    assert [(m.audience, m.key, m.version, m.payload) for m in taken] == [
        ("-1", "table", 6, "six"),
        ("-1", None, 4, "-1/None/4"),
        ("-1", None, 4, "-1/None/4"),
        ("9", "table", 1, "9/table/1"),
    ]


async def test_handed_over_messages_stay_with_their_platform_and_expire(backend: Backend) -> None:
    store = backend.store
    await store.hand_over([_handed("tg:-1", "-1", "table", 1, 1)], ttl_seconds=backend.t(0.6))
    discord = HandedOver("dc", "dc:7", "7", "table", 2, 2, "x")
    await store.hand_over([discord], ttl_seconds=60)
    assert await store.take_handed_over("dc") == [discord]
    await backend.advance(0.8)
    assert await store.take_handed_over("tg") == []
    assert await store.take_handed_over("tg", limit=0) == []
    with pytest.raises(ValueError):
        await store.hand_over([_handed("", "-1", "table", 1, 1)])


async def test_the_take_limit_counts_tables(backend: Backend) -> None:
    store = backend.store
    await store.hand_over([_handed(f"tg:-{i}", f"-{i}", "table", 1, i) for i in range(1, 6)])
    first = await store.take_handed_over("tg", limit=2)
    rest = await store.take_handed_over("tg", limit=10)
    assert len(first) == 2 and len(rest) == 3
    assert sorted(m.table_id for m in first + rest) == [f"tg:-{i}" for i in range(1, 6)]


async def test_each_handed_over_message_goes_to_exactly_one_of_several_takers(backend: Backend) -> None:
    stores = [backend.store, backend.another(), backend.another()]
    rng = random.Random(7)
    handed = [
        _handed(f"tg:-{rng.randint(1, 8)}", str(i), None if i % 3 else f"k{i}", i, i) for i in range(60)
    ]
    taken: list[HandedOver] = []

    async def taker(store: Store) -> None:
        for _ in range(20):
            taken.extend(await store.take_handed_over("tg", limit=3))
            await asyncio.sleep(0)

    async def giver() -> None:
        for i in range(0, len(handed), 6):
            await stores[0].hand_over(handed[i : i + 6])
            await asyncio.sleep(0)

    await asyncio.gather(giver(), *(taker(s) for s in stores))
    taken.extend(await stores[1].take_handed_over("tg", limit=100))
    assert sorted(m.order for m in taken) == list(range(60))  # none lost, none twice


async def test_handed_over_keys_are_tagged_by_table_and_expire(redis_url: str, redis_prefix: str) -> None:
    store = RedisStore.from_url(redis_url, prefix=redis_prefix, cluster_safe=True)
    try:
        await store.hand_over([_handed("tg:-42", "-42", "table", 1, 1)], ttl_seconds=30)
        keys = KeyLayout(redis_prefix)
        hashed, index = keys.handover("tg:-42", "tg"), keys.handover_index("tg")
        assert KeyLayout.slot(hashed) == KeyLayout.slot(keys.table("tg:-42"))
        for key in (hashed, index):
            ttl = await store.call("PTTL", key)
            assert 25_000 < ttl <= 30_000, (key, ttl)
        await store.take_handed_over("tg")
        assert await store.call("EXISTS", hashed) == 0
    finally:
        await store.close()
