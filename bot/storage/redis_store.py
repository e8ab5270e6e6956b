"""The Redis store: what several bot processes share in production.

Every change that must be atomic is one Lua script (EVALSHA, falling back to EVAL once after NOSCRIPT,
e.g. after a Redis restart), so a save costs one round trip and no lock or WATCH is ever held while
the service talks to a chat platform.

Standalone Redis (`cluster_safe=False`, the default): a save's script writes the document, version, TTL,
stream entry, chat index, user indexes and deadline (and, when needed, its index entry) together; 1
round trip. The table also remembers
which users it lists and until when their indexes live; when a save makes the table outlive that
horizon (a lobby becoming a game, a game going on for days), the reply names those users and one more
pipelined round trip extends their indexes (`extend.lua`), so an index never expires under a live table
and never outlives its tables by more than `Retention.user_index_seconds`.

Redis Cluster (`cluster_safe=True`): a script may only touch keys of one hash slot. The save script then
writes table, stream and, when the chat key tags the same slot (the service uses the chat key as the
table id, so it does), the chat index and the table's deadline; user indexes, a deadline index entry
when one is needed, and a chat index in another slot follow in one pipeline after the compare-and-set
succeeded (2 round trips for such saves, the second fanned out per node). That second step is
idempotent but not atomic with the first: a process dying between the two leaves user indexes behind
(hints, pruned on read) or the deadline unindexed, which the sweep (`repair_deadlines`) repairs.

Deadlines (issue 26): no key is written by every move. The truth is in the table's hash (dw when, dt
token, dg generation: raised by every change, and never below the server clock in µs, so a table opened
again under its id outranks what its predecessor left), written by the save script. The due index is
sharded (`KeyLayout.due`, `REDIS_DEADLINE_SHARDS`) and holds a lower bound per table: di, in the
table's hash, is the bound the index is known to hold, and a deadline at or after it writes no index at
all (most moves: a turn's deadline only moves later); an earlier one, or one with no bound known, is put
into the shard (inline on standalone Redis, the follow-up on a cluster). Index writes carry the
generation: a put applies unless the entry is newer, a drop removes only its own generation or older, so
claimers and savers may interleave in any order (lua/_index.lua). `claim_due` takes due entries per
shard (leasing them), then checks each against its table: gone or without a deadline → dropped; not
due → put back at the true time; due → returned, and di forgotten so that the next deadline set,
whatever its time, indexes itself over the lease. A dropped deadline leaves its entry as a stale bound
until it comes due. The invariant: a table with a deadline has an entry at or below it, so a deadline
may be looked at early but never fires late; what breaks it (a lost node's shards, a death between a
cluster save and its index write) the sweep repairs.

Acknowledged moves (`wait_replicas`): the save and a `WAIT n timeout` go in one request on one
connection (WAIT counts that connection's writes only), to the table's master on a cluster; fewer
acknowledgements than asked raise `StorageUncertain` after the save's follow-up is written.

Connection trouble (refused, reset, timeout, loading, read-only replica after failover, cluster down)
surfaces as `StorageUnavailable` after the client's own retries; the client reconnects by itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from redis import exceptions as rx
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from bot.storage.base import (
    DEFAULT_RETENTION,
    DEFAULT_STREAM_MAXLEN,
    HANDOVER_TTL,
    Deadline,
    HandedOver,
    Retention,
    SendBucket,
    StorageUnavailable,
    StorageUncertain,
    Store,
    StoredTable,
    VersionConflict,
    bucket_list,
    check_id,
)
from bot.storage.counting import RoundTripCounter, counting_connection_class
from bot.storage.keys import DEFAULT_DEADLINE_SHARDS, KeyLayout

__all__ = ["RedisStore"]

log = logging.getLogger("thousand.storage")

_REPLICAS_RECHECK_S: Final = 5.0
"""How long a master seen with fewer replicas than `wait_replicas` is waited on for only those."""

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


@dataclass(frozen=True, slots=True)
class _Script:
    name: str
    source: str
    sha: str

    @classmethod
    def named(cls, name: str, *, index: bool = False) -> _Script:
        """The script `lua/<name>.lua`; with `index`, after the shared index functions (`lua/_index.lua`)."""
        lua = resources.files("bot.storage").joinpath("lua")
        source = lua.joinpath(f"{name}.lua").read_text("utf-8")
        if index:
            source = lua.joinpath("_index.lua").read_text("utf-8") + source
        return cls(name, source, hashlib.sha1(source.encode()).hexdigest())


_SAVE = _Script.named("save", index=True)
_DELETE = _Script.named("delete", index=True)
_DEADLINE = _Script.named("deadline", index=True)
_INDEX = _Script.named("index", index=True)
_SENDS = _Script.named("sends")
_HOLD = _Script.named("hold")
_STATS = _Script.named("stats")
_SET_REF = _Script.named("set_ref")
_CHAT_UNLINK = _Script.named("chat_unlink")
_MOVE = _Script.named("move", index=True)
_EXTEND = _Script.named("extend")
_RATING = _Script.named("rating")
_HIT = _Script.named("hit")
_HANDOVER = _Script.named("handover")
_TAKE = _Script.named("take")


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


class RedisStore(Store):
    """`Store` on Redis. Build it with `RedisStore.from_url`, which configures reconnects and counting."""

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
    ) -> RedisStore:
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

    async def _call(self, *args: Any) -> Any:
        async with self._session():
            return await self._r.execute_command(*args)

    async def _script(self, script: _Script, keys: Sequence[str], args: Sequence[Any]) -> Any:
        async with self._session():
            try:
                return await self._r.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            except rx.NoScriptError:
                # The server forgot its script cache (restart, failover, SCRIPT FLUSH): EVAL caches it again.
                return await self._r.execute_command("EVAL", script.source, len(keys), *keys, *args)

    async def _pipeline(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        async with self._session():
            pipe = self._r.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            result: list[Any] = await pipe.execute()
            return result

    async def _scripts(self, calls: Sequence[tuple[_Script, Sequence[str], Sequence[Any]]]) -> list[Any]:
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
        await self._call("PING")

    async def close(self) -> None:
        await self._r.aclose()

    def _same_slot(self, a: str, b: str) -> bool:
        return not self._cluster or KeyLayout.slot(a) == KeyLayout.slot(b)

    # --- tables -------------------------------------------------------------------------------------

    async def load(self, table_id: str) -> StoredTable | None:
        check_id("table id", table_id)
        version, document = await self._call("HMGET", self.keys.table(table_id), "v", "d")
        if version is None or document is None:
            return None
        return StoredTable(table_id, int(version), document)

    async def version(self, table_id: str) -> int | None:
        check_id("table id", table_id)
        version = await self._call("HGET", self.keys.table(table_id), "v")
        return None if version is None else int(version)

    async def save(
        self,
        table_id: str,
        expected_version: int,
        document: str,
        *,
        ttl_seconds: float,
        event: str | None = None,
        chat_key: str | None = None,
        users_added: Collection[str] = (),
        users_removed: Collection[str] = (),
        deadline: Deadline | None = None,
        drop_deadline: bool = False,
    ) -> int:
        check_id("table id", table_id)
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        if deadline is not None and drop_deadline:
            raise ValueError("give a deadline or drop it, not both")
        for user in (*users_added, *users_removed):
            check_id("user key", user)
        if chat_key is not None:
            check_id("chat key", chat_key)
        k = self.keys
        table_key = k.table(table_id)
        ttl = _ms(ttl_seconds)
        chat_inline = chat_key is not None and self._same_slot(table_key, k.chat(chat_key))
        rest_inline = not self._cluster
        keys = [table_key, k.stream(table_id)]
        if chat_inline and chat_key is not None:
            keys.append(k.chat(chat_key))
        mode = "set" if deadline is not None else "drop" if drop_deadline else ""
        if rest_inline and deadline is not None:
            keys += list(k.due_of(table_id))
        added, removed = list(users_added), list(users_removed)
        if rest_inline:
            keys += [k.user(u) for u in added] + [k.user(u) for u in removed]
        args: list[Any] = [
            expected_version,
            document,
            uuid.uuid4().hex,
            ttl,
            "0" if event is None else "1",
            event or "",
            self._stream_maxlen,
            table_id,
            "1" if chat_inline else "0",
            mode,
            _num(deadline.when) if deadline is not None else "",
            deadline.token if deadline is not None else "",
            len(added),
            len(removed),
            _ms(self._retention.user_index_seconds),
            "1" if rest_inline else "0",
            *added,
            *removed,
        ]
        try:
            reply, acked = await self._save_script(table_key, keys, args)
        except StorageUncertain:
            raise
        except StorageUnavailable as exc:
            # With replicas asked for, a master lost mid-request may have run the script and passed it
            # on before dying: the promoted replica then has the move. Not "failed": "may have been
            # taken" (a full Redis refused it before running anything: that stays unavailable).
            if self._wait_replicas > 0 and "(OOM)" not in str(exc):
                raise StorageUncertain(table_id, expected_version + 1, 0, self._wait_replicas) from exc
            raise
        ok, version, *kept = reply
        if not int(ok):
            raise VersionConflict(table_id, expected_version, int(version))
        follow_up: list[list[Any]] = []
        horizon, put_score, put_gen, users = kept[0], kept[1], kept[2], kept[3:]
        if put_score != "":
            # Cluster: the deadline is earlier than the table's index entry is known to be (or no entry
            # is known): put it into the table's shard, in another slot.
            due, gen = k.due_of(table_id)
            follow_up.append(["EVAL", _INDEX.source, 2, due, gen, "put", table_id, put_score, put_gen])
        if users:
            # Users whose index must outlive the table (they joined, or the table outlived their
            # horizon): listed again and kept until the horizon, each in its own slot.
            follow_up += [["EVAL", _EXTEND.source, 1, k.user(u), table_id, horizon] for u in users]
        if chat_key is not None and not chat_inline:
            follow_up.append(["SET", k.chat(chat_key), table_id, "PX", ttl])
        if not rest_inline:
            follow_up += [["SREM", k.user(u), table_id] for u in users_removed]
        if follow_up:
            try:
                await self._pipeline(follow_up)
            except StorageUnavailable as exc:
                # The move is stored: a node of the other slots (a deadline shard, a user's index) is
                # away. Not a failed move; what is missing the deadline sweep puts back, and a user
                # index is a hint the next join or long save writes again.
                log.warning("save of %s stored; its follow-up in other slots failed: %s", table_id, exc)
        if acked is not None and acked < self._wait_replicas:
            raise StorageUncertain(table_id, int(version), acked, self._wait_replicas)
        return int(version)

    async def _save_script(
        self, table_key: str, keys: Sequence[str], args: Sequence[Any]
    ) -> tuple[Any, int | None]:
        """The save script's reply, and with `wait_replicas` how many replicas acknowledged it.

        WAIT counts the writes of its own connection only, so it goes in one pipeline with the script:
        on one connection to a standalone server, and on a cluster to the node of the table's slot
        (the cluster pipeline sends each node's commands on one connection, in order). A save the
        cluster redirected elsewhere meanwhile (MOVED during a failover) counts as unacknowledged."""
        if self._wait_replicas <= 0:
            return await self._script(_SAVE, keys, args), None
        async with self._session():
            node = self._r.get_node_from_key(table_key) if isinstance(self._r, RedisCluster) else None
            name = "" if node is None else node.name
            wanted = self._wanted_replicas(name)
            if wanted == 0:
                # A master known to have no replica (its own was lost and promoted it): nothing to
                # wait for, and nothing more to be had; the save is as safe as this master.
                return await self._script(_SAVE, keys, args), self._wait_replicas
            for command, body in (("EVALSHA", _SAVE.sha), ("EVAL", _SAVE.source)):
                pipe = self._r.pipeline(transaction=False)
                pipe.execute_command(command, body, len(keys), *keys, *args)
                options: dict[str, Any] = {} if node is None else {"target_nodes": node}
                pipe.execute_command("WAIT", wanted, self._wait_timeout_ms, **options)
                reply, acked = await pipe.execute(raise_on_error=False)
                if isinstance(reply, rx.NoScriptError):
                    continue  # not run: send the source (the WAIT beside it counted nothing)
                if isinstance(reply, Exception):
                    raise reply
                if isinstance(acked, Exception):
                    return reply, 0
                if isinstance(self._r, RedisCluster) and node is not None:
                    now_at = self._r.get_node_from_key(table_key)
                    if now_at is None or now_at.name != node.name:
                        return reply, 0
                if int(acked) >= wanted:
                    return reply, self._wait_replicas
                # Too few: a replica slow or cut off (uncertain), or none left to ask (after a failover
                # the promoted master has none until the lost node comes back as its replica).
                online = await self._online_replicas(node)
                self._replicas_seen[name] = (online, time.monotonic() + _REPLICAS_RECHECK_S)
                return reply, self._wait_replicas if online == 0 else int(acked)
        raise AssertionError("unreachable: EVAL does not answer NOSCRIPT")

    def _wanted_replicas(self, node: str) -> int:
        """How many replicas to WAIT for on `node`: `wait_replicas`, or fewer for a while after the node
        was seen with fewer replicas attached (0: none to wait for)."""
        seen = self._replicas_seen.get(node)
        if seen is None or seen[1] < time.monotonic():
            return self._wait_replicas
        return min(self._wait_replicas, seen[0])

    async def _online_replicas(self, node: Any) -> int:
        """Replicas attached to `node` (INFO replication, state=online)."""
        options: dict[str, Any] = {} if node is None else {"target_nodes": node}
        info = await self._r.execute_command("INFO", "replication", **options)
        if isinstance(info, dict) and node is not None and node.name in info:
            info = info[node.name]
        if isinstance(info, dict):
            return sum(1 for k, v in info.items() if k.startswith("slave") and "online" in str(v))
        return str(info).count("state=online")

    async def delete(
        self,
        table_id: str,
        *,
        expected_version: int | None = None,
        chat_key: str | None = None,
        user_keys: Collection[str] = (),
    ) -> bool:
        check_id("table id", table_id)
        k = self.keys
        table_key = k.table(table_id)
        chat_inline = chat_key is not None and self._same_slot(table_key, k.chat(chat_key))
        rest_inline = not self._cluster
        keys = [table_key, k.stream(table_id)]
        if chat_inline and chat_key is not None:
            keys.append(k.chat(chat_key))
        if rest_inline:
            keys += list(k.due_of(table_id))
        users = list(user_keys) if rest_inline else []
        keys += [k.user(u) for u in users]
        args = [
            "" if expected_version is None else expected_version,
            table_id,
            "1" if chat_inline else "0",
            "1" if rest_inline else "0",
            len(users),
        ]
        ok, result, *dropped = await self._script(_DELETE, keys, args)
        if not int(ok):
            raise VersionConflict(table_id, expected_version or 0, int(result))
        if not rest_inline:
            follow_up: list[list[Any]] = [["SREM", k.user(u), table_id] for u in user_keys]
            if dropped and dropped[0] != "":
                due, gen = k.due_of(table_id)
                follow_up.append(["EVAL", _INDEX.source, 2, due, gen, "drop", table_id, dropped[0]])
            if follow_up:
                await self._pipeline(follow_up)
        if chat_key is not None and not chat_inline:
            # Compare-and-delete within the chat key's own slot.
            await self._script(_CHAT_UNLINK, [k.chat(chat_key)], [table_id])
        return bool(int(result))

    async def move_table(
        self,
        old_id: str,
        new_id: str,
        expected_version: int,
        document: str,
        *,
        ttl_seconds: float,
        chat_keys: tuple[str, str] | None = None,
        user_keys: Collection[str] = (),
    ) -> None:
        """Standalone: one script (atomic). Cluster: the ids hash to different slots, so a copy-then-delete
        with compare-and-set: (1) copy into `new_id` if it holds no table, (2) compare-and-delete `old_id`
        at `expected_version` (leaving the `moved` pointer), undoing (1) when that fails, (3) rename the
        deadline, (4) swap the user sets' entries. Between (1) and (2) both ids hold the table (a command
        for the new chat may already act on it; one for the old chat then makes (2) fail and the move is
        undone and retried by the caller). A process dying after (2) but before (3)/(4) leaves the deadline
        or user index naming the old id: the old id's entry fires for a missing table and is dropped,
        the new id's missing entry is put back by the repair sweep, and `tables_for_user` filters the
        dead id out; a dying after (1) leaves a copy that the next move finds
        (conflict on `new_id`) for an operator to remove."""
        check_id("table id", old_id)
        check_id("table id", new_id)
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        if old_id == new_id:
            raise ValueError("a table moves to another id")
        for user in user_keys:
            check_id("user key", user)
        k = self.keys
        events = await self.read_events(old_id)
        old_keys = [k.table(old_id), k.stream(old_id)]
        new_keys = [k.table(new_id), k.stream(new_id)]
        chats_inline = chat_keys is not None and (
            self._same_slot(old_keys[0], k.chat(chat_keys[0]))
            and self._same_slot(new_keys[0], k.chat(chat_keys[1]))
        )
        old_chat = k.chat(chat_keys[0]) if chat_keys is not None and chats_inline else k.moved(old_id)
        new_chat = k.chat(chat_keys[1]) if chat_keys is not None and chats_inline else k.moved(new_id)
        args: list[Any] = [
            expected_version,
            document,
            uuid.uuid4().hex,
            _ms(ttl_seconds),
            old_id,
            new_id,
            "1" if chats_inline else "0",
            self._stream_maxlen,
            len(user_keys) if not self._cluster else 0,
            len(events),
            *events,
            len(user_keys),
            *user_keys,
        ]
        if not self._cluster:
            keys = [*old_keys, old_chat, k.moved(old_id), *new_keys, new_chat]
            keys += [*k.due_of(old_id), *k.due_of(new_id)]
            keys += [k.user(u) for u in user_keys]
            self._moved_or_raise(
                old_id, new_id, expected_version, await self._script(_MOVE, keys, ["all", *args])
            )
        else:
            stored, dw, dt, dg = await self._call("HMGET", old_keys[0], "v", "dw", "dt", "dg")
            args += [dw or "", dt or "", dg or ""]
            if stored is None or int(stored) != expected_version:
                # Reported before the copy, as the standalone script does (a second mover learns of the
                # first from the old id, not from the copy it would meet).
                raise VersionConflict(old_id, expected_version, 0 if stored is None else int(stored))
            in_keys = [*new_keys, new_chat]
            self._moved_or_raise(
                old_id, new_id, expected_version, await self._script(_MOVE, in_keys, ["in", *args])
            )
            out = await self._script(_MOVE, [*old_keys, old_chat, k.moved(old_id)], ["out", *args])
            if not int(out[0]):
                await self._script(_MOVE, in_keys, ["undo", *args])
                self._moved_or_raise(old_id, new_id, expected_version, out)
            follow_up: list[list[Any]] = []
            if dg:
                old_due, old_gen = k.due_of(old_id)
                follow_up.append(["EVAL", _INDEX.source, 2, old_due, old_gen, "drop", old_id, dg])
            if dw:
                new_due, new_gen = k.due_of(new_id)
                follow_up.append(["EVAL", _INDEX.source, 2, new_due, new_gen, "put", new_id, dw, dg or "0"])
            ttl = _ms(ttl_seconds)
            for user in user_keys:
                follow_up += [
                    ["SREM", k.user(user), old_id],
                    ["EVAL", _EXTEND.source, 1, k.user(user), new_id, ttl, "in"],
                ]
            if follow_up:
                await self._pipeline(follow_up)
        if chat_keys is not None and not chats_inline:
            await self._script(_CHAT_UNLINK, [k.chat(chat_keys[0])], [old_id])
            await self._call("SET", k.chat(chat_keys[1]), new_id, "PX", _ms(ttl_seconds))

    @staticmethod
    def _moved_or_raise(old_id: str, new_id: str, expected: int, reply: Sequence[Any]) -> None:
        if int(reply[0]):
            return
        which = old_id if reply[2] == "old" else new_id
        raise VersionConflict(which, expected if which == old_id else 0, int(reply[1]))

    async def moved_to(self, table_id: str) -> str | None:
        check_id("table id", table_id)
        result: str | None = await self._call("GET", self.keys.moved(table_id))
        return result

    async def read_events(self, table_id: str, count: int | None = None) -> list[str]:
        check_id("table id", table_id)
        stream = self.keys.stream(table_id)
        if count is None:
            entries = await self._call("XRANGE", stream, "-", "+")
        elif count <= 0:
            return []
        else:
            entries = list(reversed(await self._call("XREVRANGE", stream, "+", "-", "COUNT", count)))
        return [fields["e"] for _, fields in entries]

    async def table_for_chat(self, chat_key: str) -> str | None:
        check_id("chat key", chat_key)
        result: str | None = await self._call("GET", self.keys.chat(chat_key))
        return result

    async def tables_for_user(self, user_key: str) -> set[str]:
        check_id("user key", user_key)
        members = sorted(await self._call("SMEMBERS", self.keys.user(user_key)))
        if not members:
            return set()
        # Table keys live in other slots: check them in one pipeline (fanned out per node in a cluster).
        exists = await self._pipeline([["EXISTS", self.keys.table(t)] for t in members])
        alive = {t for t, found in zip(members, exists, strict=True) if int(found)}
        dead = [t for t in members if t not in alive]
        if dead:
            # Expired or deleted tables leave the index here (the last one out removes the key).
            await self._call("SREM", self.keys.user(user_key), *dead)
        return alive

    # --- deadlines ----------------------------------------------------------------------------------

    def _table_deadline_keys(self, table_id: str) -> list[str]:
        """Keys of deadline.lua for a table: its hash, and on standalone Redis its index shard too."""
        keys = [self.keys.table(table_id)]
        if not self._cluster:
            keys += list(self.keys.due_of(table_id))
        return keys

    def _index_call(self, table_id: str, op: str, *args: Any) -> tuple[_Script, list[str], list[Any]]:
        return _INDEX, list(self.keys.due_of(table_id)), [op, table_id, *args]

    async def set_deadline(self, table_id: str, when: float, token: str) -> None:
        check_id("table id", table_id)
        _, score, gen = await self._script(
            _DEADLINE, self._table_deadline_keys(table_id), ["set", table_id, _num(when), token]
        )
        if score != "":
            await self._scripts([self._index_call(table_id, "put", score, gen)])

    async def clear_deadline(self, table_id: str, token: str | None = None) -> bool:
        check_id("table id", table_id)
        removed, gen = await self._script(
            _DEADLINE, self._table_deadline_keys(table_id), ["clear", table_id, token or ""]
        )
        if gen != "":
            await self._scripts([self._index_call(table_id, "drop", gen)])
        return bool(int(removed))

    async def claim_due(
        self, limit: int, now: float | None = None, *, lease_seconds: float | None = None
    ) -> list[tuple[str, str]]:
        """(1) Each shard (one pipeline, fanned out per node) takes its entries due at `now`, postponing
        them by the lease; (2) each taken table's hash says what its entry meant (one pipeline): gone or
        no deadline (the entry is dropped), not due yet (the entry goes back to the true time: it was a
        lower bound), or due (returned; the lease stays until the service saves the table's next
        deadline, which indexes itself over it); entries past `limit` are given back in the same
        pipeline; (3) on a cluster, the index writes of (2) follow, in the shards' slots. Nothing due:
        one round trip."""
        if limit <= 0:
            return []
        k = self.keys
        at = "" if now is None else _num(now)
        lease = "" if lease_seconds is None else _num(lease_seconds)
        shards = range(k.deadline_shards)
        replies = await self._scripts(
            [(_INDEX, [k.due(i), k.due_gen(i)], ["claim", at, lease, limit]) for i in shards]
        )
        taken: list[tuple[float, str, str, str]] = []
        for flat in replies:
            for j in range(1, len(flat), 3):
                taken.append((float(flat[j + 1]), flat[j], flat[j + 2] or "0", flat[0]))
        if not taken:
            return []
        taken.sort()
        kept, extra = taken[:limit], taken[limit:]
        calls = [
            (_DEADLINE, self._table_deadline_keys(table_id), ["check", table_id, at or shard_now, gen])
            for _, table_id, gen, shard_now in kept
        ]
        calls += [self._index_call(table_id, "put", _num(score), gen) for score, table_id, gen, _ in extra]
        checked = await self._scripts(calls)
        due: list[tuple[float, str, str]] = []
        follow_up: list[tuple[_Script, list[str], list[Any]]] = []
        for (_, table_id, _, _), reply in zip(kept, checked, strict=False):
            state = reply[0]
            if state == "due":
                due.append((float(reply[1]), table_id, reply[2]))
            elif state == "later" and reply[1] != "":
                follow_up.append(self._index_call(table_id, "put", reply[1], reply[2]))
            elif state in ("gone", "none") and reply[1] != "":
                follow_up.append(self._index_call(table_id, "drop", reply[1]))
        if follow_up:
            await self._scripts(follow_up)
        due.sort()
        return [(table_id, token) for _, table_id, token in due]

    async def _shard_heads(self, count: int) -> list[list[tuple[str, float]]]:
        """The first `count` entries of every shard (-1: all), lowest score first."""
        k = self.keys
        replies = await self._pipeline(
            [
                ["ZRANGE", k.due(i), 0, count - 1 if count > 0 else -1, "WITHSCORES"]
                for i in range(k.deadline_shards)
            ]
        )
        return [_pairs(flat) for flat in replies]

    async def next_deadline(self) -> float | None:
        """The lowest score of any shard: a lower bound of the earliest deadline (a stale entry only
        wakes the poller early; its claim drops the entry or puts it back at the true time)."""
        heads = [entries[0][1] for entries in await self._shard_heads(1) if entries]
        return min(heads, default=None)

    async def tables_with_deadlines(self, limit: int) -> list[str]:
        """Every entry of every shard, checked against its table's hash (an entry may be a stale lower
        bound): for a process that starts, once."""
        if limit <= 0:
            return []
        ids = sorted({table_id for entries in await self._shard_heads(-1) for table_id, _ in entries})
        found: list[tuple[float, str]] = []
        for start in range(0, len(ids), 500):
            page = ids[start : start + 500]
            whens = await self._pipeline([["HGET", self.keys.table(t), "dw"] for t in page])
            found += [(float(w), t) for t, w in zip(page, whens, strict=True) if w is not None]
        found.sort()
        return [table_id for _, table_id in found[:limit]]

    async def repair_deadlines(self, batch: int = 500) -> int:
        """The sweep that keeps every live table's deadline in the index: tables whose entry is missing
        (a shard lost with its node, a process that died between a cluster save and its index write)
        or above the deadline (while not leased by a claimer) are indexed again at their deadline, and
        entries of the legacy global index (written by a version before issue 26) are moved into the
        tables' hashes. Scans every master (SCAN, `batch` keys a step); returns how many it repaired."""
        repaired = await self._migrate_legacy(batch)
        k = self.keys
        pattern = _glob_escape(f"{k.prefix}:{{") + "*}:table"
        head = f"{k.prefix}:{{"
        nodes: list[Any] = self._r.get_primaries() if isinstance(self._r, RedisCluster) else [None]
        for node in nodes:
            cursor: Any = 0
            while True:
                options: dict[str, Any] = {} if node is None else {"target_nodes": node}
                async with self._session():
                    cursor, names = await self._r.execute_command(
                        "SCAN", cursor, "MATCH", pattern, "COUNT", batch, **options
                    )
                if isinstance(cursor, dict):  # the cluster client answers {node name: cursor}
                    cursor = next(iter(cursor.values()), 0)
                ids = [
                    n[len(head) : -len("}:table")]
                    for n in names
                    if n.startswith(head) and n.endswith("}:table")
                ]
                ids = [t for t in ids if t and "\n" not in t]
                if ids:
                    repaired += await self._repair(ids)
                if int(cursor) == 0:
                    break
        return repaired

    async def _repair(self, ids: Sequence[str]) -> int:
        reads: list[list[Any]] = []
        for table_id in ids:
            reads.append(["HMGET", self.keys.table(table_id), "dw", "di"])
            reads.append(["ZSCORE", self.keys.due_of(table_id)[0], table_id])
        replies = await self._pipeline(reads)
        broken = []
        for i, table_id in enumerate(ids):
            (dw, di), score = replies[2 * i], replies[2 * i + 1]
            if dw is None:
                continue
            # A leased entry (di forgotten by its claim) is above dw on purpose: the lease brings it back.
            if score is None or (di is not None and float(score) > float(dw)):
                broken.append(table_id)
        if not broken:
            return 0
        calls = [(_DEADLINE, self._table_deadline_keys(t), ["reindex", t]) for t in broken]
        done = await self._scripts(calls)
        puts = [
            self._index_call(t, "put", r[0], r[1]) for t, r in zip(broken, done, strict=True) if r[0] != ""
        ]
        if self._cluster and puts:
            await self._scripts(puts)
        log.warning("deadline index repaired for %d table(s): %s", len(puts), ", ".join(broken[:10]))
        return len(puts)

    async def _migrate_legacy(self, batch: int) -> int:
        """Entries of the old global index: set on their table (when it lives and has no deadline of
        its own yet) and removed, each only if unchanged meanwhile (an old process still running during
        a rolling upgrade may write it). The keys go when their last entry does."""
        k = self.keys
        legacy, tokens = k.legacy_deadlines(), k.legacy_deadline_tokens()
        moved = 0
        while True:
            entries = _pairs(await self._call("ZRANGE", legacy, 0, batch - 1, "WITHSCORES"))
            if not entries:
                return moved
            ids = [t for t, _ in entries]
            toks = await self._call("HMGET", tokens, *ids)
            current = await self._pipeline([["HMGET", k.table(t), "v", "dw"] for t in ids])
            for (table_id, when), token, (version, dw) in zip(entries, toks, current, strict=True):
                if version is not None and dw is None:
                    await self.set_deadline(table_id, when, token or "")
                    moved += 1
            await self._scripts([(_INDEX, [legacy, tokens], ["take", t, _num(w)]) for t, w in entries])

    # --- statistics and ratings ---------------------------------------------------------------------

    async def add_stats(self, scope_key: str, fields: Mapping[str, float]) -> None:
        check_id("stats scope", scope_key)
        if not fields:
            return
        ttl = self._retention.stats_seconds
        args: list[str] = ["" if ttl is None else str(_ms(ttl))]
        for name, value in fields.items():
            args += [name, _num(value)]
        await self._script(_STATS, [self.keys.stats(scope_key)], args)

    async def get_stats(self, scope_key: str) -> dict[str, float]:
        check_id("stats scope", scope_key)
        raw: Mapping[str, str] = await self._call("HGETALL", self.keys.stats(scope_key))
        return {name: float(value) for name, value in raw.items()}

    async def set_rating(self, board_key: str, member: str, rating: float) -> None:
        check_id("board key", board_key)
        ttl, cap = self._retention.stats_seconds, self._retention.board_max
        keys = [self.keys.board(board_key), self.keys.board_seen(board_key)]
        args = [member, _num(rating), "" if ttl is None else _ms(ttl), "" if cap is None else cap]
        await self._script(_RATING, keys, args)

    async def get_rating(self, board_key: str, member: str) -> float | None:
        check_id("board key", board_key)
        score = await self._call("ZSCORE", self.keys.board(board_key), member)
        return None if score is None else float(score)

    async def top(self, board_key: str, n: int) -> list[tuple[str, float]]:
        check_id("board key", board_key)
        if n <= 0:
            return []
        flat = await self._call("ZREVRANGE", self.keys.board(board_key), 0, n - 1, "WITHSCORES")
        if flat and isinstance(flat[0], list | tuple):
            return [(m, float(s)) for m, s in flat]
        return [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]

    # --- platform message references -------------------------------------------------------------

    async def get_refs(self, scope_key: str) -> dict[str, str]:
        check_id("refs scope", scope_key)
        raw: Mapping[str, str] = await self._call("HGETALL", self.keys.refs(scope_key))
        return dict(raw)

    async def set_ref(self, scope_key: str, name: str, value: str, *, ttl_seconds: float) -> str | None:
        check_id("refs scope", scope_key)
        key = self.keys.refs(scope_key)
        previous = await self._script(_SET_REF, [key], [name, value, max(1, int(ttl_seconds * 1000))])
        return previous if isinstance(previous, str) else None

    async def delete_ref(self, scope_key: str, name: str) -> None:
        check_id("refs scope", scope_key)
        await self._call("HDEL", self.keys.refs(scope_key), name)

    # --- send budget --------------------------------------------------------------------------------

    async def acquire_sends(self, buckets: Sequence[SendBucket], now: float | None = None) -> float:
        checked = bucket_list(buckets)
        keys: list[str] = []
        args: list[Any] = ["" if now is None else _num(now), uuid.uuid4().hex]
        for bucket in checked:
            keys += [self.keys.send_log(bucket.key), self.keys.send_hold(bucket.key)]
            args += [bucket.limit, _num(bucket.window)]
        wait = await self._script(_SENDS, keys, args)
        return max(0.0, float(wait))

    async def hold_sends(self, bucket_key: str, seconds: float, now: float | None = None) -> None:
        check_id("bucket key", bucket_key)
        if seconds <= 0:
            return
        args = ["" if now is None else _num(now), _num(seconds)]
        await self._script(_HOLD, [self.keys.send_hold(bucket_key)], args)

    # --- request budgets ----------------------------------------------------------------------------

    async def count_hit(self, key: str, window: float) -> tuple[int, float]:
        check_id("hit key", key)
        if window <= 0:
            raise ValueError("a hit window must be longer than 0 s")
        count, left_ms = await self._script(_HIT, [self.keys.hits(key)], [_ms(window)])
        return int(count), max(0, int(left_ms)) / 1000.0

    # --- messages handed over by a stopping process ------------------------------------------------

    @property
    def keeps_after_exit(self) -> bool:
        return True

    async def hand_over(self, messages: Sequence[HandedOver], *, ttl_seconds: float = HANDOVER_TTL) -> int:
        """Per table: one script in the table's slot keeps the messages (newest version per name), then
        the platform's index learns of the table. In that order, so a taker (which leaves the index
        first, then empties the table's hash) never misses a message: one handed over while it takes
        is either taken with the rest or indexed again after."""
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        by_table: dict[tuple[str, str], list[HandedOver]] = {}
        for message in messages:
            check_id("table id", message.table_id)
            check_id("platform", message.platform)
            by_table.setdefault((message.platform, message.table_id), []).append(message)
        ttl = _ms(ttl_seconds)
        kept = 0
        for (platform, table_id), group in by_table.items():
            args: list[Any] = [ttl]
            for message in group:
                version = "" if message.version is None else str(message.version)
                args += [message.slot_name, version, message.encode()]
            kept += int(await self._script(_HANDOVER, [self.keys.handover(table_id, platform)], args))
            # Scored by when (for the order of taking); an entry whose hash expired is dropped by the
            # next taker, which finds nothing there.
            index = self.keys.handover_index(platform)
            await self._pipeline([["ZADD", index, _num(time.time()), table_id], ["PEXPIRE", index, ttl]])
        return kept

    async def take_handed_over(self, platform: str, limit: int = 100) -> list[HandedOver]:
        check_id("platform", platform)
        if limit <= 0:
            return []
        index = self.keys.handover_index(platform)
        tables = await self._call("ZRANGE", index, 0, limit - 1)  # one round trip when there is nothing
        if not tables:
            return []
        taken: list[HandedOver] = []
        for table_id in tables:
            # Out of the index first, then the messages: a message handed over meanwhile indexes the
            # table again (see `hand_over`).
            await self._call("ZREM", index, table_id)
            flat = await self._script(_TAKE, [self.keys.handover(table_id, platform)], [])
            for i in range(1, len(flat), 2):
                _, _, value = flat[i].partition("\n")
                message = HandedOver.decode(value)
                if message is not None:
                    taken.append(message)
        return sorted(taken, key=lambda m: (m.order, m.audience))
