"""Redis key layout.

Every key is `<prefix>:{<tag>}:<kind>` so that Redis Cluster places keys sharing a tag in one hash slot:

    <prefix>:{<table_id>}:table      hash: v (version), d (document), w (id of the write that made v),
                                     u (user keys it lists), x (until when their indexes live)
    <prefix>:{<table_id>}:stream     stream of the table's events, field `e`, trimmed MAXLEN ~
    <prefix>:{<chat_key>}:chat       string: the chat's live table id, same TTL as the table
    <prefix>:{<table_id>}:moved      string: the id `move_table` moved the table to (for old buttons)
    <prefix>:{<user_key>}:user       set of table ids the user sits at (a hint; expires when no listed table
                                     can need it any more, dead ids pruned on read)
                                     and the table's turn deadline: dw (when, POSIX s), dt (token),
                                     dg (generation, raised by every change of the deadline), di (the
                                     score this table's entry in the due index is known to be at most)
    <prefix>:{<shard tag>}:due       zset, one per deadline shard: table id -> a lower bound of its
                                     deadline (`deadline_shard`; the tag is `deadlines:<i>:<n>`)
    <prefix>:{<shard tag>}:due:gen   hash: table id -> generation (dg) of that entry
    <prefix>:{deadlines}:due         zset, legacy (before issue 26): table id -> deadline; moved to the
    <prefix>:{deadlines}:token       hash, legacy: table id -> token     table hashes by the sweep
    <prefix>:{<scope_key>}:stats     hash: counter -> float
    <prefix>:{<board_key>}:board     zset: member -> rating (bounded, expires, see `Retention`)
    <prefix>:{<board_key>}:seen      zset: member -> when last rated (server µs), for the board's bounds
    <prefix>:{<scope_key>}:refs      hash: name -> platform message reference (expires after its last change)
    <prefix>:{sends}:log:<bucket>    zset: one entry per recorded send (sliding window log)
    <prefix>:{sends}:hold:<bucket>   string: POSIX time until which the bucket refuses sends
    <prefix>:{<hit key>}:hits        string: hits counted in the key's current window (expires with it)
    <prefix>:{<table_id>}:handover:<platform>
                                     hash: messages a stopping process handed over for the table, name
                                     (audience, key) -> version and message; expires `HANDOVER_TTL`
                                     after the last hand-over
    <prefix>:{handover}:<platform>   zset: table id -> when handed over (POSIX s): where a taker looks;
                                     expires with the last hand-over; a member whose hash expired is
                                     dropped by the next taker

The service uses the chat key as the table id (one live table per chat), so table, stream and chat index
share a slot and a save touches one slot. A table's deadline lives in its own hash (written by the save
script), and the index a poller reads is sharded: table `t` is indexed in shard `crc32(t) mod N`, and the
tag of shard `i` is chosen so that its hash slot lies in the i-th N-th of the 16384 slots, so with the
usual even slot layout the shards (and the index writes) spread evenly over the masters; nothing is
written by every move. All send budgets share the `{sends}` tag so that a chat, a group and the global
bucket can be checked atomically in one script (a single slot: hot, but small and fast).
"""

from __future__ import annotations

import functools
import zlib

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

__all__ = ["DEFAULT_DEADLINE_SHARDS", "KeyLayout", "shard_tags"]

DEFAULT_DEADLINE_SHARDS = 12
"""Shards of the due index: enough that 3 to 12 masters each hold some, few enough that a poll (one read
per shard, pipelined) stays cheap."""


@functools.cache
def shard_tags(shards: int) -> tuple[str, ...]:
    """The hash tag of each deadline shard: `deadlines:<i>:<n>` with the smallest `n` that puts the tag's
    slot in the i-th `shards`-th of the slot range (the same for every prefix: only the tag is hashed)."""
    if not 1 <= shards <= 1024:
        raise ValueError("deadline shards: from 1 to 1024")
    tags = []
    for i in range(shards):
        n = 0
        while key_slot(f"deadlines:{i}:{n}".encode()) * shards // REDIS_CLUSTER_HASH_SLOTS != i:
            n += 1
        tags.append(f"deadlines:{i}:{n}")
    return tuple(tags)


class KeyLayout:
    """Builds the keys of one deployment (the prefix separates deployments and test runs)."""

    def __init__(self, prefix: str = "thousand", deadline_shards: int = DEFAULT_DEADLINE_SHARDS) -> None:
        if not prefix or "{" in prefix or "}" in prefix:
            raise ValueError("a key prefix must be non-empty and hold no braces (they would hash-tag it)")
        self.prefix = prefix
        self.shard_tags = shard_tags(deadline_shards)

    def _tagged(self, tag: str, kind: str) -> str:
        if not tag:
            raise ValueError(f"empty id for a {kind} key")
        return f"{self.prefix}:{{{tag}}}:{kind}"

    def table(self, table_id: str) -> str:
        return self._tagged(table_id, "table")

    def stream(self, table_id: str) -> str:
        return self._tagged(table_id, "stream")

    def moved(self, table_id: str) -> str:
        return self._tagged(table_id, "moved")

    def chat(self, chat_key: str) -> str:
        return self._tagged(chat_key, "chat")

    def user(self, user_key: str) -> str:
        return self._tagged(user_key, "user")

    @property
    def deadline_shards(self) -> int:
        return len(self.shard_tags)

    def deadline_shard(self, table_id: str) -> int:
        """The due-index shard of a table (stable across processes and versions: crc32 of the id)."""
        return zlib.crc32(table_id.encode()) % len(self.shard_tags)

    def due(self, shard: int) -> str:
        """A shard of the due index: table id -> a lower bound of the table's deadline."""
        return self._tagged(self.shard_tags[shard], "due")

    def due_gen(self, shard: int) -> str:
        """The generations of a shard's entries (same slot as `due`)."""
        return self._tagged(self.shard_tags[shard], "due:gen")

    def due_of(self, table_id: str) -> tuple[str, str]:
        """The shard keys (`due`, `due_gen`) that index `table_id`."""
        shard = self.deadline_shard(table_id)
        return self.due(shard), self.due_gen(shard)

    def legacy_deadlines(self) -> str:
        """The one global due index of versions before issue 26 (migrated by the repair sweep)."""
        return self._tagged("deadlines", "due")

    def legacy_deadline_tokens(self) -> str:
        return self._tagged("deadlines", "token")

    def stats(self, scope_key: str) -> str:
        return self._tagged(scope_key, "stats")

    def board(self, board_key: str) -> str:
        return self._tagged(board_key, "board")

    def board_seen(self, board_key: str) -> str:
        return self._tagged(board_key, "seen")

    def refs(self, scope_key: str) -> str:
        return self._tagged(scope_key, "refs")

    def send_log(self, bucket_key: str) -> str:
        return f"{self._tagged('sends', 'log')}:{bucket_key}"

    def send_hold(self, bucket_key: str) -> str:
        return f"{self._tagged('sends', 'hold')}:{bucket_key}"

    def hits(self, key: str) -> str:
        return self._tagged(key, "hits")

    def handover(self, table_id: str, platform: str) -> str:
        return f"{self._tagged(table_id, 'handover')}:{platform}"

    def handover_index(self, platform: str) -> str:
        return self._tagged("handover", platform)

    @staticmethod
    def slot(key: str) -> int:
        """The Redis Cluster hash slot of a key."""
        return key_slot(key.encode())
