"""The tables on Redis: documents, streams, the chat and user indexes, moves.

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
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from typing import Any

from bot.storage import redis_scripts as lua
from bot.storage.base import Deadline, StorageUnavailable, StorageUncertain, StoredTable, VersionConflict
from bot.storage.checks import check_id, check_move, check_save
from bot.storage.redis_base import _ms, _num, log
from bot.storage.redis_wait import RedisWait

__all__ = ["RedisTables"]


class RedisTables(RedisWait):
    """`TableStore` on Redis."""

    async def load(self, table_id: str) -> StoredTable | None:
        check_id("table id", table_id)
        version, document = await self.call("HMGET", self.keys.table(table_id), "v", "d")
        if version is None or document is None:
            return None
        return StoredTable(table_id, int(version), document)

    async def version(self, table_id: str) -> int | None:
        check_id("table id", table_id)
        version = await self.call("HGET", self.keys.table(table_id), "v")
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
        check_save(table_id, ttl_seconds, chat_key, users_added, users_removed, deadline, drop_deadline)
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
            follow_up.append(["EVAL", lua.INDEX.source, 2, due, gen, "put", table_id, put_score, put_gen])
        if users:
            # Users whose index must outlive the table (they joined, or the table outlived their
            # horizon): listed again and kept until the horizon, each in its own slot.
            follow_up += [["EVAL", lua.EXTEND.source, 1, k.user(u), table_id, horizon] for u in users]
        if chat_key is not None and not chat_inline:
            follow_up.append(["SET", k.chat(chat_key), table_id, "PX", ttl])
        if not rest_inline:
            follow_up += [["SREM", k.user(u), table_id] for u in users_removed]
        if follow_up:
            try:
                await self.pipeline(follow_up)
            except StorageUnavailable as exc:
                # The move is stored: a node of the other slots (a deadline shard, a user's index) is
                # away. Not a failed move; what is missing the deadline sweep puts back, and a user
                # index is a hint the next join or long save writes again.
                log.warning("save of %s stored; its follow-up in other slots failed: %s", table_id, exc)
        if acked is not None and acked < self._wait_replicas:
            raise StorageUncertain(table_id, int(version), acked, self._wait_replicas)
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
        ok, result, *dropped = await self.script(lua.DELETE, keys, args)
        if not int(ok):
            raise VersionConflict(table_id, expected_version or 0, int(result))
        if not rest_inline:
            follow_up: list[list[Any]] = [["SREM", k.user(u), table_id] for u in user_keys]
            if dropped and dropped[0] != "":
                due, gen = k.due_of(table_id)
                follow_up.append(["EVAL", lua.INDEX.source, 2, due, gen, "drop", table_id, dropped[0]])
            if follow_up:
                await self.pipeline(follow_up)
        if chat_key is not None and not chat_inline:
            # Compare-and-delete within the chat key's own slot.
            await self.script(lua.CHAT_UNLINK, [k.chat(chat_key)], [table_id])
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
        check_move(old_id, new_id, ttl_seconds, user_keys)
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
                old_id, new_id, expected_version, await self.script(lua.MOVE, keys, ["all", *args])
            )
        else:
            stored, dw, dt, dg = await self.call("HMGET", old_keys[0], "v", "dw", "dt", "dg")
            args += [dw or "", dt or "", dg or ""]
            if stored is None or int(stored) != expected_version:
                # Reported before the copy, as the standalone script does (a second mover learns of the
                # first from the old id, not from the copy it would meet).
                raise VersionConflict(old_id, expected_version, 0 if stored is None else int(stored))
            in_keys = [*new_keys, new_chat]
            self._moved_or_raise(
                old_id, new_id, expected_version, await self.script(lua.MOVE, in_keys, ["in", *args])
            )
            out = await self.script(lua.MOVE, [*old_keys, old_chat, k.moved(old_id)], ["out", *args])
            if not int(out[0]):
                await self.script(lua.MOVE, in_keys, ["undo", *args])
                self._moved_or_raise(old_id, new_id, expected_version, out)
            follow_up: list[list[Any]] = []
            if dg:
                old_due, old_gen = k.due_of(old_id)
                follow_up.append(["EVAL", lua.INDEX.source, 2, old_due, old_gen, "drop", old_id, dg])
            if dw:
                new_due, new_gen = k.due_of(new_id)
                follow_up.append(
                    ["EVAL", lua.INDEX.source, 2, new_due, new_gen, "put", new_id, dw, dg or "0"]
                )
            ttl = _ms(ttl_seconds)
            for user in user_keys:
                follow_up += [
                    ["SREM", k.user(user), old_id],
                    ["EVAL", lua.EXTEND.source, 1, k.user(user), new_id, ttl, "in"],
                ]
            if follow_up:
                await self.pipeline(follow_up)
        if chat_keys is not None and not chats_inline:
            await self.script(lua.CHAT_UNLINK, [k.chat(chat_keys[0])], [old_id])
            await self.call("SET", k.chat(chat_keys[1]), new_id, "PX", _ms(ttl_seconds))

    @staticmethod
    def _moved_or_raise(old_id: str, new_id: str, expected: int, reply: Sequence[Any]) -> None:
        if int(reply[0]):
            return
        which = old_id if reply[2] == "old" else new_id
        raise VersionConflict(which, expected if which == old_id else 0, int(reply[1]))

    async def moved_to(self, table_id: str) -> str | None:
        check_id("table id", table_id)
        result: str | None = await self.call("GET", self.keys.moved(table_id))
        return result

    async def read_events(self, table_id: str, count: int | None = None) -> list[str]:
        check_id("table id", table_id)
        stream = self.keys.stream(table_id)
        if count is None:
            entries = await self.call("XRANGE", stream, "-", "+")
        elif count <= 0:
            return []
        else:
            entries = list(reversed(await self.call("XREVRANGE", stream, "+", "-", "COUNT", count)))
        return [fields["e"] for _, fields in entries]

    async def table_for_chat(self, chat_key: str) -> str | None:
        check_id("chat key", chat_key)
        result: str | None = await self.call("GET", self.keys.chat(chat_key))
        return result

    async def tables_for_user(self, user_key: str) -> set[str]:
        check_id("user key", user_key)
        members = sorted(await self.call("SMEMBERS", self.keys.user(user_key)))
        if not members:
            return set()
        # Table keys live in other slots: check them in one pipeline (fanned out per node in a cluster).
        exists = await self.pipeline([["EXISTS", self.keys.table(t)] for t in members])
        alive = {t for t, found in zip(members, exists, strict=True) if int(found)}
        dead = [t for t in members if t not in alive]
        if dead:
            # Expired or deleted tables leave the index here (the last one out removes the key).
            await self.call("SREM", self.keys.user(user_key), *dead)
        return alive
