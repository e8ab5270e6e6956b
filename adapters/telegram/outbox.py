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

While a message waits in the queue, a newer message for the same key takes its place, and the most
urgent waiting message goes first (`queue`: the rules of one chat's queue).

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
(`Store.hand_over`, with its table version; the codec is `handover`) and another process sends it
(`take_over`, polled by `bot.relay.handover.HandoverPoller`): as queued, merged with what it queued
itself for the same key, and not at all when the chat already shows that version or a newer one. A
message is handed over only when nothing of it went out, so none is sent twice. With a store that dies
with the process (memory), nothing can be handed over: the messages are counted as lost and the process
says so in its exit status.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, Final

from telegram import InputFile, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import ExtBot

from adapters.telegram.content import Content
from adapters.telegram.handover import handed_over, op_of
from adapters.telegram.limits import URGENT, Preempted, SendArgs, Skipped
from adapters.telegram.queue import ChatQueue, DeliveryStats, Op, effective, newer, not_older
from adapters.telegram.refs import PILE_SUFFIX, Ref, chat_scope, decode_pile, encode_pile
from bot.ops.metrics import Metrics
from bot.storage import HandedOver, StorageError, Store

__all__ = ["Outbox", "StopReport"]

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
_PINNED_REFS: Final = frozenset({"dm"})
MAX_PILE: Final = 100
"""Message ids one deleteMessages call takes (Telegram's limit)."""
GIVE_WAY_SECONDS: Final = 2.0
"""On stop, how long the workers get to give way (a send on the wire finishes; one waiting for the budget
gives up at once). A worker still busy after that is cancelled and its message counted as uncertain."""

LostHandler = Callable[[int], Coroutine[Any, Any, None]]
MigratedHandler = Callable[[int, int], Coroutine[Any, Any, None]]


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
        self._chats: dict[int, ChatQueue] = {}
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
        chat = self._chats.setdefault(op.chat_id, ChatQueue())
        chat.insert(op, self.stats)
        chat.wake.set()
        self._start(op.chat_id, chat)

    def _start(self, chat_id: int, chat: ChatQueue) -> None:
        if chat.worker is None and (chat.queue or chat.deletions):
            self._idle.clear()
            chat.worker = asyncio.get_running_loop().create_task(
                self._work(chat_id, chat), name=f"outbox-{chat_id}"
            )

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

    async def _work(self, chat_id: int, chat: ChatQueue) -> None:
        try:
            while (chat.queue or chat.deletions) and not self._stopping:
                if not chat.queue:
                    ids = list(chat.deletions)
                    chat.deletions.clear()
                    await self._clean_up(chat_id, ids)
                    continue
                op = chat.take()
                chat.current = op
                try:
                    await self._deliver(op, chat)
                except Preempted:
                    chat.put_back(op, self.stats)  # it gave way to a more urgent message
                    self.stats.preempted += 1
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
                    chat.put_back(op, self.stats)
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

    def _lost_chat(self, chat_id: int, chat: ChatQueue, exc: Forbidden) -> None:
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

    async def _chat_migrated(self, chat_id: int, chat: ChatQueue, op: Op, new_chat_id: int) -> None:
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

    def _limits(self, op: Op, chat: ChatQueue) -> dict[str, Any]:
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
            ranks = effective([op, *chat.queue])
            return not any(r < ranks[0] for r in ranks[1:])

        wake = chat.halt if rank <= URGENT else chat.wake
        return {"rate_limit_args": SendArgs(rank, still_wanted, wake, optional=op.optional)}

    async def _deliver(self, op: Op, chat: ChatQueue) -> None:
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
        if op.handed_over and old is not None and not_older(old.version, op.version):
            # Sent meanwhile (or a newer state of it): a handed-over message is never shown twice, nor
            # after a newer one.
            self.stats.outdated += 1
            return
        if old is not None and not op.fresh:
            if newer(old.version, op.version):
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
        newer_shown = displaced is not None and newer(displaced.version, op.version)
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
            if newer(displaced.version, op.version):
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
        self, op: Op, chat: ChatQueue, scope: str, refs: dict[str, str], replaced: int | None
    ) -> None:
        """A hand replaced by a newer one of its series stays on screen (its buttons answer as stale);
        when a hand of another series comes, every replaced one goes, in one deleteMessages call once
        nothing more urgent waits. The ids waiting live in the chat's references (`<key>~old`), so
        whichever process posts next finds them."""
        assert op.key is not None and op.series is not None
        name = op.key + PILE_SUFFIX
        series, waiting = decode_pile(refs.get(name))
        if replaced is not None:
            waiting.append(replaced)
        if series != op.series or len(waiting) >= MAX_PILE:
            chat.deletions.extend(i for i in waiting if i not in chat.deletions)
            waiting = []
        value = encode_pile(op.series, waiting)
        if refs.get(name) != value:
            await self.store.set_ref(scope, name, value, ttl_seconds=self.refs_ttl)
            refs[name] = value

    async def _edit(self, op: Op, chat: ChatQueue, old: Ref) -> bool:
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

    async def _post(self, op: Op, chat: ChatQueue) -> int:
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

    async def _send_text(self, op: Op, chat: ChatQueue, text: str, *, with_markup: bool) -> int:
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


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("handling a lost chat failed", exc_info=task.exception())
