"""What only the Redis store has: round trips, the key layout, outages and recovery, lost replies,
script cache loss, persistence across a crash."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import redis
from redis_server import LocalRedisCluster, RedisServer, free_port

from bot.storage import Deadline, KeyLayout, RedisStore, SendBucket, StorageUnavailable, VersionConflict

TTL = 60.0


@pytest.fixture
async def store(redis_url: str, redis_prefix: str) -> AsyncIterator[RedisStore]:
    s = RedisStore.from_url(redis_url, prefix=redis_prefix)
    yield s
    await s.close()


async def counted(store: RedisStore, action: Callable[[], Awaitable[object]]) -> int:
    """Round trips that one awaited store call took."""
    before = store.round_trips
    await action()
    return store.round_trips - before


# --- round trips ----------------------------------------------------------------------------------------


async def test_each_operation_is_one_round_trip(store: RedisStore) -> None:
    buckets = [
        SendBucket("chat:1", 1000, 1.0),
        SendBucket("group:1", 1000, 60.0),
        SendBucket("all", 1000, 1.0),
    ]

    def full_save(version: int) -> Awaitable[int]:
        return store.save(
            "tg:-100",
            version,
            f"doc {version}",
            ttl_seconds=TTL,
            event=f"event {version}",
            chat_key="tg:-100",
            users_added=["tg:1", "tg:2"],
            users_removed=["tg:3"],
            deadline=Deadline(time.time() + 60, f"turn {version}"),
        )

    # Warm up: connect and get every script cached on the server.
    await full_save(0)
    await store.claim_due(5, now=0.0)
    await store.acquire_sends(buckets)
    await store.add_stats("tg:1", {"games": 1})
    await store.set_deadline("tg:-5", 1.0, "x")
    await store.delete("tg:-nothing")

    assert await counted(store, lambda: full_save(1)) == 1
    assert await counted(store, lambda: store.load("tg:-100")) == 1
    assert await counted(store, lambda: store.table_for_chat("tg:-100")) == 1
    assert await counted(store, lambda: store.claim_due(5, now=0.0)) == 1
    assert await counted(store, lambda: store.acquire_sends(buckets)) == 1
    assert await counted(store, lambda: store.add_stats("tg:1", {"games": 1, "won": 1})) == 1
    assert await counted(store, lambda: store.set_deadline("tg:-5", 2.0, "y")) == 1
    assert await counted(store, lambda: store.delete("tg:-100", chat_key="tg:-100", user_keys=["tg:1"])) == 1


async def test_cluster_safe_save_is_one_round_trip_unless_the_deadline_comes_earlier(
    redis_url: str, redis_prefix: str
) -> None:
    store = RedisStore.from_url(redis_url, prefix=redis_prefix, cluster_safe=True)
    try:
        await store.save("tg:-100", 0, "a", ttl_seconds=TTL, event="e", chat_key="tg:-100")
        await store.save("tg:-100", 1, "b", ttl_seconds=TTL, deadline=Deadline(1.0, "t"))
        common = await counted(
            store, lambda: store.save("tg:-100", 2, "c", ttl_seconds=TTL, event="e", chat_key="tg:-100")
        )
        later = await counted(
            store, lambda: store.save("tg:-100", 3, "d", ttl_seconds=TTL, deadline=Deadline(2.0, "u"))
        )
        # Earlier than the index entry (at 1.0): the table's shard is written too, in its own slot.
        earlier = await counted(
            store, lambda: store.save("tg:-100", 4, "e", ttl_seconds=TTL, deadline=Deadline(0.5, "v"))
        )
        assert (common, later, earlier) == (1, 1, 2)
    finally:
        await store.close()


async def test_round_trips_are_counted_on_a_cluster_too(
    redis_cluster: LocalRedisCluster, redis_prefix: str
) -> None:
    store = RedisStore.from_url(redis_cluster.url, prefix=redis_prefix, cluster=True)
    try:
        await store.save("tg:-100", 0, "a", ttl_seconds=TTL, event="e", chat_key="tg:-100")
        assert await counted(store, lambda: store.load("tg:-100")) == 1
        assert (
            await counted(
                store, lambda: store.save("tg:-100", 1, "b", ttl_seconds=TTL, event="e", chat_key="tg:-100")
            )
            == 1
        )
    finally:
        await store.close()


async def test_a_forgotten_script_is_sent_again_once(store: RedisStore, redis_url: str) -> None:
    await store.save("tg:-1", 0, "a", ttl_seconds=TTL)
    with redis.Redis.from_url(redis_url) as admin:
        admin.script_flush()
    assert await counted(store, lambda: store.save("tg:-1", 1, "b", ttl_seconds=TTL)) == 2  # NOSCRIPT, EVAL
    assert await counted(store, lambda: store.save("tg:-1", 2, "c", ttl_seconds=TTL)) == 1


# --- key layout -----------------------------------------------------------------------------------------


def test_keys_are_hash_tagged_by_table_and_chat() -> None:
    keys = KeyLayout()
    assert keys.table("tg:-100123") == "thousand:{tg:-100123}:table"
    assert keys.stream("tg:-100123") == "thousand:{tg:-100123}:stream"
    assert keys.chat("tg:-100123") == "thousand:{tg:-100123}:chat"
    slots = {KeyLayout.slot(k) for k in (keys.table("tg:-1"), keys.stream("tg:-1"), keys.chat("tg:-1"))}
    assert len(slots) == 1
    assert KeyLayout.slot(keys.legacy_deadlines()) == KeyLayout.slot(keys.legacy_deadline_tokens())
    shards = keys.deadline_shards
    assert shards == 12
    for i in range(shards):
        assert KeyLayout.slot(keys.due(i)) == KeyLayout.slot(keys.due_gen(i))
        assert KeyLayout.slot(keys.due(i)) * shards // 16384 == i  # the i-th twelfth of the slots
    assert keys.due_of("tg:-1") == (
        keys.due(keys.deadline_shard("tg:-1")),
        keys.due_gen(keys.deadline_shard("tg:-1")),
    )
    assert len({keys.deadline_shard(f"tg:-{i}") for i in range(100)}) == shards
    assert KeyLayout.slot(keys.send_log("chat:1")) == KeyLayout.slot(keys.send_hold("all"))
    for bad in ("", "a{b", "x}"):
        with pytest.raises(ValueError):
            KeyLayout(bad)


async def test_prefixes_keep_deployments_apart(redis_url: str) -> None:
    blue = RedisStore.from_url(redis_url, prefix="blue")
    green = RedisStore.from_url(redis_url, prefix="green")
    try:
        await blue.save("tg:-1", 0, "blue", ttl_seconds=TTL, chat_key="tg:-1")
        await blue.set_deadline("tg:-1", 1.0, "t")
        assert await green.load("tg:-1") is None
        assert await green.table_for_chat("tg:-1") is None
        assert await green.claim_due(10, now=5.0) == []
        assert await green.save("tg:-1", 0, "green", ttl_seconds=TTL) == 1
        loaded = await blue.load("tg:-1")
        assert loaded is not None and loaded.document == "blue"
    finally:
        await blue.close()
        await green.close()


# --- outages --------------------------------------------------------------------------------------------


async def test_an_unreachable_server_is_reported_quickly() -> None:
    store = RedisStore.from_url(f"redis://127.0.0.1:{free_port()}/0")
    try:
        started = time.monotonic()
        with pytest.raises(StorageUnavailable):
            await store.ping()
        with pytest.raises(StorageUnavailable):
            await store.load("tg:-1")
        assert time.monotonic() - started < 5.0
    finally:
        await store.close()


async def test_outage_is_unavailable_and_the_store_recovers_by_itself(
    redis_factory: Callable[..., RedisServer], redis_prefix: str
) -> None:
    server = redis_factory(appendonly=True)
    store = RedisStore.from_url(server.url, prefix=redis_prefix)
    try:
        await store.save("tg:-1", 0, "before", ttl_seconds=TTL, event="one", chat_key="tg:-1")
        server.stop()
        started = time.monotonic()
        with pytest.raises(StorageUnavailable):
            await store.save("tg:-1", 1, "during", ttl_seconds=TTL)
        with pytest.raises(StorageUnavailable):
            await store.load("tg:-1")
        with pytest.raises(StorageUnavailable):
            await store.claim_due(10)
        with pytest.raises(StorageUnavailable):
            await store.acquire_send("chat:1", 1, 1.0)
        assert time.monotonic() - started < 10.0
        server.start()
        # The same store object, no reconnect call: pooled connections are replaced on first use, and the
        # restarted server's empty script cache is refilled through EVAL.
        loaded = await store.load("tg:-1")
        assert loaded is not None and (loaded.version, loaded.document) == (1, "before")
        assert await store.save("tg:-1", 1, "after", ttl_seconds=TTL, event="two") == 2
        assert await store.read_events("tg:-1") == ["one", "two"]
        assert await store.table_for_chat("tg:-1") == "tg:-1"
    finally:
        await store.close()


async def test_acknowledged_saves_survive_a_crash_with_appendonly(
    redis_factory: Callable[..., RedisServer], redis_prefix: str
) -> None:
    server = redis_factory(appendonly=True)
    store = RedisStore.from_url(server.url, prefix=redis_prefix)
    try:
        version = 0
        for i in range(20):
            version = await store.save("tg:-1", version, f"doc {i}", ttl_seconds=TTL, event=str(i))
        await store.set_deadline("tg:-1", 123.0, "turn 20")
        server.kill()
        server.start()
        loaded = await store.load("tg:-1")
        assert loaded is not None and (loaded.version, loaded.document) == (20, "doc 19")
        assert await store.claim_due(10, now=200.0) == [("tg:-1", "turn 20")]
    finally:
        await store.close()


class DropReplyProxy:
    """A loopback TCP proxy in front of Redis that, when armed, lets the next script call reach the
    server and then cuts the connection instead of returning the reply: a reply lost in the network."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.armed = False
        self.dropped = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        drop_next_reply = asyncio.Event()

        async def upstream() -> None:
            while data := await client_reader.read(65536):
                if self.armed and b"EVALSHA" in data:
                    self.armed = False
                    drop_next_reply.set()
                server_writer.write(data)
                await server_writer.drain()

        async def downstream() -> None:
            while data := await server_reader.read(65536):
                if drop_next_reply.is_set():
                    self.dropped += 1
                    return
                client_writer.write(data)
                await client_writer.drain()

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        client_writer.close()
        server_writer.close()


