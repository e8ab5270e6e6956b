"""Shared fixtures. Redis: one real redis-server per session (see tests/redis_server.py), flushed before
each test that asks for `redis_url`, plus `redis_factory` for tests that need a server of their own
(restarts, persistence, kills)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis_server import LocalRedisCluster, RedisServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server shared by the whole session. A test that stops it gets it restarted by `redis_url`."""
    server = RedisServer(data_dir=tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.close()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """URL of the session's redis-server, running and with an empty database."""
    redis_server.start()
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushdb()
    return redis_server.url


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedisCluster]:
    """A 3-master Redis Cluster on loopback (about 2 s to form), flushed by nobody: use `redis_prefix`."""
    cluster = LocalRedisCluster(tmp_path_factory.mktemp("redis-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix no other test uses (for stores that must not see each other's keys)."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def redis_factory(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """Start private redis-servers (`redis_factory(appendonly=True)`); all are stopped after the test."""
    servers: list[RedisServer] = []

    def make(**options: Any) -> RedisServer:
        options.setdefault("data_dir", tmp_path / f"redis-{len(servers)}")
        server = RedisServer(**options)
        servers.append(server)
        server.start()
        return server

    yield make
    for server in servers:
        server.close()


@pytest.fixture(scope="session", autouse=True)
def no_command_budget() -> Iterator[None]:
    """Tests send commands far faster than people do (a whole game, every command in a row, fuzzing), so
    the per-person command budget (`COMMAND_LIMIT`, `bot.throttle`) is off unless a test sets it: the
    flood tests (tests/bot/test_throttle.py, tests/telegram/test_flood.py) pass it explicitly. Set here
    in the environment, so bot processes the tests start inherit it too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COMMAND_LIMIT", "0")
        yield


@pytest.fixture(scope="session", autouse=True)
def decisions_by_work_only() -> Iterator[None]:
    """Computer players never stop a decision on the wall clock in tests (`AI_HARD_STOP`,
    `core.ai.budget`): on a busy machine a medium or hard decision passed its guard and chose otherwise,
    so a game, and a fuzz run given its seed, did not repeat. Bot processes the tests start inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AI_HARD_STOP", "false")
        yield
