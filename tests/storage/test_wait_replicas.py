"""Acknowledged moves survive a failover: with `wait_replicas` a save is answered only once a replica
has it (WAIT, on the save's own connection), else `StorageUncertain` says the move may have been taken.

A stopped replica (SIGSTOP) acknowledges nothing: WAIT must then count 0, which proves it counts the
save's own write (a WAIT on another connection would count nothing to wait for and answer at once)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from redis_server import LocalRedisCluster, RedisServer, command

from bot.storage import Deadline, RedisStore, StorageUncertain

TTL = 60.0


def _linked(replica: RedisServer, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "master_link_status:up" in command(replica.port, "INFO", "replication"):
            return
        time.sleep(0.05)
    raise RuntimeError("the replica did not link up")


def _pid(server: RedisServer) -> int:
    assert server._process is not None
    return server._process.pid


def _stopped(server: RedisServer) -> Iterator[None]:
    os.kill(_pid(server), signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(_pid(server), signal.SIGCONT)


@pytest.fixture
def replicated(redis_factory: Callable[..., RedisServer]) -> tuple[RedisServer, RedisServer]:
    master = redis_factory()
    replica = redis_factory(extra_args=("--replicaof", "127.0.0.1", str(master.port)))
    master.start()
    replica.start()
    _linked(replica)
    return master, replica


async def test_a_save_waits_for_its_replica_in_the_same_round_trip(
    replicated: tuple[RedisServer, RedisServer], redis_prefix: str
) -> None:
    master, replica = replicated
    store = RedisStore.from_url(master.url, prefix=redis_prefix, wait_replicas=1, wait_timeout_ms=300)
    plain = RedisStore.from_url(master.url, prefix=redis_prefix + "-plain")
    try:
        t = "tg:-1"
        v = await store.save(t, 0, "a", ttl_seconds=TTL, chat_key=t, deadline=Deadline(100.0, "x"))
        trips = []
        for i in range(5):
            before = store.round_trips
            v = await store.save(
                t, v, f"m{i}", ttl_seconds=TTL, chat_key=t, deadline=Deadline(101.0 + i, "x")
            )
            trips.append(store.round_trips - before)
        await plain.save(t, 0, "a", ttl_seconds=TTL, chat_key=t, deadline=Deadline(100.0, "x"))
        before = plain.round_trips
        await plain.save(t, 1, "b", ttl_seconds=TTL, chat_key=t, deadline=Deadline(101.0, "x"))
        print(f"round trips per move, standalone: {plain.round_trips - before} without WAIT, {trips} with")
        assert trips == [1] * 5
        with redis.Redis(port=replica.port, decode_responses=True) as r:
            assert r.hget(store.keys.table(t), "v") == str(v)  # the replica had it when answered

        for _ in _stopped(replica):
            started = time.monotonic()
            with pytest.raises(StorageUncertain) as caught:
                await store.save(t, v, "unconfirmed", ttl_seconds=TTL, chat_key=t)
            assert time.monotonic() - started < 2.0
            assert (caught.value.acknowledged, caught.value.wanted) == (0, 1)
            # Taken on the master: the table shows it, and the next move goes on from it.
            stored = await store.load(t)
            assert stored is not None and (stored.version, stored.document) == (v + 1, "unconfirmed")
        assert await store.save(t, v + 1, "next", ttl_seconds=TTL, chat_key=t) == v + 2
    finally:
        await store.close()
        await plain.close()


@pytest.fixture
def cluster_with_replicas(tmp_path: Path) -> Iterator[LocalRedisCluster]:
    """3 masters with one replica each."""
    cluster = LocalRedisCluster(tmp_path / "cluster", replicas=1)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


async def test_on_a_cluster_wait_goes_to_the_tables_master_and_counts_its_save(
    cluster_with_replicas: LocalRedisCluster, redis_prefix: str
) -> None:
    cluster = cluster_with_replicas
    store = RedisStore.from_url(cluster.url, prefix=redis_prefix, cluster=True, wait_replicas=1)
    plain = RedisStore.from_url(cluster.url, prefix=redis_prefix + "-plain", cluster=True)
    try:
        tables = [f"tg:-{100 + i}" for i in range(12)]
        versions = {
            t: await store.save(t, 0, "a", ttl_seconds=TTL, chat_key=t, deadline=Deadline(100.0, "x"))
            for t in tables
        }
        trips = []
        for t in tables:
            before = store.round_trips
            versions[t] = await store.save(
                t, versions[t], "b", ttl_seconds=TTL, chat_key=t, deadline=Deadline(200.0, "y")
            )
            trips.append(store.round_trips - before)
        await plain.save("tg:-1", 0, "a", ttl_seconds=TTL, chat_key="tg:-1", deadline=Deadline(100.0, "x"))
        before = plain.round_trips
        await plain.save("tg:-1", 1, "b", ttl_seconds=TTL, chat_key="tg:-1", deadline=Deadline(101.0, "x"))
        print(f"round trips per move, cluster: {plain.round_trips - before} without WAIT, {trips} with")
        assert trips == [1] * len(tables)

        # The first master's replica stops: its tables' moves are unconfirmed, the others' confirmed.
        master = cluster.master_of(store.keys.table(tables[0]))
        first = {t for t in tables if cluster.master_of(store.keys.table(t)).port == master.port}
        assert first != set(tables)
        (replica,) = cluster.replicas_of(master)
        for _ in _stopped(replica):
            for t in tables:
                if t in first:
                    with pytest.raises(StorageUncertain):
                        await store.save(t, versions[t], "c", ttl_seconds=TTL, chat_key=t)
                    versions[t] += 1
                    assert (await store.load(t)).version == versions[t]  # type: ignore[union-attr]
                else:
                    versions[t] = await store.save(t, versions[t], "c", ttl_seconds=TTL, chat_key=t)
    finally:
        await store.close()
        await plain.close()
