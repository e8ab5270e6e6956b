"""What every part of the Redis store stands on: the client (built by `from_url`: reconnects, retries,
counted round trips), one request, a script call, a pipeline (public: other Redis-backed stores of the
package share the client through them), and the mapping of connection trouble.

Connection trouble (refused, reset, timeout, loading, read-only replica after failover, cluster down)
surfaces as `StorageUnavailable` after the client's own retries; the client reconnects by itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final, Self

from redis import exceptions as rx
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from bot.storage.base import DEFAULT_RETENTION, DEFAULT_STREAM_MAXLEN, Retention, StorageUnavailable
from bot.storage.counting import RoundTripCounter, counting_connection_class
from bot.storage.keys import DEFAULT_DEADLINE_SHARDS, KeyLayout
from bot.storage.redis_scripts import Script

__all__ = ["RedisBase"]

log = logging.getLogger("thousand.storage")

_UNAVAILABLE: Final = (
    rx.ConnectionError,  # includes BusyLoadingError (LOADING after a restart with persistence)
    rx.TimeoutError,
    rx.ReadOnlyError,  # a replica promoted/demoted under us
    rx.ClusterDownError,  # includes MasterDownError
    rx.TryAgainError,
    rx.RedisClusterException,  # "cannot be connected", slot not covered
    rx.OutOfMemoryError,  # maxmemory reached with noeviction: writes refused until there is room
    OSError,
)


def _num(value: float) -> str:
    """A float as Redis reads it back exactly (shortest round-trip repr)."""
    return repr(float(value))


def _pairs(reply: Sequence[Any]) -> list[tuple[str, float]]:
    """A WITHSCORES reply as (member, score) pairs (redis-py pairs it up or not, by protocol)."""
    if reply and isinstance(reply[0], list | tuple):
        return [(m, float(v)) for m, v in reply]
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]


def _glob_escape(text: str) -> str:
    """`text` matched literally by a Redis glob pattern (SCAN MATCH)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


@contextmanager
def _guard() -> Iterator[None]:
    try:
        yield
    except rx.OutOfMemoryError as exc:
        # Redis 7 answers a script's refused write with the OOM error code itself (redis-py drops the
        # code from the text: "command not allowed when used memory > 'maxmemory'").
        raise StorageUnavailable(f"redis full (OOM): {exc}") from exc
    except _UNAVAILABLE as exc:
        raise StorageUnavailable(f"redis unavailable: {exc}") from exc
    except rx.ResponseError as exc:
        # At maxmemory with noeviction, a script's first write fails and the script stops there, so
        # nothing of it was applied: the same as Redis being away until keys expire and make room.
        # Redis 6.2 wraps it in a script error whose text carries "OOM command not allowed".
        if "OOM command not allowed" in str(exc):
            raise StorageUnavailable(f"redis full (OOM): {exc}") from exc
        raise


