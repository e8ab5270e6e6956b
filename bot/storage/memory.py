"""The in-process store: the embedded default for local play and quick starts, and the reference the
Redis store is tested against (the same contract suite runs on both).

Every method runs to completion without awaiting, so on one event loop each call is atomic, just as a
Lua script is on Redis. Expiry follows an injectable clock, so tests can move time: what a read finds
expired is dropped then, and a sweep at most once a minute (run by writes) drops everything expired, so a
long-running local process holds only what is alive, like Redis.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from bot.storage.base import (
    DEFAULT_RETENTION,
    DEFAULT_STREAM_MAXLEN,
    HANDOVER_TTL,
    Deadline,
    HandedOver,
    Retention,
    SendBucket,
    Store,
    StoredTable,
    VersionConflict,
)
from bot.storage.checks import bucket_list, check_handover, check_id, check_move, check_save, check_window

__all__ = ["MemoryStore"]

_HITS_SWEEP = 4096
"""Hit counters kept before the closed windows are swept out (each person and chat leaves one behind)."""


@dataclass(slots=True)
class _Table:
    version: int
    document: str
    expires_at: float
    events: deque[str] = field(default_factory=deque)


@dataclass(slots=True)
class _ChatEntry:
    table_id: str
    expires_at: float


@dataclass(slots=True)
class _Board:
    ratings: dict[str, float] = field(default_factory=dict)
    seen: dict[str, float] = field(default_factory=dict)
    expires_at: float = float("inf")


SWEEP_SECONDS = 60.0
"""How often (by the store's clock) a write sweeps out everything expired."""


class MemoryStore(Store):
    """`Store` kept in dictionaries. Not shared between processes; not persistent."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        stream_maxlen: int = DEFAULT_STREAM_MAXLEN,
        retention: Retention = DEFAULT_RETENTION,
    ) -> None:
        self._clock = clock
        self._stream_maxlen = stream_maxlen
        self._retention = retention
        self._next_sweep = clock() + SWEEP_SECONDS
        self._tables: dict[str, _Table] = {}
        self._chats: dict[str, _ChatEntry] = {}
        self._users: dict[str, set[str]] = {}
        self._deadlines: dict[str, Deadline] = {}
        self._stats: dict[str, tuple[float, dict[str, float]]] = {}
        self._boards: dict[str, _Board] = {}
        self._sends: dict[str, list[float]] = {}
        self._windows: dict[str, float] = {}
        self._holds: dict[str, float] = {}
        self._refs: dict[str, tuple[float, dict[str, str]]] = {}
        self._moved: dict[str, _ChatEntry] = {}
        self._hits: dict[str, tuple[int, float]] = {}
        self._handed: dict[tuple[str, str], tuple[float, dict[str, HandedOver]]] = {}
        """(platform, table id) -> (expiry, name -> message): what `hand_over` keeps."""

    # --- helpers ------------------------------------------------------------------------------------

    def _now(self, now: float | None) -> float:
        return self._clock() if now is None else now

    def _live(self, table_id: str) -> _Table | None:
        table = self._tables.get(table_id)
        if table is not None and table.expires_at <= self._clock():
            del self._tables[table_id]
            return None
        return table

    def _sweep(self) -> None:
        """Drop everything expired (tables, chat entries, dead ids in user indexes, statistics, boards,
        references, send logs and holds), at most once per `SWEEP_SECONDS`."""
        now = self._clock()
        if now < self._next_sweep:
            return
        self._next_sweep = now + SWEEP_SECONDS
        for table_id in [t for t, table in self._tables.items() if table.expires_at <= now]:
            del self._tables[table_id]
        for chat in [c for c, entry in self._chats.items() if entry.expires_at <= now]:
            del self._chats[chat]
        for user, tables in list(self._users.items()):
            tables.intersection_update(self._tables)
            if not tables:
                del self._users[user]
        for scope in [k for k, (expires_at, _) in self._stats.items() if expires_at <= now]:
            del self._stats[scope]
        for board in [k for k, b in self._boards.items() if b.expires_at <= now]:
            del self._boards[board]
        for scope in [k for k, (expires_at, _) in self._refs.items() if expires_at <= now]:
            del self._refs[scope]
        for key, log in list(self._sends.items()):
            if not log or log[-1] <= now - self._windows.get(key, 0.0):
                del self._sends[key]
                self._windows.pop(key, None)
        for key in [k for k, until in self._holds.items() if until <= now]:
            del self._holds[key]

    def _chat(self, chat_key: str) -> _ChatEntry | None:
        entry = self._chats.get(chat_key)
        if entry is not None and entry.expires_at <= self._clock():
            del self._chats[chat_key]
            return None
        return entry

    # --- tables -------------------------------------------------------------------------------------

    async def load(self, table_id: str) -> StoredTable | None:
        check_id("table id", table_id)
        table = self._live(table_id)
        return None if table is None else StoredTable(table_id, table.version, table.document)

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
        check_save(table_id, ttl_seconds, chat_key, users_added, users_removed, deadline, drop_deadline)
        self._sweep()
        table = self._live(table_id)
        actual = 0 if table is None else table.version
        if actual != expected_version:
            raise VersionConflict(table_id, expected_version, actual)
        expires_at = self._clock() + ttl_seconds
        if table is None:
            table = _Table(0, document, expires_at, deque(maxlen=self._stream_maxlen))
            self._tables[table_id] = table
        table.version = actual + 1
        table.document = document
        table.expires_at = expires_at
        if event is not None:
            table.events.append(event)
        if chat_key is not None:
            self._chats[chat_key] = _ChatEntry(table_id, expires_at)
        for user in users_added:
            self._users.setdefault(user, set()).add(table_id)
        for user in users_removed:
            self._drop_user(user, table_id)
        if deadline is not None:
            self._deadlines[table_id] = deadline
        elif drop_deadline:
            self._deadlines.pop(table_id, None)
        return table.version

    def _drop_user(self, user: str, table_id: str) -> None:
        tables = self._users.get(user)
        if tables is not None:
            tables.discard(table_id)
            if not tables:
                del self._users[user]

    async def delete(
        self,
        table_id: str,
        *,
        expected_version: int | None = None,
        chat_key: str | None = None,
        user_keys: Collection[str] = (),
    ) -> bool:
        check_id("table id", table_id)
        table = self._live(table_id)
        actual = 0 if table is None else table.version
        if expected_version is not None and actual != expected_version:
            raise VersionConflict(table_id, expected_version, actual)
        self._tables.pop(table_id, None)
        if chat_key is not None:
            entry = self._chat(chat_key)
            if entry is not None and entry.table_id == table_id:
                del self._chats[chat_key]
        for user in user_keys:
            self._drop_user(user, table_id)
        self._deadlines.pop(table_id, None)
        return table is not None

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
        check_move(old_id, new_id, ttl_seconds, user_keys)
        table = self._live(old_id)
        actual = 0 if table is None else table.version
        if table is None or actual != expected_version:
            raise VersionConflict(old_id, expected_version, actual)
        target = self._live(new_id)
        if target is not None:
            raise VersionConflict(new_id, 0, target.version)
        expires_at = self._clock() + ttl_seconds
        del self._tables[old_id]
        self._tables[new_id] = _Table(table.version, document, expires_at, table.events)
        if chat_keys is not None:
            old_chat, new_chat = chat_keys
            entry = self._chat(old_chat)
            if entry is not None and entry.table_id == old_id:
                del self._chats[old_chat]
            self._chats[new_chat] = _ChatEntry(new_id, expires_at)
        for user in user_keys:
            self._drop_user(user, old_id)
            self._users.setdefault(user, set()).add(new_id)
        deadline = self._deadlines.pop(old_id, None)
        if deadline is not None:
            self._deadlines[new_id] = deadline
        self._moved[old_id] = _ChatEntry(new_id, expires_at)

    async def moved_to(self, table_id: str) -> str | None:
        check_id("table id", table_id)
        entry = self._moved.get(table_id)
        if entry is None or entry.expires_at <= self._clock():
            self._moved.pop(table_id, None)
            return None
        return entry.table_id

    async def read_events(self, table_id: str, count: int | None = None) -> list[str]:
        check_id("table id", table_id)
        table = self._live(table_id)
        if table is None:
            return []
        events = list(table.events)
        return events if count is None else events[-count:] if count > 0 else []

    async def table_for_chat(self, chat_key: str) -> str | None:
        check_id("chat key", chat_key)
        entry = self._chat(chat_key)
        return None if entry is None else entry.table_id

    async def tables_for_user(self, user_key: str) -> set[str]:
        check_id("user key", user_key)
        tables = self._users.get(user_key)
        if tables is None:
            return set()
        tables.difference_update([t for t in tables if self._live(t) is None])
        if not tables:
            del self._users[user_key]
        return set(tables)

    # --- deadlines ----------------------------------------------------------------------------------

    def _live_deadlines(self) -> dict[str, Deadline]:
        """The deadlines of live tables (a deadline goes with its table, as in the Redis table hash)."""
        for table_id in [t for t in self._deadlines if self._live(t) is None]:
            del self._deadlines[table_id]
        return self._deadlines

    async def set_deadline(self, table_id: str, when: float, token: str) -> None:
        check_id("table id", table_id)
        if self._live(table_id) is not None:
            self._deadlines[table_id] = Deadline(when, token)

    async def clear_deadline(self, table_id: str, token: str | None = None) -> bool:
        check_id("table id", table_id)
        current = self._deadlines.get(table_id)
        if current is None or (token is not None and current.token != token):
            return False
        del self._deadlines[table_id]
        return True

    async def claim_due(
        self, limit: int, now: float | None = None, *, lease_seconds: float | None = None
    ) -> list[tuple[str, str]]:
        at = self._now(now)
        due = sorted((d.when, table_id) for table_id, d in self._live_deadlines().items() if d.when <= at)
        claimed: list[tuple[str, str]] = []
        for _, table_id in due[: max(limit, 0)]:
            token = self._deadlines[table_id].token
            if lease_seconds is None:
                del self._deadlines[table_id]
            else:
                self._deadlines[table_id] = Deadline(at + lease_seconds, token)
            claimed.append((table_id, token))
        return claimed

    async def next_deadline(self) -> float | None:
        return min((d.when for d in self._live_deadlines().values()), default=None)

    async def tables_with_deadlines(self, limit: int) -> list[str]:
        ordered = sorted((d.when, table_id) for table_id, d in self._live_deadlines().items())
        return [table_id for _, table_id in ordered[: max(limit, 0)]]

    # --- statistics and ratings ---------------------------------------------------------------------

    async def add_stats(self, scope_key: str, fields: Mapping[str, float]) -> None:
        check_id("stats scope", scope_key)
        if not fields:
            return
        self._sweep()
        counters = self._live_stats(scope_key)
        for name, value in fields.items():
            counters[name] = counters.get(name, 0.0) + float(value)
        ttl = self._retention.stats_seconds
        self._stats[scope_key] = (float("inf") if ttl is None else self._clock() + ttl, counters)

    def _live_stats(self, scope_key: str) -> dict[str, float]:
        entry = self._stats.get(scope_key)
        if entry is None or entry[0] <= self._clock():
            self._stats.pop(scope_key, None)
            return {}
        return entry[1]

    async def get_stats(self, scope_key: str) -> dict[str, float]:
        check_id("stats scope", scope_key)
        return dict(self._live_stats(scope_key))

    def _board(self, board_key: str) -> _Board | None:
        board = self._boards.get(board_key)
        if board is not None and board.expires_at <= self._clock():
            del self._boards[board_key]
            return None
        return board

    async def set_rating(self, board_key: str, member: str, rating: float) -> None:
        check_id("board key", board_key)
        self._sweep()
        now = self._clock()
        board = self._board(board_key) or self._boards.setdefault(board_key, _Board())
        board.ratings[member] = float(rating)
        board.seen.pop(member, None)
        board.seen[member] = now  # insertion order: least recently rated first
        ttl, cap = self._retention.stats_seconds, self._retention.board_max
        gone = [m for m, at in board.seen.items() if ttl is not None and at < now - ttl]
        if cap is not None:
            gone += list(board.seen)[len(gone) : len(gone) + max(0, len(board.ratings) - len(gone) - cap)]
        for m in gone:
            board.ratings.pop(m, None)
            board.seen.pop(m, None)
        board.expires_at = float("inf") if ttl is None else now + ttl

    async def get_rating(self, board_key: str, member: str) -> float | None:
        check_id("board key", board_key)
        board = self._board(board_key)
        return None if board is None else board.ratings.get(member)

    async def top(self, board_key: str, n: int) -> list[tuple[str, float]]:
        check_id("board key", board_key)
        if n <= 0:
            return []
        board = self._board(board_key)
        ratings = {} if board is None else board.ratings
        ranked = sorted(ratings.items(), key=lambda item: (item[1], item[0].encode()), reverse=True)
        return ranked[:n]

    # --- platform message references -------------------------------------------------------------

    def _live_refs(self, scope_key: str) -> dict[str, str]:
        entry = self._refs.get(scope_key)
        if entry is None or entry[0] <= self._clock():
            self._refs.pop(scope_key, None)
            return {}
        return entry[1]

    async def get_refs(self, scope_key: str) -> dict[str, str]:
        check_id("refs scope", scope_key)
        return dict(self._live_refs(scope_key))

    async def set_ref(self, scope_key: str, name: str, value: str, *, ttl_seconds: float) -> str | None:
        check_id("refs scope", scope_key)
        self._sweep()
        refs = self._live_refs(scope_key)
        previous = refs.get(name)
        refs[name] = value
        self._refs[scope_key] = (self._clock() + ttl_seconds, refs)
        return previous

    async def delete_ref(self, scope_key: str, name: str) -> None:
        check_id("refs scope", scope_key)
        self._live_refs(scope_key).pop(name, None)

    # --- send budget --------------------------------------------------------------------------------

    async def acquire_sends(self, buckets: Sequence[SendBucket], now: float | None = None) -> float:
        at = self._now(now)
        checked = bucket_list(buckets)
        self._sweep()
        wait = 0.0
        for bucket in checked:
            hold = self._holds.get(bucket.key)
            if hold is not None:
                if hold > at:
                    wait = max(wait, hold - at)
                else:
                    del self._holds[bucket.key]
            log = [t for t in self._sends.get(bucket.key, []) if t > at - bucket.window]
            self._sends[bucket.key] = log
            if len(log) >= bucket.limit:
                wait = max(wait, log[len(log) - bucket.limit] + bucket.window - at)
        if wait > 0:
            return wait
        for bucket in checked:
            self._sends[bucket.key].append(at)
            self._sends[bucket.key].sort()
            self._windows[bucket.key] = max(self._windows.get(bucket.key, 0.0), bucket.window)
        return 0.0

    async def hold_sends(self, bucket_key: str, seconds: float, now: float | None = None) -> None:
        check_id("bucket key", bucket_key)
        until = self._now(now) + seconds
        self._holds[bucket_key] = max(self._holds.get(bucket_key, until), until)

    # --- request budgets ----------------------------------------------------------------------------

    async def count_hit(self, key: str, window: float) -> tuple[int, float]:
        check_window(key, window)
        now = self._clock()
        count, ends = self._hits.get(key, (0, now))
        if ends <= now:
            count, ends = 0, now + window
            if len(self._hits) >= _HITS_SWEEP:
                self._hits = {k: v for k, v in self._hits.items() if v[1] > now}
        self._hits[key] = (count + 1, ends)
        return count + 1, ends - now

    # --- messages handed over by a stopping process ------------------------------------------------

    @property
    def keeps_after_exit(self) -> bool:
        return False

    async def hand_over(self, messages: Sequence[HandedOver], *, ttl_seconds: float = HANDOVER_TTL) -> int:
        check_handover(messages, ttl_seconds)
        now = self._clock()
        kept = 0
        for message in messages:
            where = (message.platform, message.table_id)
            expires_at, held = self._handed.get(where, (0.0, {}))
            if expires_at <= now:
                held = {}
            old = held.get(message.slot_name)
            if (
                old is not None
                and old.version is not None
                and message.version is not None
                and old.version > message.version
            ):
                continue
            held[message.slot_name] = message
            self._handed[where] = (now + ttl_seconds, held)
            kept += 1
        return kept

    async def take_handed_over(self, platform: str, limit: int = 100) -> list[HandedOver]:
        check_id("platform", platform)
        if limit <= 0:
            return []
        now = self._clock()
        for where in [w for w, (expires_at, _) in self._handed.items() if expires_at <= now]:
            del self._handed[where]
        tables = sorted((expires_at, w) for w, (expires_at, _) in self._handed.items() if w[0] == platform)
        taken: list[HandedOver] = []
        for _, where in tables[:limit]:
            taken += self._handed.pop(where)[1].values()
        return sorted(taken, key=lambda m: (m.order, m.audience))

    # --- plumbing -----------------------------------------------------------------------------------

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        return None

    @property
    def round_trips(self) -> int:
        return 0
