"""Turn deadlines on Redis.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import RedisCluster

from bot.storage import redis_scripts as lua
from bot.storage.checks import check_id
from bot.storage.redis_base import RedisBase, _glob_escape, _num, _pairs, log
from bot.storage.redis_scripts import Script

__all__ = ["RedisDeadlines"]


class RedisDeadlines(RedisBase):
    """`DeadlineStore` on Redis: the truth in the table's hash, a sharded index of lower bounds."""

    def _table_deadline_keys(self, table_id: str) -> list[str]:
        """Keys of deadline.lua for a table: its hash, and on standalone Redis its index shard too."""
        keys = [self.keys.table(table_id)]
        if not self._cluster:
            keys += list(self.keys.due_of(table_id))
        return keys

    def _index_call(self, table_id: str, op: str, *args: Any) -> tuple[Script, list[str], list[Any]]:
        return lua.INDEX, list(self.keys.due_of(table_id)), [op, table_id, *args]

    async def set_deadline(self, table_id: str, when: float, token: str) -> None:
        check_id("table id", table_id)
        _, score, gen = await self.script(
            lua.DEADLINE, self._table_deadline_keys(table_id), ["set", table_id, _num(when), token]
        )
        if score != "":
            await self._scripts([self._index_call(table_id, "put", score, gen)])

    async def clear_deadline(self, table_id: str, token: str | None = None) -> bool:
        check_id("table id", table_id)
        removed, gen = await self.script(
            lua.DEADLINE, self._table_deadline_keys(table_id), ["clear", table_id, token or ""]
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
            [(lua.INDEX, [k.due(i), k.due_gen(i)], ["claim", at, lease, limit]) for i in shards]
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
            (lua.DEADLINE, self._table_deadline_keys(table_id), ["check", table_id, at or shard_now, gen])
            for _, table_id, gen, shard_now in kept
        ]
        calls += [self._index_call(table_id, "put", _num(score), gen) for score, table_id, gen, _ in extra]
        checked = await self._scripts(calls)
        due: list[tuple[float, str, str]] = []
        follow_up: list[tuple[Script, list[str], list[Any]]] = []
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
        replies = await self.pipeline(
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
            whens = await self.pipeline([["HGET", self.keys.table(t), "dw"] for t in page])
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
        replies = await self.pipeline(reads)
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
        calls = [(lua.DEADLINE, self._table_deadline_keys(t), ["reindex", t]) for t in broken]
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
            entries = _pairs(await self.call("ZRANGE", legacy, 0, batch - 1, "WITHSCORES"))
            if not entries:
                return moved
            ids = [t for t, _ in entries]
            toks = await self.call("HMGET", tokens, *ids)
            current = await self.pipeline([["HMGET", k.table(t), "v", "dw"] for t in ids])
            for (table_id, when), token, (version, dw) in zip(entries, toks, current, strict=True):
                if version is not None and dw is None:
                    await self.set_deadline(table_id, when, token or "")
                    moved += 1
            await self._scripts([(lua.INDEX, [legacy, tokens], ["take", t, _num(w)]) for t, w in entries])