class RedisBase:
    """The Redis client and the ways a request reaches it; each concern of `RedisStore` is a part over it."""

    def __init__(
        self,
        client: Redis | RedisCluster,
        *,
        prefix: str = "thousand",
        cluster_safe: bool = False,
        stream_maxlen: int = DEFAULT_STREAM_MAXLEN,
        counter: RoundTripCounter | None = None,
        max_in_flight: int = 64,
        retention: Retention = DEFAULT_RETENTION,
        deadline_shards: int = DEFAULT_DEADLINE_SHARDS,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 500,
    ) -> None:
        """`client` must decode responses (`decode_responses=True`). `cluster_safe`: keep every script call
        within one hash slot (required with a `RedisCluster` client; works on a standalone server too).
        `counter` is the one the client's connections increment (see `from_url`); without it `round_trips`
        stays 0. `max_in_flight` bounds concurrent requests through a cluster client. `retention`: how
        long user indexes, statistics and rating boards live (see `Retention`). `deadline_shards`: shards
        of the due index (every process of a deployment must use the same number; changing it needs a
        repair sweep, `repair_deadlines`, to index the tables again). `wait_replicas`: after each save,
        wait for this many replicas to acknowledge it (at most `wait_timeout_ms`), else raise
        `StorageUncertain` (0: do not wait)."""
        if wait_replicas < 0 or wait_timeout_ms < 0:
            raise ValueError("wait_replicas and wait_timeout_ms cannot be negative")
        self._r = client
        self.keys = KeyLayout(prefix, deadline_shards)
        self._wait_replicas = wait_replicas
        self._wait_timeout_ms = wait_timeout_ms
        self._replicas_seen: dict[str, tuple[int, float]] = {}
        """Per node: replicas seen attached when a WAIT came short, and until when that is believed."""
        self._cluster = cluster_safe
        self._stream_maxlen = stream_maxlen
        self._retention = retention
        self._counter = counter or RoundTripCounter()
        # redis-py's asyncio RedisCluster breaks connections when its first commands run concurrently
        # with its lazy topology discovery (seen with redis-py 8.1), so discover once, before any use;
        # and its node pools raise instead of waiting when full, so gate the requests in flight.
        self._ready = not isinstance(client, RedisCluster)
        self._ready_lock = asyncio.Lock()
        self._gate = None if self._ready else asyncio.Semaphore(max_in_flight)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = "thousand",
        cluster: bool = False,
        cluster_safe: bool | None = None,
        stream_maxlen: int = DEFAULT_STREAM_MAXLEN,
        socket_timeout: float = 2.0,
        connect_timeout: float = 1.0,
        retries: int = 3,
        backoff_base: float = 0.05,
        backoff_cap: float = 0.5,
        health_check_interval: int = 15,
        max_connections: int = 64,
        pool_timeout: float = 5.0,
        retention: Retention = DEFAULT_RETENTION,
        deadline_shards: int = DEFAULT_DEADLINE_SHARDS,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 500,
    ) -> Self:
        """A store on `url`; `cluster=True` for a Redis Cluster (then `cluster_safe` defaults to True).

        The client retries with jittered exponential backoff (so a failing call
        gives up after roughly `retries * backoff_cap` seconds), pings idle connections before use, keeps
        TCP keepalive on, and counts round trips."""
        counter = RoundTripCounter()
        retry = Retry(ExponentialWithJitterBackoff(base=backoff_base, cap=backoff_cap), retries)
        options: dict[str, Any] = {
            "decode_responses": True,
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            "socket_keepalive": True,
            "health_check_interval": health_check_interval,
            "retry": retry,
        }
        client: Redis | RedisCluster
        if cluster:
            from redis.asyncio.connection import Connection

            client = RedisCluster.from_url(url, max_connections=max_connections, **options)
            # RedisCluster takes no connection class: install the counting one where it builds nodes.
            counting = counting_connection_class(Connection, counter)
            client.nodes_manager.connection_kwargs["connection_class"] = counting
            for node in client.nodes_manager.startup_nodes.values():
                node.connection_class = counting
        else:
            # A burst beyond `max_connections` waits up to `pool_timeout` for a free connection.
            pool = BlockingConnectionPool.from_url(
                url, max_connections=max_connections, timeout=pool_timeout, **options
            )
            pool.connection_class = counting_connection_class(pool.connection_class, counter)
            client = Redis.from_pool(pool)
        return cls(
            client,
            prefix=prefix,
            cluster_safe=cluster if cluster_safe is None else cluster_safe,
            stream_maxlen=stream_maxlen,
            counter=counter,
            max_in_flight=max_connections,
            retention=retention,
            deadline_shards=deadline_shards,
            wait_replicas=wait_replicas,
            wait_timeout_ms=wait_timeout_ms,
        )

    @property
    def round_trips(self) -> int:
        return self._counter.count

    # --- plumbing -----------------------------------------------------------------------------------

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        """Around every request: map connection trouble to `StorageUnavailable`; for a cluster client,
        discover the topology first and bound the requests in flight (its per-node pools do not wait
        for a free connection, they fail)."""
        with _guard():
            if self._gate is None:
                yield
                return
            if not self._ready:
                async with self._ready_lock:
                    if not self._ready and isinstance(self._r, RedisCluster):
                        await self._r.initialize()
                    self._ready = True
            async with self._gate:
                yield

    # --- requests: the way other Redis-backed stores of the package (the ladder, the match queue, the
    # reports) share this client, its retries, its error mapping and its round-trip count; the parts of
    # `RedisStore` use them too.

    async def call(self, *args: Any) -> Any:
        """One command (`"GET", key`), its reply; connection trouble raises `StorageUnavailable`."""
        async with self._session():
            return await self._r.execute_command(*args)

    async def script(self, script: Script, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """One Lua script run by its digest, sent again with its source when the server forgot it."""
        async with self._session():
            try:
                return await self._r.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            except rx.NoScriptError:
                # The server forgot its script cache (restart, failover, SCRIPT FLUSH): EVAL caches it again.
                return await self._r.execute_command("EVAL", script.source, len(keys), *keys, *args)

    async def pipeline(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """Commands in one round trip, not a transaction (fanned out per node on a cluster); their replies."""
        async with self._session():
            pipe = self._r.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            result: list[Any] = await pipe.execute()
            return result

    async def _scripts(self, calls: Sequence[tuple[Script, Sequence[str], Sequence[Any]]]) -> list[Any]:
        """Script calls in one pipeline (fanned out per node on a cluster). Those the server answered
        NOSCRIPT (not run: it forgot its script cache) are sent again with their source."""
        if not calls:
            return []
        async with self._session():
            pipe = self._r.pipeline(transaction=False)
            for script, keys, args in calls:
                pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            results: list[Any] = await pipe.execute(raise_on_error=False)
            again = [i for i, result in enumerate(results) if isinstance(result, rx.NoScriptError)]
            if again:
                pipe = self._r.pipeline(transaction=False)
                for i in again:
                    script, keys, args = calls[i]
                    pipe.execute_command("EVAL", script.source, len(keys), *keys, *args)
                for i, result in zip(again, await pipe.execute(raise_on_error=False), strict=True):
                    results[i] = result
            for result in results:
                if isinstance(result, Exception):
                    raise result
            return results

    async def ping(self) -> None:
        await self.call("PING")

    async def close(self) -> None:
        await self._r.aclose()

    def _same_slot(self, a: str, b: str) -> bool:
        return not self._cluster or KeyLayout.slot(a) == KeyLayout.slot(b)
