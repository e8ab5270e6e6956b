"""The storage contract shared by the Redis store (production) and the memory store (local play, tests).

Storage knows nothing about the game. It keeps, per table, one versioned document (a JSON string written
by the service) with a time to live and an event stream, plus indexes (chat -> table, user -> tables),
turn deadlines, statistics, ratings and send budgets. Every method that changes a table is a
compare-and-set on the table's version, so several bot processes sharing one store can never lose or
double an action: the loser of a race gets `VersionConflict`, reloads and decides again.

Times (`now`, deadline `when`, send budgets) are POSIX seconds as floats. When `now` is omitted the store
uses its own clock: the server's `TIME` for Redis (one clock for all processes), the injected clock for
the memory store.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_RETENTION",
    "DEFAULT_STREAM_MAXLEN",
    "HANDOVER_TTL",
    "Deadline",
    "HandedOver",
    "Retention",
    "SendBucket",
    "StorageError",
    "StorageUnavailable",
    "StorageUncertain",
    "Store",
    "StoredTable",
    "VersionConflict",
]

DEFAULT_STREAM_MAXLEN = 1000
"""Events kept per table stream (Redis trims approximately, to at least this many)."""


@dataclass(frozen=True, slots=True)
class Retention:
    """How long what grows with users lives (tables carry their own TTL in each `save`).

    - `user_index_seconds`: a user's table index lives at least this long after they join a table, and
      is extended whenever a table listing them would outlive it (then to twice that table's TTL, or
      this, whichever is longer). So it never expires under a live table, and goes within this time
      once every table listing the user is gone. Dead table ids are pruned whenever it is read.
    - `stats_seconds`: a statistics hash lives this long after its last addition, a rating board this
      long after its last rating, and a member not rated for this long leaves the board (None: forever).
    - `board_max`: members kept per rating board; past it, the least recently rated go (None: no cap).
    """

    user_index_seconds: float = 14 * 24 * 3600.0
    stats_seconds: float | None = 365 * 24 * 3600.0
    board_max: int | None = 100_000

    def __post_init__(self) -> None:
        if self.user_index_seconds <= 0:
            raise ValueError("user_index_seconds must be positive")
        if self.stats_seconds is not None and self.stats_seconds <= 0:
            raise ValueError("stats_seconds must be positive (or None)")
        if self.board_max is not None and self.board_max < 1:
            raise ValueError("board_max must be at least 1 (or None)")


DEFAULT_RETENTION = Retention()


class StorageError(Exception):
    """Base of the errors a store raises on purpose."""


class StorageUnavailable(StorageError):
    """The backing server cannot be reached right now (connection refused, timeout, loading, failover).

    The operation may or may not have been applied: reload before deciding again. (The client's own
    retries inside one `save` call are safe: the script recognises a replay of its own write.) The service
    answers "temporarily unavailable"; the store reconnects by itself on a later call.
    """


class StorageUncertain(StorageUnavailable):
    """A save the server applied but fewer replicas acknowledged than asked (`WAIT`, see
    `RedisStore`'s `wait_replicas`): should the master fail now, a promoted replica may not have it.
    So the change may stand or not: the player is told their move may have been taken and the table
    shows which (the next load reads the truth). A `StorageUnavailable`, so callers that know no
    better treat it as one (reload before deciding again)."""

    def __init__(self, table_id: str, version: int, acknowledged: int, wanted: int) -> None:
        super().__init__(
            f"table {table_id!r} version {version}: {acknowledged} of {wanted} replica(s) acknowledged"
        )
        self.table_id = table_id
        self.version = version
        self.acknowledged = acknowledged
        self.wanted = wanted


class VersionConflict(StorageError):
    """The table's stored version is not the one the caller read: someone else wrote first."""

    def __init__(self, table_id: str, expected: int, actual: int) -> None:
        super().__init__(f"table {table_id!r}: expected version {expected}, found {actual}")
        self.table_id = table_id
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table as stored: the document and the version a later `save` must quote."""

    table_id: str
    version: int
    document: str


@dataclass(frozen=True, slots=True)
class Deadline:
    """A turn deadline. `token` names the turn it was set for, so a late firing can be recognised."""

    when: float
    token: str


@dataclass(frozen=True, slots=True)
class SendBucket:
    """At most `limit` sends in any window of `window` seconds, shared by every process."""

    key: str
    limit: int
    window: float

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError("a send bucket needs limit >= 1")
        if self.window <= 0:
            raise ValueError("a send bucket needs window > 0")
        if not self.key:
            raise ValueError("a send bucket needs a key")


HANDOVER_TTL = 15 * 60.0
"""How long a handed-over message waits for a process to take it (`Store.hand_over`). Longer and it is
no news: the table it shows has been redrawn or has expired, and a live process would never send it."""


@dataclass(frozen=True, slots=True)
class HandedOver:
    """A message a stopping process had queued and not sent (waiting for a chat's or the bot's send
    budget), kept in the store so that another process sends it (`Store.hand_over`,
    `Store.take_handed_over`). Neutral: the adapter that made it says what `audience` and `payload` mean.

    - `platform`: the adapter ("tg", "dc"): a process takes only its own platform's messages.
    - `table_id`: the table the message is about; it tags the store's keys (the message lives in the
      table's hash slot) and groups the messages. A message about no table uses its audience's scope.
    - `audience`: who it is for, in the adapter's terms (a chat id, a channel id, a user id).
    - `key`: the message's key (None: an unkeyed message). For one (table, audience, key) the store
      keeps one message: the one with the newest `version`; an older one handed over later is dropped.
    - `version`: the version of the table the message was drawn from (None: unknown). The taker compares
      it with what the chat shows now, so an older state never replaces a newer one on screen.
    - `order`: the order the process had queued the messages in; the taker sends each audience's
      messages in this order.
    - `payload`: the adapter's own serialisation of the message (text, buttons, priority...).
    """

    platform: str
    table_id: str
    audience: str
    key: str | None
    version: int | None
    order: int
    payload: str

    @property
    def slot_name(self) -> str:
        """The entry's name within its table: one per (audience, key); unkeyed ones by their order."""
        tail = f"k:{self.key}" if self.key is not None else f"o:{self.order}"
        return f"{self.audience}\n{tail}"

    def encode(self) -> str:
        """The message as the store keeps it (JSON)."""
        return json.dumps(
            {
                "p": self.platform,
                "t": self.table_id,
                "a": self.audience,
                "k": self.key,
                "v": self.version,
                "o": self.order,
                "m": self.payload,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def decode(cls, value: str) -> HandedOver | None:
        """The message `encode` wrote; None for anything else (a value of a later format is skipped,
        not fatal)."""
        try:
            data = json.loads(value)
            key, version = data["k"], data["v"]
            return cls(
                str(data["p"]),
                str(data["t"]),
                str(data["a"]),
                None if key is None else str(key),
                None if version is None else int(version),
                int(data["o"]),
                str(data["m"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


def check_id(kind: str, value: str) -> None:
    """Refuse ids that cannot be hash-tagged (an empty `{}` tag hashes the whole key) or listed (a table
    keeps its users' keys one per line)."""
    if not value:
        raise ValueError(f"empty {kind}")
    if "\n" in value:
        raise ValueError(f"a line break in a {kind}")


class Store(abc.ABC):
    """What the service may ask of storage. Implementations: `RedisStore`, `MemoryStore`.

    Round trips (Redis, common case): `load` 1, `save` 1 (standalone Redis: 1, or 2 when the table's
    new expiry passes its users' index horizon, about once per `Retention.user_index_seconds / 2` of a
    long game; cluster mode: 1 when no user index changes, the chat key tags the same slot as the table
    id and the deadline is not earlier than the one the index holds for the table, else 2; with
    `wait_replicas` the WAIT rides in the save's own request, so no more), `claim_due` 1 when nothing
    is due (2 when something is, 3 on a cluster), `set_deadline` 1 (cluster: 2 when the new deadline
    is earlier than the indexed one), `acquire_sends` 1, `delete` 1 (cluster: up to 3),
    `tables_for_user` 2, the rest 1.
    """

    # --- tables -------------------------------------------------------------------------------------

    @abc.abstractmethod
    async def load(self, table_id: str) -> StoredTable | None:
        """The live table, or None if it never existed, was deleted or expired."""

    @abc.abstractmethod
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
        """Compare-and-set the table's document; returns the new version (expected_version + 1).

        Succeeds only if the stored version equals `expected_version` (0: the table must not exist), else
        raises `VersionConflict` and changes nothing. On success, in the same atomic step: the document's
        TTL (and its stream's) is set to `ttl_seconds`; `event` is appended to the table's stream;
        `chat_key` (if given) is pointed at this table with the same TTL (so pass it on every save to keep
        the chat's entry alive as long as the table); each of `users_added` gets the table
        in its set, each of `users_removed` loses it; the turn deadline is replaced by `deadline` or removed
        (`drop_deadline`), or left alone when neither is given.
        """

    @abc.abstractmethod
    async def delete(
        self,
        table_id: str,
        *,
        expected_version: int | None = None,
        chat_key: str | None = None,
        user_keys: Collection[str] = (),
    ) -> bool:
        """Remove the table, its stream and deadline, its chat entry (only if the chat still points at this
        table) and its membership in `user_keys`' sets. With `expected_version`, a compare-and-delete that
        raises `VersionConflict` on mismatch. Returns whether a document was removed.

        To keep a finished table readable for a while instead, `save` it with a short `ttl_seconds`.
        """

    @abc.abstractmethod
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
        """Move the table from `old_id` to `new_id` (a chat whose platform id changed), with `document`
        (the caller rewrote what in it names the old id).

        A compare-and-set on both ids: succeeds only if `old_id` is at `expected_version` and `new_id`
        holds no table, else raises `VersionConflict` (its `table_id` says which) and changes nothing.
        The table keeps its version (buttons drawn before still match), its events and its deadline;
        the chat index moves from `chat_keys[0]` (removed only if it pointed at `old_id`) to
        `chat_keys[1]`; each of `user_keys` has `old_id` replaced by `new_id` in its set; and
        `moved_to(old_id)` answers `new_id` for `ttl_seconds`. Calling it again after it succeeded (a
        lost reply, or two processes moving the same chat) raises `VersionConflict` for `old_id`: the
        caller reads `moved_to` to tell that case apart.

        Redis standalone: one script, atomic. Redis Cluster (the two ids hash to different slots): copy
        into `new_id`, then a compare-and-delete of `old_id` (undoing the copy if it fails), then the
        deadline and the user sets; a process dying in between leaves both copies or a missing index
        entry, never a lost table (see `RedisStore.move_table`).
        """

    @abc.abstractmethod
    async def moved_to(self, table_id: str) -> str | None:
        """Where `move_table` moved `table_id` (None if it did not, or long ago)."""

    async def version(self, table_id: str) -> int | None:
        """The table's stored version without its document (a cheap check for change: the web table's
        live updates poll it), None when there is no table."""
        stored = await self.load(table_id)
        return None if stored is None else stored.version

    @abc.abstractmethod
    async def read_events(self, table_id: str, count: int | None = None) -> list[str]:
        """The table stream's events, oldest first (the last `count` if given)."""

    @abc.abstractmethod
    async def table_for_chat(self, chat_key: str) -> str | None:
        """The id of the chat's live table, if any."""

    @abc.abstractmethod
    async def tables_for_user(self, user_key: str) -> set[str]:
        """Live tables whose saves listed this user as added and not since removed.

        The index is a hint: a table id is reused per chat, so the service checks the seat in the document.
        Tables that expired or were deleted without listing the user are filtered out, and pruned from
        the index. The index itself expires once no table listing the user can still be alive (see
        `Retention.user_index_seconds`).
        """

    # --- deadlines ----------------------------------------------------------------------------------

    @abc.abstractmethod
    async def set_deadline(self, table_id: str, when: float, token: str) -> None:
        """Set (replace) the table's single turn deadline. A deadline belongs to a live table: none is
        set for a table that does not exist, and it goes with the table (deleted or expired)."""

    @abc.abstractmethod
    async def clear_deadline(self, table_id: str, token: str | None = None) -> bool:
        """Remove the table's deadline (only if its token is `token`, when given). Returns whether removed."""

    @abc.abstractmethod
    async def claim_due(
        self, limit: int, now: float | None = None, *, lease_seconds: float | None = None
    ) -> list[tuple[str, str]]:
        """Claim up to `limit` deadlines due at `now`, earliest first, as (table_id, token) pairs. The
        deadline of a table that no longer exists is dropped, not returned.

        Atomic: with any number of processes polling, each due deadline goes to exactly one caller.
        Without a lease the deadline is removed. With `lease_seconds`, it is postponed to now + lease
        instead, so it fires again if the claimer dies before saving the table with a new deadline (or
        dropping it); the token check and the table's compare-and-set keep a second firing harmless.
        """

    @abc.abstractmethod
    async def next_deadline(self) -> float | None:
        """When the earliest deadline falls due (lets a poller sleep until then). It may be earlier than
        any deadline (Redis indexes lower bounds: a deadline dropped by a save leaves its entry until a
        claim drops it), never later."""

    async def repair_deadlines(self, batch: int = 500) -> int:
        """Make sure every live table's deadline can be claimed: index again any that its index lost (a
        lost node, an interrupted write, an older version's index). Returns how many were repaired.
        Cheap to call when nothing is wrong, but it reads every table: every few minutes, not per tick.
        A store whose deadlines cannot go missing (memory) has nothing to do."""
        return 0

    @abc.abstractmethod
    async def tables_with_deadlines(self, limit: int) -> list[str]:
        """Up to `limit` tables that have a deadline, earliest first: every table waiting for a player's
        turn has one, so this is how a process that just started finds the games in play (to send again
        what a crashed process had not sent yet)."""

    # --- statistics and ratings ---------------------------------------------------------------------

    @abc.abstractmethod
    async def add_stats(self, scope_key: str, fields: Mapping[str, float]) -> None:
        """Add each value to its counter in the scope (a user, a chat, a user within a chat...). The scope
        lives `Retention.stats_seconds` after its last addition."""

    @abc.abstractmethod
    async def get_stats(self, scope_key: str) -> dict[str, float]:
        """All counters of a scope; empty if none."""

    @abc.abstractmethod
    async def set_rating(self, board_key: str, member: str, rating: float) -> None:
        """Put the member on the board with this rating. The board keeps members rated within
        `Retention.stats_seconds`, at most `Retention.board_max` of them (the least recently rated go)."""

    @abc.abstractmethod
    async def get_rating(self, board_key: str, member: str) -> float | None:
        """The member's rating on the board, if rated."""

    @abc.abstractmethod
    async def top(self, board_key: str, n: int) -> list[tuple[str, float]]:
        """The `n` best (member, rating) pairs, highest first; equal ratings in descending member order."""

    # --- platform message references -------------------------------------------------------------

    @abc.abstractmethod
    async def get_refs(self, scope_key: str) -> dict[str, str]:
        """The references kept for `scope_key` (e.g. a chat): name -> value, such as the platform id of the
        message an adapter edits in place for a message key. Shared by every process, so the process that
        handles the next update edits the message another one sent."""

    @abc.abstractmethod
    async def set_ref(self, scope_key: str, name: str, value: str, *, ttl_seconds: float) -> str | None:
        """Set one reference and return the value it replaced, in one atomic step (so of two processes
        that each posted a message for one name, the one writing second learns of the other's message);
        the whole scope expires `ttl_seconds` after its last change."""

    @abc.abstractmethod
    async def delete_ref(self, scope_key: str, name: str) -> None:
        """Forget one reference (e.g. the message was deleted)."""

    # --- send budget --------------------------------------------------------------------------------

    @abc.abstractmethod
    async def acquire_sends(self, buckets: Sequence[SendBucket], now: float | None = None) -> float:
        """Try to take one send from every bucket at once.

        Returns 0.0 when the send may go now (and records it in every bucket), else the seconds to wait
        before trying again (nothing recorded). Atomic across processes: no bucket ever records more than
        `limit` sends in any window of `window` seconds, provided callers' `now` does not go backwards
        (omit it to use the store's clock, the Redis server's for all processes).
        """

    async def acquire_send(
        self, bucket_key: str, limit: int, window_seconds: float, now: float | None = None
    ) -> float:
        """`acquire_sends` for a single bucket."""
        return await self.acquire_sends([SendBucket(bucket_key, limit, window_seconds)], now)

    @abc.abstractmethod
    async def hold_sends(self, bucket_key: str, seconds: float, now: float | None = None) -> None:
        """Refuse sends through the bucket for `seconds` (a platform's 429 retry_after), for all processes."""

    # --- request budgets ----------------------------------------------------------------------------

    @abc.abstractmethod
    async def count_hit(self, key: str, window: float) -> tuple[int, float]:
        """Count one hit on `key` (one person's commands in one chat, say): how many hits the key's current
        window holds, this one included, and the seconds until that window ends.

        A window opens with the first hit after the previous one closed and lasts `window` seconds (a fixed
        window: a budget of N lets through at most 2N hits in any `window` seconds, across a window's end).
        Atomic across processes: concurrent callers each get a different count. Times are the store's
        own (the Redis server's, the memory store's clock)."""

    # --- messages handed over by a stopping process ------------------------------------------------

    @property
    @abc.abstractmethod
    def keeps_after_exit(self) -> bool:
        """Whether what this store keeps outlives the process (Redis: yes; memory: no). A process that
        stops with messages still queued hands them over only when it does; otherwise they are lost,
        and the process says how many (`bot.ops.shutdown`)."""

    @abc.abstractmethod
    async def hand_over(self, messages: Sequence[HandedOver], *, ttl_seconds: float = HANDOVER_TTL) -> int:
        """Keep `messages` for another process; how many were kept.

        Per (platform, table, audience, key) one message is kept, the one with the newest version: a
        keyed message whose slot already holds a newer version is dropped (not counted); an equal or
        newer one replaces it. Unkeyed messages are kept side by side. Each table's messages expire
        `ttl_seconds` after the last hand-over to that table. The table's messages are one step (Redis:
        one script in the table's slot); the index that lets `take_handed_over` find the table follows
        (Redis Cluster: another slot), so a taker never finds an index entry before its messages.
        """

    @abc.abstractmethod
    async def take_handed_over(self, platform: str, limit: int = 100) -> list[HandedOver]:
        """Take the messages handed over for `platform`, from up to `limit` tables (those handed over
        first), sorted by (`order`, audience). Taking removes them: with any number of processes
        taking at once, each message goes to exactly one (sending it twice would show it twice).

        A process that dies between taking and sending loses what it took (as a killed process loses its
        queues); the table is redrawn at its next change, and a lost turn hand is found by the Telegram
        adapter's recovery."""

    # --- plumbing -----------------------------------------------------------------------------------

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise `StorageUnavailable` unless the store answers."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections. The store must not be used afterwards."""

    @property
    @abc.abstractmethod
    def round_trips(self) -> int:
        """Requests sent to the server so far (0 forever for the memory store), for benchmarks."""


def bucket_list(buckets: Sequence[SendBucket]) -> list[SendBucket]:
    """Validate a bucket list: at least one, each key once (two entries for one key would double-count)."""
    out = list(buckets)
    if not out:
        raise ValueError("acquire_sends needs at least one bucket")
    keys = [b.key for b in out]
    if len(set(keys)) != len(keys):
        raise ValueError("acquire_sends got the same bucket twice")
    return out
