"""Redis key layout.

Every key is `<prefix>:{<tag>}:<kind>` so that Redis Cluster places keys sharing a tag in one hash slot:

    <prefix>:{<table_id>}:table      hash: v (version), d (document), w (id of the write that made v),
                                     u (user keys it lists), x (until when their indexes live)
    <prefix>:{<table_id>}:stream     stream of the table's events, field `e`, trimmed MAXLEN ~
    <prefix>:{<chat_key>}:chat       string: the chat's live table id, same TTL as the table
    <prefix>:{<table_id>}:moved      string: the id `move_table` moved the table to (for old buttons)
    <prefix>:{<user_key>}:user       set of table ids the user sits at (a hint; expires when no listed table
                                     can need it any more, dead ids pruned on read)
    <prefix>:{deadlines}:due         zset: table id -> deadline (POSIX seconds)
    <prefix>:{deadlines}:token       hash: table id -> token of that deadline
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
share a slot and a save touches one slot. Deadlines are one global zset so that any process can poll
them with one command; all send budgets share the `{sends}` tag so that a chat, a group and the global
bucket can be checked atomically in one script. Both are single slots (hot, but small and fast).
"""

from __future__ import annotations

from redis.crc import key_slot

__all__ = ["KeyLayout"]


class KeyLayout:
    """Builds the keys of one deployment (the prefix separates deployments and test runs)."""

    def __init__(self, prefix: str = "thousand") -> None:
        if not prefix or "{" in prefix or "}" in prefix:
            raise ValueError("a key prefix must be non-empty and hold no braces (they would hash-tag it)")
        self.prefix = prefix

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

    def deadlines(self) -> str:
        return self._tagged("deadlines", "due")

    def deadline_tokens(self) -> str:
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