async def test_a_save_whose_reply_was_lost_is_retried_without_doubling(
    redis_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    proxy = DropReplyProxy(redis_server.port)
    await proxy.start()
    store = RedisStore.from_url(f"redis://127.0.0.1:{proxy.port}/0", prefix=redis_prefix)
    try:
        await store.save("tg:-1", 0, "one", ttl_seconds=TTL, event="one")
        proxy.armed = True
        # The server applies the save, the reply is lost, redis-py reconnects and sends the same call
        # again; the script recognises its own write and answers success instead of a conflict.
        assert await store.save("tg:-1", 1, "two", ttl_seconds=TTL, event="two", users_added=["tg:7"]) == 2
        assert proxy.dropped == 1
        loaded = await store.load("tg:-1")
        assert loaded is not None and (loaded.version, loaded.document) == (2, "two")
        assert await store.read_events("tg:-1") == ["one", "two"]
        assert await store.tables_for_user("tg:7") == {"tg:-1"}
        # A genuinely stale save is still refused.
        with pytest.raises(VersionConflict):
            await store.save("tg:-1", 1, "stale", ttl_seconds=TTL)
    finally:
        await store.close()
        await proxy.close()


async def test_a_full_redis_refuses_writes_as_unavailable_and_loses_nothing(
    redis_factory: Callable[..., RedisServer],
) -> None:
    """noeviction at maxmemory: a save is refused (the service says "temporarily unavailable"), every
    table written before is still there, and writes succeed again once there is room."""
    server = redis_factory()
    server.start()
    store = RedisStore.from_url(server.url, retries=0)
    document = "x" * 20_000
    # The store's scripts loaded (and their connection made) before the room is measured: Redis 7 counts
    # a first script run's few hundred KB in used_memory, which left no room for a second table.
    await store.save("tg:-warm", 0, document, ttl_seconds=TTL, users_added=["tg:warm"])
    await store.delete("tg:-warm", user_keys=["tg:warm"])
    with redis.Redis.from_url(server.url) as client:
        used = int(client.info("memory")["used_memory"])
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", str(used + 256 * 1024))
    try:
        saved = 0
        # Worded by each Redis in its own way (6.2: a script error carrying "OOM command not allowed";
        # 7.0: the OOM error code itself, "command not allowed when used memory > 'maxmemory'").
        with pytest.raises(StorageUnavailable, match=r"^redis full \(OOM\): .*maxmemory"):
            for saved in range(1000):
                await store.save(f"tg:-{saved}", 0, document, ttl_seconds=TTL, users_added=[f"tg:{saved}"])
        assert 0 < saved < 1000
        for i in range(saved):
            stored = await store.load(f"tg:-{i}")
            assert stored is not None and stored.document == document
        assert await store.load(f"tg:-{saved}") is None  # the refused save left nothing behind
        await store.delete("tg:-0", user_keys=["tg:0"])  # room again, as expiring tables make it
        await store.delete("tg:-1", user_keys=["tg:1"])
        assert await store.save(f"tg:-{saved}", 0, "small", ttl_seconds=TTL) == 1
    finally:
        await store.close()


async def test_user_indexes_cost_a_round_trip_only_when_a_long_game_outlives_them(
    redis_url: str, redis_prefix: str
) -> None:
    from bot.storage import Retention

    store = RedisStore.from_url(redis_url, prefix=redis_prefix, retention=Retention(user_index_seconds=0.5))
    try:
        await store.save("tg:-9", 0, "warm", ttl_seconds=TTL)  # connect, cache the script
        await store.delete("tg:-9")
        lobby = lambda v, users: store.save("tg:-1", v, "lobby", ttl_seconds=0.2, users_added=users)  # noqa: E731
        assert await counted(store, lambda: lobby(0, ["tg:1"])) == 1  # created with its first player
        assert await counted(store, lambda: lobby(1, ["tg:2"])) == 1
        # The game lives 3 s, past the players' index horizon (0.5 s): their indexes are extended, once.
        assert await counted(store, lambda: store.save("tg:-1", 2, "game", ttl_seconds=3.0)) == 2
        assert await counted(store, lambda: store.save("tg:-1", 3, "game", ttl_seconds=3.0)) == 1
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        with client:
            for user in ("tg:1", "tg:2"):
                left = client.pttl(store.keys.user(user))
                assert 5_000 < left <= 6_000, left  # twice the game's TTL
                assert client.smembers(store.keys.user(user)) == {"tg:-1"}
    finally:
        await store.close()
