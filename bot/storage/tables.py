"""Tables: one versioned document per table, its event stream, and the indexes that find it (chat ->
table, user -> tables). Every change is a compare-and-set on the table's version."""

from __future__ import annotations

import abc
from collections.abc import Collection
from dataclasses import dataclass

from bot.storage.deadlines import Deadline

__all__ = ["DEFAULT_STREAM_MAXLEN", "StoredTable", "TableStore"]

DEFAULT_STREAM_MAXLEN = 1000
"""Events kept per table stream (Redis trims approximately, to at least this many)."""


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table as stored: the document and the version a later `save` must quote."""

    table_id: str
    version: int
    document: str


class TableStore(abc.ABC):
    """The tables' documents, streams and indexes (see `Store` for the round trips)."""

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
