"""The Redis store: what several bot processes share in production.

Every change that must be atomic is one Lua script (EVALSHA, falling back to EVAL once after NOSCRIPT,
e.g. after a Redis restart), so a save costs one round trip and no lock or WATCH is ever held while
the service talks to a chat platform.

Standalone Redis (`cluster_safe=False`, the default): a save's script writes the document, version, TTL,
stream entry, chat index, user indexes and deadline together; 1 round trip. The table also remembers
which users it lists and until when their indexes live; when a save makes the table outlive that
horizon (a lobby becoming a game, a game going on for days), the reply names those users and one more
pipelined round trip extends their indexes (`extend.lua`), so an index never expires under a live table
and never outlives its tables by more than `Retention.user_index_seconds`.

Redis Cluster (`cluster_safe=True`): a script may only touch keys of one hash slot. The save script then
writes table, stream and, when the chat key tags the same slot (the service uses the chat key as the
table id, so it does), the chat index; user indexes, the deadline and a chat index in another slot follow
in one pipeline after the compare-and-set succeeded (2 round trips for such saves, the second fanned out
per node). That second step is idempotent but not atomic with the first: a process dying between the
two leaves the table without its new deadline or index entries, which a periodic sweep must repair.

Connection trouble (refused, reset, timeout, loading, read-only replica after failover, cluster down)
surfaces as `StorageUnavailable` after the client's own retries; the client reconnects by itself.
"""

from __future__ import annotations

import asyncio
import hashlib
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
    Store,
    StoredTable,
    VersionConflict,
    bucket_list,
    check_id,
)
from bot.storage.counting import RoundTripCounter, counting_connection_class
from bot.storage.keys import KeyLayout

__all__ = ["RedisStore"]

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
    def named(cls, name: str) -> _Script:
        source = resources.files("bot.storage").joinpath("lua", f"{name}.lua").read_text("utf-8")
        return cls(name, source, hashlib.sha1(source.encode()).hexdigest())


_SAVE = _Script.named("save")
_DELETE = _Script.named("delete")
_DEADLINE = _Script.named("deadline")
_CLAIM = _Script.named("claim")
_SENDS = _Script.named("sends")
_HOLD = _Script.named("hold")
_STATS = _Script.named("stats")
_SET_REF = _Script.named("set_ref")
_CHAT_UNLINK = _Script.named("chat_unlink")
_MOVE = _Script.named("move")
_EXTEND = _Script.named("extend")
_RATING = _Script.named("rating")
_HIT = _Script.named("hit")
_HANDOVER = _Script.named("handover")
_TAKE = _Script.named("take")


def _num(value: float) -> str:
    """A float as Redis reads it back exactly (shortest round-trip repr)."""
    return repr(float(value))


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
    ) -> None:
        """`client` must decode responses (`decode_responses=True`). `cluster_safe`: keep every script call
        within one hash slot (required with a `RedisCluster` client; works on a standalone server too).
        `counter` is the one the client's connections increment (see `from_url`); without it `round_trips`
        stays 0. `max_in_flight` bounds concurrent requests through a cluster client. `retention`: how
        long user indexes, statistics and rating boards live (see `Retention`)."""
        self._r = client
        self.keys = KeyLayout(prefix)
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
        mode = ""
        if rest_inline and (deadline is not None or drop_deadline):
            mode = "set" if deadline is not None else "drop"
            keys += [k.deadlines(), k.deadline_tokens()]
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
        ok, version, *kept = await self._script(_SAVE, keys, args)
        if not int(ok):
            raise VersionConflict(table_id, expected_version, int(version))
        follow_up: list[list[Any]] = []
        if len(kept) > 1:
            # Users whose index must outlive the table (they joined, or the table outlived their
            # horizon): listed again and kept until the horizon, each in its own slot.
            horizon, users = kept[0], kept[1:]
            follow_up += [["EVAL", _EXTEND.source, 1, k.user(u), table_id, horizon] for u in users]
        if chat_key is not None and not chat_inline:
            follow_up.append(["SET", k.chat(chat_key), table_id, "PX", ttl])
        if not rest_inline:
            if deadline is not None:
                follow_up.append(["HSET", k.deadline_tokens(), table_id, deadline.token])
                follow_up.append(["ZADD", k.deadlines(), _num(deadline.when), table_id])
            elif drop_deadline:
                follow_up.append(["ZREM", k.deadlines(), table_id])
                follow_up.append(["HDEL", k.deadline_tokens(), table_id])
            follow_up += [["SREM", k.user(u), table_id] for u in users_removed]
        if follow_up:
            await self._pipeline(follow_up)
        return int(version)

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
            keys += [k.deadlines(), k.deadline_tokens()]
        users = list(user_keys) if rest_inline else []
        keys += [k.user(u) for u in users]
        args = [
            "" if expected_version is None else expected_version,
            table_id,
            "1" if chat_inline else "0",
            "1" if rest_inline else "0",
            len(users),
        ]
        ok, result = await self._script(_DELETE, keys, args)
        if not int(ok):
            raise VersionConflict(table_id, expected_version or 0, int(result))
        if not rest_inline:
            await self.clear_deadline(table_id)
            follow_up: list[list[Any]] = [["SREM", k.user(u), table_id] for u in user_keys]
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
        or user index naming the old id: the deadline then fires for a missing table and is dropped, and
        `tables_for_user` filters the dead id out; a dying after (1) leaves a copy that the next move finds
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
        deadline_keys = [k.deadlines(), k.deadline_tokens()]
        if not self._cluster:
            keys = [*old_keys, old_chat, k.moved(old_id), *new_keys, new_chat, *deadline_keys]
            keys += [k.user(u) for u in user_keys]
            self._moved_or_raise(
                old_id, new_id, expected_version, await self._script(_MOVE, keys, ["all", *args])
            )
        else:
            stored = await self._call("HGET", old_keys[0], "v")
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
            await self._script(_MOVE, deadline_keys, ["rest", *args])
            follow_up: list[list[Any]] = []
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

    async def set_deadline(self, table_id: str, when: float, token: str) -> None:
        check_id("table id", table_id)
        keys = [self.keys.deadlines(), self.keys.deadline_tokens()]
        await self._script(_DEADLINE, keys, ["set", table_id, _num(when), token])

    async def clear_deadline(self, table_id: str, token: str | None = None) -> bool:
        check_id("table id", table_id)
        keys = [self.keys.deadlines(), self.keys.deadline_tokens()]
        removed = await self._script(_DEADLINE, keys, ["clear", table_id, "", token or ""])
        return bool(int(removed))

    async def claim_due(
        self, limit: int, now: float | None = None, *, lease_seconds: float | None = None
    ) -> list[tuple[str, str]]:
        if limit <= 0:
            return []
        keys = [self.keys.deadlines(), self.keys.deadline_tokens()]
        args = ["" if now is None else _num(now), limit, "" if lease_seconds is None else _num(lease_seconds)]
        flat = await self._script(_CLAIM, keys, args)
        return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]

    async def next_deadline(self) -> float | None:
        first = await self._call("ZRANGE", self.keys.deadlines(), 0, 0, "WITHSCORES")
        if not first:
            return None
        # redis-py may or may not pair the reply up depending on protocol; accept both shapes.
        score = first[0][1] if isinstance(first[0], list | tuple) else first[1]
        return float(score)

    async def tables_with_deadlines(self, limit: int) -> list[str]:
        if limit <= 0:
            return []
        return list(await self._call("ZRANGE", self.keys.deadlines(), 0, limit - 1))

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
