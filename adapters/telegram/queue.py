"""A chat's queue: which waiting message goes next, and what a new one does to those waiting.

While a message waits in the queue, a newer message for the same key takes its place instead of queueing
behind it: under a tight budget only the latest state of a table or a hand is sent. A waiting edit of a
message that a `replace_old` message is about to replace (and delete) is dropped. An unkeyed message
identical to one still waiting (ten `/rules` answers for one group) is dropped too.

Each message has a priority (`limits.URGENT`, `NORMAL`, `INFO`): the worker sends the most urgent
waiting message first (in order among equals), deletions of replaced messages come after everything
else of the chat, and a less urgent send that is waiting for the budget gives way when a more urgent
message arrives (the rate limiter raises `Preempted`; the message goes back to its place). One thing
priority never does: post a keyed message (a table, a deal's result, a hand: the game's own messages)
before a keyed message queued earlier for the same chat. People read a chat from top to bottom, so
the result of deal 1 must stand above the table of deal 2, and a status edited to "a table was found"
must say so before the table appears. A keyed message queued earlier is therefore as urgent as the
most urgent keyed message posted after it (`effective`), and a keyed message that replaces one still
waiting while other keyed messages wait behind that one takes its place at the end of the queue (the
order the service produced them in). Unkeyed answers and notices still give way. A queue
holds at most `QUEUE_LIMIT` messages: beyond, the least urgent, oldest unkeyed one is dropped (logged).
Keyed messages are never dropped there: there is one per key at most, and a chat has few keys.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Final

from adapters.telegram.content import Content
from adapters.telegram.limits import INFO, NORMAL

__all__ = ["QUEUE_LIMIT", "ChatQueue", "DeliveryStats", "Op", "effective", "newer", "not_older", "same"]

log = logging.getLogger("thousand.telegram.outbox")

QUEUE_LIMIT: Final = 32
"""Messages waiting per chat; beyond, the least urgent, oldest unkeyed one is dropped."""


@dataclass(slots=True)
class Op:
    """One message for one chat. `fresh`: post anew even if the key has a message; `replace_old`: then
    delete the previous one."""

    chat_id: int
    content: Content
    key: str | None = None
    fresh: bool = False
    replace_old: bool = False
    silent: bool = False
    reply_to: int | None = None
    version: int | None = None
    """The table version the message was drawn from (`Message.version`)."""
    priority: int | None = None
    """`URGENT` goes first, then `NORMAL`, then `INFO`; None: `NORMAL` for a keyed message, `INFO` for
    an unkeyed one."""

    optional: bool = False
    """`Message.optional`: dropped instead of waiting when the budget is short."""
    store_waits: int = 0
    """Times this message went back to its queue because the store was unreachable before any of it
    went out (see `STORE_RETRIES`)."""
    series: str | None = None
    """`Message.series`: in a private chat, the messages this one replaces stay until another series
    replaces them, then go together in one deleteMessages."""
    handed_over: bool = False
    """Taken over from a process that stopped (`Outbox.take_over`): a fresh one is not posted when the
    chat already shows its version of the key, or a newer one (it was sent, or replaced, meanwhile)."""
    seq: int = 0
    """The order this process queued it in (set by `put`): the order of a hand-over."""

    @property
    def rank(self) -> int:
        if self.priority is not None:
            return self.priority
        return NORMAL if self.key is not None else INFO


@dataclass(slots=True)
class DeliveryStats:
    sent: int = 0
    edited: int = 0
    deleted: int = 0
    unchanged: int = 0
    merged: int = 0
    failed: int = 0
    dropped: int = 0
    outdated: int = 0
    """Edits dropped because the message already showed a newer version of the table."""
    raced: int = 0
    """Messages of one key posted by two processes at once (one of them was deleted)."""
    duplicates: int = 0
    """Unkeyed messages dropped because the same one was still waiting."""
    moot: int = 0
    """Waiting edits dropped because their message was about to be replaced and deleted."""
    shed: int = 0
    """Unkeyed messages dropped from a full queue."""
    preempted: int = 0
    """Sends that, waiting for the budget, gave way to a more urgent message (and were sent later)."""
    batches: int = 0
    """deleteMessages calls (replaced hands of a finished deal)."""
    skipped: int = 0
    """Optional redraws dropped because the budget was short (`Message.optional`)."""
    store_waits: int = 0
    """Messages put back to wait for an unreachable store (then sent, unless it stayed away)."""
    handed_over: int = 0
    """Messages still queued when this process stopped, kept in the store for another process."""
    taken_over: int = 0
    """Messages a stopped process had handed over, queued here."""
    lost: int = 0
    """Messages still queued when this process stopped that could not be handed over."""


@dataclass(slots=True)
class ChatQueue:
    """One chat's waiting messages, its worker and what it is sending."""

    queue: deque[Op] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    deletions: list[int] = field(default_factory=list)
    """Messages to delete once nothing else waits (replaced hands)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a message is queued: a less urgent send waiting for the budget checks whether to give way."""
    halt: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by `stop`: an urgent send waiting for the budget wakes and gives way (urgent sends do not wake
    for every message queued behind them, as less urgent ones do with `wake`)."""
    started: bool = False
    """Part of the message being delivered went out: it no longer gives way."""
    current: Op | None = None
    """The message being delivered."""
    rank: int = NORMAL
    """Its urgency when it was taken (`effective`): the budget it draws from."""

    def insert(self, op: Op, stats: DeliveryStats) -> None:
        """Put `op` behind what waits: merged with a waiting message of its key, dropped when the same
        unkeyed message waits already, and the queue kept within `QUEUE_LIMIT`."""
        queue = self.queue
        if op.key is not None:
            for i in range(len(queue) - 1, -1, -1):
                pending = queue[i]
                if pending.key != op.key:
                    continue
                if op.fresh and not pending.fresh:
                    if op.replace_old:
                        # The waiting edit is for a message about to be replaced and deleted.
                        del queue[i]
                        stats.moot += 1
                    break  # a new message after the pending edit of the old one
                if newer(pending.version, op.version):
                    stats.outdated += 1
                    return  # the waiting message already shows a newer table
                merged = replace(
                    pending,
                    content=op.content,
                    silent=pending.silent and op.silent,
                    replace_old=pending.replace_old or op.replace_old,
                    version=op.version if op.version is not None else pending.version,
                    priority=min(pending.rank, op.rank),
                    optional=pending.optional and op.optional,
                )
                stats.merged += 1
                if op.fresh and any(q.key is not None for q in itertools.islice(queue, i + 1, None)):
                    # A new message (the next deal's hand) replacing one that waits in front of other keyed
                    # messages (the deal's result): posted where it was produced, after them.
                    del queue[i]
                    queue.append(merged)
                else:
                    queue[i] = merged
                return
        elif any(p.key is None and same(p, op) for p in queue):
            stats.duplicates += 1
            return
        queue.append(op)
        if len(queue) > QUEUE_LIMIT:
            self._shed(op.chat_id, stats)

    def _shed(self, chat_id: int, stats: DeliveryStats) -> None:
        """Drop the least urgent, oldest unkeyed message of a full queue."""
        queue = self.queue
        unkeyed = [(-o.rank, i) for i, o in enumerate(queue) if o.key is None]
        if not unkeyed:
            return
        _, index = min(unkeyed)
        dropped = queue[index]
        del queue[index]
        stats.shed += 1
        stats.dropped += 1
        log.warning(
            "chat %s: %d messages waiting, an unkeyed one of priority %d dropped",
            chat_id,
            len(queue) + 1,
            dropped.rank,
            extra={"event": "shed"},
        )

    def take(self) -> Op:
        """The most urgent waiting message (the oldest of those), urgency as `effective` has it."""
        queue = self.queue
        ranks = effective(queue)
        best = min(range(len(queue)), key=lambda i: (ranks[i], i))
        op = queue[best]
        del queue[best]
        self.rank = ranks[best]
        return op

    def put_back(self, op: Op, stats: DeliveryStats) -> None:
        """`op` back to the head of the queue, merged with what came for its key since, as if it had
        never left."""
        waiting = list(self.queue)
        self.queue.clear()
        self.queue.append(op)
        for pending in waiting:
            self.insert(pending, stats)


def same(a: Op, b: Op) -> bool:
    """Two unkeyed messages that would look the same in the chat."""
    x, y = a.content, b.content
    return (
        x.kind == y.kind
        and x.text == y.text
        and x.lead == y.lead
        and x.image == y.image
        and x.document == y.document
        and (x.markup.to_dict() if x.markup else None) == (y.markup.to_dict() if y.markup else None)
    )


def effective(queue: Iterable[Op]) -> list[int]:
    """The urgency of each waiting message in the order of sending: its own, raised for a keyed message
    to that of the most urgent keyed message posted anew after it (a post must not overtake it). Unkeyed
    messages (answers, notices) keep their own and may be overtaken."""
    ops = list(queue)
    ranks = [o.rank for o in ops]
    behind = INFO + 1
    for i in range(len(ops) - 1, -1, -1):
        if ops[i].key is None:
            continue
        ranks[i] = min(ranks[i], behind)
        if ops[i].fresh:
            behind = min(behind, ops[i].rank)
    return ranks


def newer(version: int | None, than: int | None) -> bool:
    """`version` is known to be newer than `than`."""
    return version is not None and than is not None and version > than


def not_older(version: int | None, than: int | None) -> bool:
    """`version` is known to be the same as `than`, or newer."""
    return version is not None and than is not None and version >= than
