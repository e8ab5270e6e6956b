"""The store's argument checks, written once for every implementation.

A store refuses what it could not keep faithfully: an id that cannot be hash-tagged or listed, a time to
live that has already run out, a save told both to set a deadline and to drop it. The checks come first
in each method of `MemoryStore` and `RedisStore`, before anything is read or written, so both refuse the
same calls with the same `ValueError` and a refused call changes nothing. (`MeteredStore` delegates and
checks nothing itself.)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from bot.storage.budgets import SendBucket
from bot.storage.deadlines import Deadline
from bot.storage.handover import HandedOver

__all__ = [
    "bucket_list",
    "check_handover",
    "check_id",
    "check_move",
    "check_save",
    "check_ttl",
    "check_window",
]


def check_id(kind: str, value: str) -> None:
    """Refuse ids that cannot be hash-tagged (an empty `{}` tag hashes the whole key) or listed (a table
    keeps its users' keys one per line)."""
    if not value:
        raise ValueError(f"empty {kind}")
    if "\n" in value:
        raise ValueError(f"a line break in a {kind}")


def check_ttl(ttl_seconds: float) -> None:
    if ttl_seconds <= 0:
        raise ValueError("ttl_seconds must be positive")


def _check_users(users: Iterable[str]) -> None:
    for user in users:
        check_id("user key", user)


def check_save(
    table_id: str,
    ttl_seconds: float,
    chat_key: str | None,
    users_added: Collection[str],
    users_removed: Collection[str],
    deadline: Deadline | None,
    drop_deadline: bool,
) -> None:
    """`Store.save`'s arguments."""
    check_id("table id", table_id)
    check_ttl(ttl_seconds)
    if deadline is not None and drop_deadline:
        raise ValueError("give a deadline or drop it, not both")
    _check_users((*users_added, *users_removed))
    if chat_key is not None:
        check_id("chat key", chat_key)


def check_move(old_id: str, new_id: str, ttl_seconds: float, user_keys: Collection[str]) -> None:
    """`Store.move_table`'s arguments."""
    check_id("table id", old_id)
    check_id("table id", new_id)
    check_ttl(ttl_seconds)
    if old_id == new_id:
        raise ValueError("a table moves to another id")
    _check_users(user_keys)


def check_window(key: str, window: float) -> None:
    """`Store.count_hit`'s arguments."""
    check_id("hit key", key)
    if window <= 0:
        raise ValueError("a hit window must be longer than 0 s")


def check_handover(messages: Sequence[HandedOver], ttl_seconds: float) -> None:
    """`Store.hand_over`'s arguments: every message's table id and platform tag keys."""
    check_ttl(ttl_seconds)
    for message in messages:
        check_id("table id", message.table_id)
        check_id("platform", message.platform)


def bucket_list(buckets: Sequence[SendBucket]) -> list[SendBucket]:
    """Validate a bucket list: at least one, each key once (two entries for one key would double-count)."""
    out = list(buckets)
    if not out:
        raise ValueError("acquire_sends needs at least one bucket")
    keys = [b.key for b in out]
    if len(set(keys)) != len(keys):
        raise ValueError("acquire_sends got the same bucket twice")
    return out
