"""Per-chat delivery queues: messages become sends, edits and deletions, in order, off the update path.

An update is handled in milliseconds (the service's load, rules and save), but what it causes may have to
wait for the chat's send budget for seconds. So handlers only queue messages here and return; one worker
per chat sends them in order while other chats' workers and the next updates go on.

Keyed messages are edited in place. The platform id of the message behind each key lives in the store's
references for the chat (`get_refs`/`set_ref`), so whichever process handles the next update edits the
message another process sent. A reference also keeps a fingerprint of what the message shows: an edit
that would show the same thing is skipped. A `fresh` message (the service's `notify`) is posted anew so
that people are notified; in a private chat the previous one is deleted (a hand is one message), in a
group it stays (it is the record of the previous deal).

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
most urgent keyed message posted after it (`_effective`), and a keyed message that replaces one still
waiting while other keyed messages wait behind that one takes its place at the end of the queue (the
order the service produced them in). Unkeyed answers and notices still give way. A queue
holds at most `QUEUE_LIMIT` messages: beyond, the least urgent, oldest unkeyed one is dropped (logged).
Keyed messages are never dropped there: there is one per key at most, and a chat has few keys.

Messages carry the table version they were drawn from (`Message.version`), and a reference keeps the
version of what it shows. An edit older than that is dropped: another process delivered a newer state of
the same message first, and the older one must not replace it on screen. A fresh message is always
posted (a table's first message under a key is fresh, also when a new table in the chat counts its
versions from 1 again) and sets the version.

A 403 in a private chat means the user blocked the bot (or never started it): their queue is dropped and
`on_private_lost` runs; in a group it means the bot was removed: `on_group_lost` runs.

A process that stops (`stop`, run on SIGTERM) delivers what it can for a few seconds, then makes its
workers give way: a send waiting for the budget gives up as a preempted one does (nothing of it went
out), a send already on the wire finishes. What is still queued then is handed over to the store
(`Store.hand_over`, with its table version) and another process sends it (`take_over`, polled by
`recovery.HandoverPoller`): as queued, merged with what it queued itself for the same key, and not at
all when the chat already shows that version or a newer one. A message is handed over only when nothing
of it went out, so none is sent twice. With a store that dies with the process (memory), nothing can be
handed over: the messages are counted as lost and the process says so in its exit status.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import logging
from collections import deque
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from telegram import InlineKeyboardMarkup, InputFile, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import ExtBot

from adapters.telegram.content import Content
from adapters.telegram.limits import INFO, NORMAL, URGENT, Preempted, SendArgs, Skipped
from bot.ops.metrics import Metrics
from bot.storage import HandedOver, StorageError, Store

__all__ = [
    "HANDOVER_PLATFORM",
    "DeliveryStats",
    "Op",
    "Outbox",
    "Ref",
    "StopReport",
    "chat_scope",
    "handed_over",
    "op_of",
]

log = logging.getLogger("thousand.telegram.outbox")

PLATFORM: Final = "telegram"
STORE_PAUSE: Final = 1.0
STORE_RETRIES: Final = 60
"""A message whose delivery found the store unreachable before anything went out waits `STORE_PAUSE`
seconds and tries again, up to this many times (a minute: a Redis restart or failover), then is dropped
(logged). Losing it would leave a player without their turn's hand until the turn's warning."""
MAX_REFS: Final = 64
"""References kept per chat; the oldest go when a chat has more (old deals' table messages)."""
KEEP_REFS: Final = 48
QUEUE_LIMIT: Final = 32
"""Messages waiting per chat; beyond, the least urgent, oldest unkeyed one is dropped."""
_PINNED_REFS: Final = frozenset({"dm"})
PILE_SUFFIX: Final = "~old"
"""Reference name (after the key) of the replaced messages of a series still on screen."""
MAX_PILE: Final = 100
"""Message ids one deleteMessages call takes (Telegram's limit)."""
HANDOVER_PLATFORM: Final = "tg"
"""`HandedOver.platform` of this adapter's messages."""
GIVE_WAY_SECONDS: Final = 2.0
"""On stop, how long the workers get to give way (a send on the wire finishes; one waiting for the budget
gives up at once). A worker still busy after that is cancelled and its message counted as uncertain."""

LostHandler = Callable[[int], Coroutine[Any, Any, None]]
MigratedHandler = Callable[[int, int], Coroutine[Any, Any, None]]


def chat_scope(chat_id: int | str) -> str:
    """The store scope of a chat's message references (`tg:<chat id>`, the chat's table id too)."""
    return f"tg:{chat_id}"


@dataclass(frozen=True, slots=True)
class Ref:
    """The message behind a key: its id, what it is, what it shows, when it was written, and the version of
    the table it shows.

    Stored as `message_id:kind:fingerprint:written[/version]`. References written before versions existed
    (no `/version`) still read, with no version; and a process of that time reads a new one as well (its
    `written` does not parse, which only makes the reference look old)."""

    message_id: int
    kind: str
    fingerprint: str
    written: float = 0.0
    version: int | None = None

    def encode(self) -> str:
        tail = "" if self.version is None else f"/{self.version}"
        return f"{self.message_id}:{self.kind}:{self.fingerprint}:{self.written:.0f}{tail}"

    @classmethod
    def decode(cls, value: str | None) -> Ref | None:
        if not value:
            return None
        parts = value.split(":")
        if len(parts) != 4 or not parts[0].isdigit():
            return None
        written_text, _, version_text = parts[3].partition("/")
        try:
            written = float(written_text)
        except ValueError:
            written = 0.0
        version = int(version_text) if version_text.isdigit() else None
        return cls(int(parts[0]), parts[1], parts[2], written, version)

    def older_than(self, version: int | None) -> bool:
        """Whether this reference shows an older table than `version` (unknown versions are not older)."""
        return self.version is not None and version is not None and self.version < version


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
class _Chat:
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
    """Its urgency when it was taken (`_effective`): the budget it draws from."""


@dataclass(frozen=True, slots=True)
class StopReport:
    """What `Outbox.stop` did with the messages still queued."""

    drained: bool
    """Everything was delivered within the time given: nothing was left."""
    handed_over: int = 0
    """Kept in the store for another process."""
    lost: int = 0
    """Neither delivered nor handed over (a memory store, or the store unreachable)."""
    uncertain: int = 0
    """Being sent when the worker had to be cancelled: may or may not have gone out (not handed over, so
    never twice)."""
    left_deletions: int = 0
    """Replaced messages not deleted (they stay on screen, their buttons answer as stale)."""


class Outbox:
    """Delivery queues of one process."""

    def __init__(
        self,
        bot: ExtBot[Any],
        store: Store,
        *,
        clock: Callable[[], float],
        metrics: Metrics | None = None,
        refs_ttl: float = 365 * 24 * 3600,
        paid_broadcast: bool = False,
        on_private_lost: LostHandler | None = None,
        on_group_lost: LostHandler | None = None,
        on_chat_migrated: MigratedHandler | None = None,
    ) -> None:
        self.bot = bot
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.refs_ttl = refs_ttl
        self.paid: dict[str, Any] = {"allow_paid_broadcast": True} if paid_broadcast else {}
        """Passed to every send: Telegram's paid broadcasts (`TELEGRAM_PAID_BROADCAST`)."""
        self.on_private_lost = on_private_lost
        self.on_group_lost = on_group_lost
        self.on_chat_migrated = on_chat_migrated
        self.stats = DeliveryStats()
        self._chats: dict[int, _Chat] = {}
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False
        self._stopping = False
        """Set by `stop`: waiting sends give way and the workers leave their queues as they are."""
        self._lost: set[int] = set()
        self._seq = itertools.count(1)

    # --- queueing ---------------------------------------------------------------------------------

    def put(self, op: Op) -> None:
        """Queue a message (merged into a waiting one with the same key where possible)."""
        if self._closed:
            self.stats.dropped += 1
            log.warning("outbox closed: message for chat %s dropped", op.chat_id)
            return
        if op.chat_id in self._lost:
            self.stats.dropped += 1
            return
        op.seq = next(self._seq)
        chat = self._chats.setdefault(op.chat_id, _Chat())
        self._insert(chat, op)
        chat.wake.set()
        self._start(op.chat_id, chat)

    def _start(self, chat_id: int, chat: _Chat) -> None:
        if chat.worker is None and (chat.queue or chat.deletions):
            self._idle.clear()
            chat.worker = asyncio.get_running_loop().create_task(
                self._work(chat_id, chat), name=f"outbox-{chat_id}"
            )

    def _insert(self, chat: _Chat, op: Op) -> None:
        """Put `op` behind what waits: merged with a waiting message of its key, dropped when the same
        unkeyed message waits already, and the queue kept within `QUEUE_LIMIT`."""
        queue = chat.queue
        if op.key is not None:
            for i in range(len(queue) - 1, -1, -1):
                pending = queue[i]
                if pending.key != op.key:
                    continue
                if op.fresh and not pending.fresh:
                    if op.replace_old:
                        # The waiting edit is for a message about to be replaced and deleted.
                        del queue[i]
                        self.stats.moot += 1
                    break  # a new message after the pending edit of the old one
                if _newer(pending.version, op.version):
                    self.stats.outdated += 1
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
                self.stats.merged += 1
                if op.fresh and any(q.key is not None for q in itertools.islice(queue, i + 1, None)):
                    # A new message (the next deal's hand) replacing one that waits in front of other keyed
                    # messages (the deal's result): posted where it was produced, after them.
                    del queue[i]
                    queue.append(merged)
                else:
                    queue[i] = merged
                return
        elif any(p.key is None and _same(p, op) for p in queue):
            self.stats.duplicates += 1
            return
        queue.append(op)
        if len(queue) > QUEUE_LIMIT:
            self._shed(op.chat_id, queue)

    def _shed(self, chat_id: int, queue: deque[Op]) -> None:
        """Drop the least urgent, oldest unkeyed message of a full queue."""
        unkeyed = [(-o.rank, i) for i, o in enumerate(queue) if o.key is None]
        if not unkeyed:
            return
        _, index = min(unkeyed)
        dropped = queue[index]
        del queue[index]
        self.stats.shed += 1
        self.stats.dropped += 1
        log.warning(
            "chat %s: %d messages waiting, an unkeyed one of priority %d dropped",
            chat_id,
            len(queue) + 1,
            dropped.rank,
            extra={"event": "shed"},
        )

    @staticmethod
    def _take(chat: _Chat) -> Op:
        """The most urgent waiting message (the oldest of those), urgency as `_effective` has it."""
        queue = chat.queue
        ranks = _effective(queue)
        best = min(range(len(queue)), key=lambda i: (ranks[i], i))
        op = queue[best]
        del queue[best]
        chat.rank = ranks[best]
        return op

    def _give_way(self, chat: _Chat, op: Op) -> None:
        """`op` gave way to a more urgent message: back to its place."""
        self._put_back(chat, op)
        self.stats.preempted += 1

    def _put_back(self, chat: _Chat, op: Op) -> None:
        """`op` back to the head of the queue, merged with what came for its key since, as if it had
        never left."""
        waiting = list(chat.queue)
        chat.queue.clear()
        chat.queue.append(op)
        for pending in waiting:
            self._insert(chat, pending)

    def forget_lost(self, chat_id: int) -> None:
        """The chat works again (the user pressed Start, the bot is back in the group): deliver again."""
        self._lost.discard(chat_id)

    def mark_lost(self, chat_id: int) -> None:
        """The chat refuses the bot (as an update said): drop what is queued for it and what comes."""
        self._lost.add(chat_id)
        chat = self._chats.get(chat_id)
        if chat is not None:
            self.stats.dropped += len(chat.queue)
            chat.queue.clear()
            chat.deletions.clear()

    @property
    def pending(self) -> int:
        return sum(len(c.queue) + len(c.deletions) + (c.worker is not None) for c in self._chats.values())

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queue is empty; False if `timeout` passed first."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def close(self, timeout: float = 10.0) -> bool:
        """Refuse new messages, deliver the queued ones (up to `timeout`), stop the workers."""
        self._closed = True
        drained = await self.drain(timeout)
        for chat in list(self._chats.values()):
            if chat.worker is not None:
                chat.worker.cancel()
        return drained

    async def stop(self, deliver_for: float, *, give_way_for: float = GIVE_WAY_SECONDS) -> StopReport:
        """Refuse new messages, deliver the queued ones for up to `deliver_for` seconds, then hand what
        is left over to the store for another process (or count it lost, when the store dies with this
        process). Takes at most `deliver_for + give_way_for` plus the store's writes."""
        self._closed = True
        if await self.drain(deliver_for):
            return StopReport(drained=True)
        self._stopping = True
        for chat in self._chats.values():
            chat.wake.set()  # a send waiting for the budget asks whether it is still wanted: no
            chat.halt.set()
        workers = [c.worker for c in self._chats.values() if c.worker is not None]
        if workers:
            _, busy = await asyncio.wait(workers, timeout=give_way_for)
        else:
            busy = set()
        uncertain = 0
        for chat in self._chats.values():
            if chat.worker in busy and chat.worker is not None:
                chat.worker.cancel()
                if chat.current is not None:
                    uncertain += 1
                    log.warning(
                        "chat %s: a message being sent at the stop may or may not have gone out",
                        chat.current.chat_id,
                        extra={"event": "shutdown"},
                    )
        if busy:
            await asyncio.wait(busy, timeout=1.0)
        left = sorted((op for c in self._chats.values() for op in c.queue), key=lambda op: op.seq)
        deletions = sum(len(c.deletions) for c in self._chats.values())
        self._chats.clear()
        self._idle.set()
        handed, lost = await self._hand_over(left)
        if deletions:
            log.info(
                "%d replaced message(s) left undeleted at the stop", deletions, extra={"event": "shutdown"}
            )
        return StopReport(False, handed, lost, uncertain, deletions)

    async def _hand_over(self, left: list[Op]) -> tuple[int, int]:
        """Keep `left` in the store for another process; (handed over, lost)."""
        if not left:
            return 0, 0
        if not self.store.keeps_after_exit:
            self.stats.lost += len(left)
            log.error(
                "%d message(s) still queued are lost: this store dies with the process, nothing can be "
                "handed over (use Redis)",
                len(left),
                extra={"event": "shutdown", "count": len(left), "outcome": "lost"},
            )
            return 0, len(left)
        try:
            await self.store.hand_over([handed_over(op) for op in left])
        except StorageError:
            self.stats.lost += len(left)
            log.exception(
                "%d message(s) still queued are lost: the store did not take them",
                len(left),
                extra={"event": "shutdown", "count": len(left), "outcome": "lost"},
            )
            return 0, len(left)
        self.stats.handed_over += len(left)
        log.info(
            "%d message(s) still queued handed over to the next process",
            len(left),
            extra={"event": "shutdown", "count": len(left), "outcome": "handed_over"},
        )
        return len(left), 0

    def take_over(self, messages: list[HandedOver]) -> int:
        """Queue the messages a stopped process handed over (this adapter's, in their order); how many.
        Each is merged with what waits here for its key, and dropped at delivery when the chat already
        shows its version or a newer one."""
        taken = 0
        for message in messages:
            op = op_of(message)
            if op is None:
                log.warning("a handed-over message does not parse: dropped")
                continue
            self.put(op)
            taken += 1
        self.stats.taken_over += taken
        return taken

    # --- the worker -------------------------------------------------------------------------------

    async def _work(self, chat_id: int, chat: _Chat) -> None:
        try:
            while (chat.queue or chat.deletions) and not self._stopping:
                if not chat.queue:
                    ids = list(chat.deletions)
                    chat.deletions.clear()
                    await self._clean_up(chat_id, ids)
                    continue
                op = self._take(chat)
                chat.current = op
                try:
                    await self._deliver(op, chat)
                except Preempted:
                    self._give_way(chat, op)
                except Skipped:
                    self.stats.skipped += 1
                except StorageError as exc:
                    if chat.started or op.store_waits >= STORE_RETRIES:
                        self.stats.failed += 1
                        self._error(exc)
                        log.warning(
                            "message to chat %s not delivered: %s", chat_id, exc, extra={"event": "send"}
                        )
                        continue
                    # Nothing of it went out: it waits for the store (a restart, a failover) in its place,
                    # merged with what comes for its key meanwhile, instead of being lost.
                    op.store_waits += 1
                    self.stats.store_waits += 1
                    self._put_back(chat, op)
                    chat.current = None
                    await asyncio.sleep(STORE_PAUSE)
                except Forbidden as exc:
                    self._lost_chat(chat_id, chat, exc)
                except ChatMigrated as exc:
                    await self._chat_migrated(chat_id, chat, op, exc.new_chat_id)
                except (BadRequest, RetryAfter, NetworkError) as exc:
                    self.stats.failed += 1
                    self._error(exc)
                    log.warning("message to chat %s not delivered: %s", chat_id, exc, extra={"event": "send"})
                except TelegramError as exc:
                    self.stats.failed += 1
                    self._error(exc)
                    log.error("message to chat %s not delivered: %r", chat_id, exc, extra={"event": "send"})
                except Exception:
                    self.stats.failed += 1
                    log.exception("delivery to chat %s failed", chat_id, extra={"event": "send"})
                finally:
                    chat.current = None
        finally:
            chat.worker = None
            if not chat.queue and not chat.deletions and not self._stopping:
                self._chats.pop(chat_id, None)
            if not self._chats:
                self._idle.set()

    def _error(self, exc: Exception) -> None:
        if self.metrics is None:
            return
        if isinstance(exc, BadRequest):
            kind = "bad_request"
        elif isinstance(exc, Forbidden):
            kind = "forbidden"
        elif isinstance(exc, RetryAfter):
            kind = "flood"
        elif isinstance(exc, NetworkError):
            kind = "network"
        elif isinstance(exc, StorageError):
            kind = "storage"
        else:
            kind = "other"
        self.metrics.platform_error(PLATFORM, kind)

    def _lost_chat(self, chat_id: int, chat: _Chat, exc: Forbidden) -> None:
        dropped = len(chat.queue) + 1
        chat.queue.clear()
        chat.deletions.clear()
        self.stats.dropped += dropped
        self._error(exc)
        handler = self.on_group_lost if chat_id < 0 else self.on_private_lost
        log.info(
            "chat %s refuses the bot (%s): %d message(s) dropped",
            chat_id,
            exc.message,
            dropped,
            extra={"event": "forbidden"},
        )
        self._lost.add(chat_id)
        if handler is not None:
            task = asyncio.get_running_loop().create_task(handler(chat_id), name=f"lost-{chat_id}")
            task.add_done_callback(_log_failure)

    async def _chat_migrated(self, chat_id: int, chat: _Chat, op: Op, new_chat_id: int) -> None:
        """The group was upgraded to a supergroup (400 with `migrate_to_chat_id`): the table moves with it
        (`on_chat_migrated`), then this message and those queued behind it go to the new chat, in order."""
        log.info(
            "chat %s is now %s: its messages follow it", chat_id, new_chat_id, extra={"event": "migrated"}
        )
        if self.on_chat_migrated is not None:
            try:
                await self.on_chat_migrated(chat_id, new_chat_id)
            except Exception:
                log.exception("moving chat %s to %s failed", chat_id, new_chat_id)
        pending = [op, *chat.queue]
        chat.queue.clear()
        for moved in pending:
            self.put(replace(moved, chat_id=new_chat_id))

    # --- one message ------------------------------------------------------------------------------

    def _limits(self, op: Op, chat: _Chat) -> dict[str, Any]:
        """PTB's `rate_limit_args` for a send of `op`: its priority and, for a less urgent one, when to give
        way (a more urgent message waits, and nothing of `op` has gone out yet). None without a limiter."""
        if self.bot.rate_limiter is None:
            return {}
        rank = chat.rank if chat.current is op else op.rank

        def still_wanted() -> bool:
            # Nothing of it went out yet: a stopping process hands it over instead of waiting on; a less
            # urgent one gives way to a more urgent one (not to a keyed message queued after it, which it
            # must precede: put back, it would be taken again at once).
            if chat.started:
                return True
            if self._stopping:
                return False
            if rank <= URGENT:
                return True
            ranks = _effective([op, *chat.queue])
            return not any(r < ranks[0] for r in ranks[1:])

        wake = chat.halt if rank <= URGENT else chat.wake
        return {"rate_limit_args": SendArgs(rank, still_wanted, wake, optional=op.optional)}

    async def _deliver(self, op: Op, chat: _Chat) -> None:
        chat.started = False
        if op.key is None:
            await self._post(op, chat)
            return
        scope = chat_scope(op.chat_id)
        refs = await self.store.get_refs(scope)
        old = Ref.decode(refs.get(op.key))
        if old is not None and old.message_id in chat.deletions:
            old = None  # about to be deleted: not worth an edit
        content = op.content
        if op.handed_over and old is not None and _not_older(old.version, op.version):
            # Sent meanwhile (or a newer state of it): a handed-over message is never shown twice, nor
            # after a newer one.
            self.stats.outdated += 1
            return
        if old is not None and not op.fresh:
            if _newer(old.version, op.version):
                self.stats.outdated += 1
                return
            if old.fingerprint == content.fingerprint:
                self.stats.unchanged += 1
                if old.older_than(op.version):
                    await self._remember(scope, op.key, old.message_id, content, refs, op.version)
                return
            if old.kind == "text" and content.kind == "text" and await self._edit(op, chat, old):
                await self._remember(scope, op.key, old.message_id, content, refs, op.version)
                if op.series is not None and op.chat_id > 0:
                    await self._retire(op, chat, scope, refs, None)
                return
        message_id = await self._post(op, chat)
        displaced = await self._remember(scope, op.key, message_id, content, refs, op.version)
        newer_shown = displaced is not None and _newer(displaced.version, op.version)
        if op.handed_over and displaced is not None and displaced.message_id != message_id and newer_shown:
            # A newer state of the key was shown while this one waited for the budget (another
            # process): that one stays the key's message, this older one goes.
            self.stats.outdated += 1
            await self.store.set_ref(scope, op.key, displaced.encode(), ttl_seconds=self.refs_ttl)
            refs[op.key] = displaced.encode()
            await self._delete(op.chat_id, message_id)
            return
        one_message = op.replace_old or not op.fresh
        known = (message_id, old.message_id if old is not None else None)
        if one_message and displaced is not None and displaced.message_id not in known:
            # Another process posted this key's message between our read and our write: one of the two
            # must go, or the chat shows two (a hand with stale buttons left behind). The newer stays.
            self.stats.raced += 1
            if _newer(displaced.version, op.version):
                await self.store.set_ref(scope, op.key, displaced.encode(), ttl_seconds=self.refs_ttl)
                refs[op.key] = displaced.encode()
                await self._delete(op.chat_id, message_id)
            else:
                await self._delete(op.chat_id, displaced.message_id)
        if op.series is not None and op.chat_id > 0:
            replaced = old.message_id if old is not None and old.message_id != message_id else None
            await self._retire(op, chat, scope, refs, replaced)
        elif old is not None and old.message_id != message_id and one_message:
            # Deleted once nothing more urgent waits: the new message is out, the old one can wait.
            chat.deletions.append(old.message_id)

    async def _retire(
        self, op: Op, chat: _Chat, scope: str, refs: dict[str, str], replaced: int | None
    ) -> None:
        """A hand replaced by a newer one of its series stays on screen (its buttons answer as stale);
        when a hand of another series comes, every replaced one goes, in one deleteMessages call once
        nothing more urgent waits. The ids waiting live in the chat's references (`<key>~old`), so
        whichever process posts next finds them."""
        assert op.key is not None and op.series is not None
        name = op.key + PILE_SUFFIX
        series, waiting = _decode_pile(refs.get(name))
        if replaced is not None:
            waiting.append(replaced)
        if series != op.series or len(waiting) >= MAX_PILE:
            chat.deletions.extend(i for i in waiting if i not in chat.deletions)
            waiting = []
        value = _encode_pile(op.series, waiting)
        if refs.get(name) != value:
            await self.store.set_ref(scope, name, value, ttl_seconds=self.refs_ttl)
            refs[name] = value

    async def _edit(self, op: Op, chat: _Chat, old: Ref) -> bool:
        """Edit the text message behind the key; False when it is gone (then a new one is posted)."""
        try:
            await self.bot.edit_message_text(
                op.content.text,
                chat_id=op.chat_id,
                message_id=old.message_id,
                parse_mode=ParseMode.HTML,
                reply_markup=op.content.markup,
                **self._limits(op, chat),
            )
        except BadRequest as exc:
            text = exc.message.lower()
            if "not modified" in text:
                self.stats.unchanged += 1
                return True
            if "not found" in text or "can't be edited" in text or "no text" in text:
                return False
            raise
        chat.started = True
        self.stats.edited += 1
        return True

    async def _post(self, op: Op, chat: _Chat) -> int:
        """Send the message (its lead texts first); the id of the main message."""
        c = op.content
        for text in c.lead:
            await self._send_text(op, chat, text, with_markup=False)
        if c.kind == "text":
            return await self._send_text(op, chat, c.text, with_markup=True)
        caption = c.text or None
        if c.kind == "photo" and c.image is not None:
            sent = await self.bot.send_photo(
                op.chat_id,
                InputFile(c.image, filename="chart.png"),
                caption=caption,
                parse_mode=ParseMode.HTML if caption else None,
                reply_markup=c.markup,
                disable_notification=op.silent,
                **self._limits(op, chat),
                **self.paid,
            )
        else:
            name, data = c.document or ("file.bin", b"")
            sent = await self.bot.send_document(
                op.chat_id,
                InputFile(data, filename=name),
                caption=caption,
                parse_mode=ParseMode.HTML if caption else None,
                reply_markup=c.markup,
                disable_notification=op.silent,
                **self._limits(op, chat),
                **self.paid,
            )
        chat.started = True
        self.stats.sent += 1
        return sent.message_id

    async def _send_text(self, op: Op, chat: _Chat, text: str, *, with_markup: bool) -> int:
        sent: Message = await self.bot.send_message(
            op.chat_id,
            text,
            parse_mode=ParseMode.HTML,
            reply_markup=op.content.markup if with_markup else None,
            disable_notification=op.silent,
            reply_parameters=(
                ReplyParameters(op.reply_to, allow_sending_without_reply=True) if op.reply_to else None
            ),
            **self._limits(op, chat),
            **self.paid,
        )
        chat.started = True
        self.stats.sent += 1
        return sent.message_id

    async def _delete(self, chat_id: int, message_id: int) -> None:
        try:
            await self.bot.delete_message(chat_id, message_id)
        except BadRequest:
            return  # already gone (the user deleted it) or too old to delete: nothing to do
        self.stats.deleted += 1

    async def _clean_up(self, chat_id: int, message_ids: list[int]) -> None:
        """Deferred deletions, all at once: one deleteMessages call for up to `MAX_PILE` messages of the
        chat (Telegram skips ids already gone). Trouble is logged (the old messages stay on screen), the
        queue goes on."""
        for start in range(0, len(message_ids), MAX_PILE):
            ids = sorted(set(message_ids[start : start + MAX_PILE]))
            try:
                if len(ids) == 1:
                    await self._delete(chat_id, ids[0])
                    continue
                await self.bot.delete_messages(chat_id, ids)
            except TelegramError as exc:
                self._error(exc)
                log.info("old messages %s in chat %s not deleted: %s", ids, chat_id, exc)
                continue
            self.stats.deleted += len(ids)
            self.stats.batches += 1

    async def _remember(
        self,
        scope: str,
        key: str,
        message_id: int,
        content: Content,
        refs: dict[str, str],
        version: int | None = None,
    ) -> Ref | None:
        """Store the reference; the one it replaced (maybe written by another process meanwhile)."""
        now = self.clock()
        ref = Ref(message_id, content.kind, content.fingerprint, now, version)
        previous = await self.store.set_ref(scope, key, ref.encode(), ttl_seconds=self.refs_ttl)
        refs[key] = ref.encode()
        if len(refs) > MAX_REFS:
            await self._prune(scope, refs)
        return Ref.decode(previous)

    async def _prune(self, scope: str, refs: dict[str, str]) -> None:
        """Forget the oldest references of a chat (messages of long-finished deals)."""
        aged = sorted(
            (
                (Ref.decode(v), k)
                for k, v in refs.items()
                if k not in _PINNED_REFS and not k.endswith(PILE_SUFFIX)
            ),
            key=lambda pair: pair[0].written if pair[0] is not None else 0.0,
        )
        for _, name in aged[: max(0, len(aged) - KEEP_REFS)]:
            await self.store.delete_ref(scope, name)
            refs.pop(name, None)


def _same(a: Op, b: Op) -> bool:
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


def _decode_pile(value: str | None) -> tuple[str | None, list[int]]:
    """`series|id,id,...`: the series of the key's current message and the replaced ones still shown."""
    if not value:
        return None, []
    series, _, ids = value.rpartition("|")
    return series or None, [int(i) for i in ids.split(",") if i.isdigit()]


def _encode_pile(series: str, ids: list[int]) -> str:
    return f"{series}|{','.join(map(str, ids))}"


def _effective(queue: Iterable[Op]) -> list[int]:
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


def _newer(version: int | None, than: int | None) -> bool:
    """`version` is known to be newer than `than`."""
    return version is not None and than is not None and version > than


def _not_older(version: int | None, than: int | None) -> bool:
    """`version` is known to be the same as `than`, or newer."""
    return version is not None and than is not None and version >= than


def _table_of(op: Op) -> str:
    """The table a message is about, as far as the outbox knows: a hand's key names it; a group's
    messages are about the group's table (its id is the chat's scope); anything else is filed under its
    chat."""
    if op.key is not None and op.key.startswith("hand:") and len(op.key) > len("hand:"):
        return op.key[len("hand:") :]
    return chat_scope(op.chat_id)


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def handed_over(op: Op) -> HandedOver:
    """`op` as the store keeps it for another process (`op_of` reads it back)."""
    c = op.content
    payload = {
        "chat": op.chat_id,
        "kind": c.kind,
        "text": c.text,
        "markup": c.markup.to_dict() if c.markup is not None else None,
        "lead": list(c.lead),
        "image": _b64(c.image),
        "document": [c.document[0], _b64(c.document[1])] if c.document is not None else None,
        "fingerprint": c.fingerprint,
        "fresh": op.fresh,
        "replace_old": op.replace_old,
        "silent": op.silent,
        "reply_to": op.reply_to,
        "priority": op.rank,
        "optional": op.optional,
        "series": op.series,
    }
    return HandedOver(
        HANDOVER_PLATFORM,
        _table_of(op),
        str(op.chat_id),
        op.key,
        op.version,
        op.seq,
        json.dumps(payload, separators=(",", ":"), ensure_ascii=False),
    )


def op_of(message: HandedOver) -> Op | None:
    """The message another process handed over, ready to queue here (None if it does not parse)."""
    if message.platform != HANDOVER_PLATFORM:
        return None
    try:
        data = json.loads(message.payload)
        markup = InlineKeyboardMarkup.de_json(data["markup"], None) if data["markup"] else None
        document = data["document"]
        content = Content(
            data["kind"],
            data["text"],
            markup,
            tuple(data["lead"]),
            base64.b64decode(data["image"]) if data["image"] is not None else None,
            (document[0], base64.b64decode(document[1])) if document is not None else None,
            data["fingerprint"],
        )
        return Op(
            int(data["chat"]),
            content,
            key=message.key,
            fresh=bool(data["fresh"]),
            replace_old=bool(data["replace_old"]),
            silent=bool(data["silent"]),
            reply_to=data["reply_to"],
            version=message.version,
            priority=int(data["priority"]),
            optional=bool(data["optional"]),
            series=data["series"],
            handed_over=True,
        )
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("handling a lost chat failed", exc_info=task.exception())
