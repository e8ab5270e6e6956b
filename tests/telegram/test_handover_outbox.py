"""A restart loses no message: what waits for a send budget when a process stops is handed over to the
store with its table version, and another process sends it once, or not at all when the chat already
shows that state or a newer one.

In process (the outbox's stop and take-over, a real redis-server, wall time so that a budget really
waits); the whole path with real `thousand telegram` processes, SIGTERM and the fake Bot API is in
test_handover_process.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
import redis.asyncio as aioredis
from tgkit import Rig

from adapters.telegram.content import render
from adapters.telegram.handover import HANDOVER_PLATFORM, handed_over, op_of
from adapters.telegram.limits import URGENT
from adapters.telegram.outbox import Outbox
from adapters.telegram.queue import Op
from adapters.telegram.refs import Ref, chat_scope
from bot.model import Button, ChatRef, Group, Message, Private, UserRef
from bot.ops.shutdown import EXIT_OK, EXIT_UNDELIVERED, STOP_WITHIN
from bot.storage import HandedOver, KeyLayout, MemoryStore, RedisStore, Store
from fakes.telegram import FakeTelegram

pytestmark = pytest.mark.timeout(60)
HOLD = 8.0


class WallClock:
    """Real time (the rig's default clock is virtual, and a virtual budget wait ends at once)."""

    explicit = False

    def now(self) -> float:
        return time.time()

    def __call__(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


def _group_op(chat_id: int, text: str, key: str | None, version: int | None, *, fresh: bool = False) -> Op:
    message = Message(Group(ChatRef("tg", str(chat_id), "Cards")), text, key, version=version)
    return Op(chat_id, render(message), key=key, fresh=fresh, version=version)


def _hand_op(user_id: int, table_id: str, text: str, version: int) -> Op:
    user = UserRef("tg", str(user_id), "Alice")
    message = Message(Private(user), text, f"hand:{table_id}", version=version, notify=True)
    return Op(user_id, render(message), key=f"hand:{table_id}", fresh=True, replace_old=True, version=version)


def _sent(rig: Rig, chat_id: int, method: str = "sendMessage") -> list[str]:
    return [
        str(c.params.get("text"))
        for c in rig.fake.calls
        if c.method == method and str(c.params.get("chat_id")) == str(chat_id) and c.status == 200
    ]


async def _until(condition: object, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():  # type: ignore[operator]
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def _hold_group(rig: Rig, store: Store, chat_id: int, seconds: float) -> list[str]:
    """Hold the group's send budget for every process, as a 429 with `retry_after` does; its bucket keys."""
    limiter = rig.bot.limiter
    keys = limiter.limits.hold_keys(limiter.bot_id, chat_id)
    for key in keys:
        await store.hold_sends(key, seconds)
    return keys


@pytest.fixture
async def wall_rig(redis_url: str, redis_prefix: str) -> AsyncIterator[Rig]:
    clock = WallClock()
    rig = Rig(
        store=RedisStore.from_url(redis_url, prefix=redis_prefix),
        clock=clock,  # type: ignore[arg-type]
        fake=FakeTelegram(clock=clock),
    )
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()


async def test_what_waits_for_the_group_budget_is_handed_over_and_sent_once_by_the_next_process(
    wall_rig: Rig, redis_url: str, redis_prefix: str
) -> None:
    rig = wall_rig
    alice = rig.fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    rig.fake.user_starts_bot(alice)
    table_id = f"tg:{chat.id}"
    # Held long enough to stop one process and start the next, short enough to then see it sent.
    await _hold_group(rig, rig.store, chat.id, HOLD)
    held_at = time.monotonic()
    first = rig.bot
    outbox = first.adapter.outbox
    # The end of a deal: its result, the next deal's table (drawn twice: merged), and a hand.
    outbox.put(_group_op(chat.id, "Deal 1: result", "result:1:1", 9, fresh=True))
    outbox.put(_group_op(chat.id, "Deal 2 · bidding", "table", 9, fresh=True))
    outbox.put(_group_op(chat.id, "Deal 2 · Alice bids 100", "table", 10))
    outbox.put(_hand_op(alice.id, table_id, "Your hand", 10))
    # Private chats are not held: the hand goes, and the answer to /start after it (less urgent).
    await _until(lambda: len(_sent(rig, alice.id)) == 2 and "Your hand" in _sent(rig, alice.id))
    await asyncio.sleep(0.3)  # the group's two messages wait for its budget
    started = time.monotonic()
    report = await outbox.stop(0.5)
    took = time.monotonic() - started
    assert (report.drained, report.handed_over, report.lost, report.uncertain) == (False, 2, 0, 0)
    assert took < 3.0, took
    assert _sent(rig, chat.id) == []
    await rig.stop(first)
    # The store holds them, tagged by the table, with its version.
    raw = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        stored = await raw.hgetall(KeyLayout(redis_prefix).handover(table_id, HANDOVER_PLATFORM))
        assert len(stored) == 2 and {v.split("\n", 1)[0] for v in stored.values()} == {"9", "10"}
        second = await rig.start()
        await asyncio.sleep(1.5)  # taken, and waiting for the group's budget in the second process
        assert time.monotonic() - held_at < HOLD, "too slow to see the budget hold them"
        assert second.adapter.outbox.stats.taken_over == 2 and _sent(rig, chat.id) == []
    finally:
        await raw.aclose()
    await _until(lambda: len(_sent(rig, chat.id)) == 2, timeout=HOLD + 5)
    await asyncio.sleep(2.5)  # more looks for handed-over messages: nothing is sent again
    assert _sent(rig, chat.id) == ["Deal 1: result", "Deal 2 · Alice bids 100"]
    assert _sent(rig, chat.id, "editMessageText") == []
    assert await rig.store.take_handed_over(HANDOVER_PLATFORM) == []


async def test_a_taken_over_message_is_not_sent_twice_nor_after_a_newer_state(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    outbox: Outbox = rig.bot.adapter.outbox
    result = _group_op(chat.id, "Deal 1: result", "result:1:1", 9, fresh=True)
    outbox.put(result)
    assert await outbox.drain(10)
    # Handed over by a process that stopped while this one sent it (or taken twice): not sent again.
    assert outbox.take_over([handed_over(_group_op(chat.id, "Deal 1: result", "result:1:1", 9, fresh=True))])
    assert await outbox.drain(10)
    assert _sent(rig, chat.id) == ["Deal 1: result"]
    # The chat shows a newer table: an older one handed over, fresh or an edit, is dropped.
    outbox.put(_group_op(chat.id, "Deal 2 · Alice bids 100", "table", 12, fresh=True))
    assert await outbox.drain(10)
    older = [
        handed_over(_group_op(chat.id, "Deal 2 · bidding", "table", 10, fresh=True)),
        handed_over(_group_op(chat.id, "Deal 2 · bidding", "table", 11)),
    ]
    outdated = outbox.stats.outdated
    assert outbox.take_over(older) == 2
    assert await outbox.drain(10)
    assert outbox.stats.outdated == outdated + 1  # the two merged while waiting, then dropped
    assert _sent(rig, chat.id) == ["Deal 1: result", "Deal 2 · Alice bids 100"]
    assert _sent(rig, chat.id, "editMessageText") == []
    # A newer state handed over is shown (an edit of the table's message).
    outbox.take_over([handed_over(_group_op(chat.id, "Deal 2 · Bob bids 110", "table", 13))])
    assert await outbox.drain(10)
    assert _sent(rig, chat.id, "editMessageText") == ["Deal 2 · Bob bids 110"]


async def test_with_the_memory_store_the_loss_is_counted_and_the_exit_status_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = WallClock()
    rig = Rig(store=MemoryStore(clock=clock), clock=clock, fake=FakeTelegram(clock=clock))  # type: ignore[arg-type]
    bot = await rig.start()
    try:
        chat = rig.group("Cards", [rig.fake.add_user("Alice")])
        await _hold_group(rig, rig.store, chat.id, 120)
        bot.adapter.outbox.put(_group_op(chat.id, "Deal 1: result", "result:1:1", 9, fresh=True))
        bot.adapter.outbox.put(_group_op(chat.id, "Deal 2 · bidding", "table", 9, fresh=True))
        await asyncio.sleep(0.2)
        assert bot.handover is None  # nothing to take from a store no other process shares
        caplog.set_level(logging.INFO)
        started = time.monotonic()
        report = await bot.runtime.stop("SIGTERM")
        took = time.monotonic() - started
        rig.bots.remove(bot)
    finally:
        await rig.close()
    assert report.undelivered == 2 and report.exit_code == EXIT_UNDELIVERED
    assert bot.stop_report is not None and bot.stop_report.lost == 2
    assert took < STOP_WITHIN, took
    lost = [r for r in caplog.records if getattr(r, "outcome", None) == "lost"]
    assert [getattr(r, "count", None) for r in lost] == [2]
    assert _sent(rig, chat.id) == []


async def test_a_stop_with_nothing_waiting_exits_cleanly_and_hands_nothing_over(wall_rig: Rig) -> None:
    rig = wall_rig
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    bot = rig.bot
    bot.adapter.outbox.put(_group_op(chat.id, "Deal 1 · bidding", "table", 3, fresh=True))
    report = await bot.runtime.stop("SIGTERM")
    rig.bots.remove(bot)
    assert report.exit_code == EXIT_OK and report.undelivered == 0
    assert bot.stop_report is not None and bot.stop_report.drained
    assert _sent(rig, chat.id) == ["Deal 1 · bidding"]
    assert await rig.store.take_handed_over(HANDOVER_PLATFORM) == []


def test_a_handed_over_message_comes_back_as_it_was_queued() -> None:
    user = UserRef("tg", "5", "Alice")
    buttons = ((Button("Pass", "x|1|tg:-9"), Button("Bid 110", "b|110|1|tg:-9")),)
    message = Message(Private(user), "**Your turn**", "hand:tg:-9", buttons, version=7, notify=True)
    op = replace(
        _hand_op(5, "tg:-9", "x", 7),
        content=replace(render(message), lead=("first part",), image=b"\x89PNG", document=("a.txt", b"\0\1")),
        priority=URGENT,
        series="d3",
        silent=True,
        reply_to=12,
    )
    op.seq = 41
    handed = handed_over(op)
    assert (handed.platform, handed.table_id, handed.audience, handed.key, handed.version, handed.order) == (
        "tg",
        "tg:-9",
        "5",
        "hand:tg:-9",
        7,
        41,
    )
    back = op_of(HandedOver.decode(handed.encode()) or handed)
    assert back is not None and back.handed_over
    assert back.content == op.content  # text, buttons, lead, image, document, fingerprint
    for name in ("chat_id", "key", "fresh", "replace_old", "silent", "reply_to", "version", "rank", "series"):
        assert getattr(back, name) == getattr(op, name), name
    assert op_of(replace(handed, payload="{")) is None
    assert op_of(replace(handed, platform="dc")) is None
    assert _group_op(-9, "x", None, None).key is None and _table_of_group(-9) == "tg:-9"


def _table_of_group(chat_id: int) -> str:
    return handed_over(_group_op(chat_id, "x", "table", 1)).table_id


async def test_a_taken_over_message_that_a_newer_state_overtook_while_it_waited_goes(wall_rig: Rig) -> None:
    rig = wall_rig
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    outbox = rig.bot.adapter.outbox
    await _hold_group(rig, rig.store, chat.id, 1.5)
    outbox.take_over([handed_over(_group_op(chat.id, "Deal 2 · bidding", "table", 9, fresh=True))])
    await asyncio.sleep(0.3)  # waiting for the group's budget
    # Meanwhile another process shows the table's next state under the key.
    newer = Ref(424242, "text", "fp", float(int(time.time())), 10)
    await rig.store.set_ref(chat_scope(chat.id), "table", newer.encode(), ttl_seconds=60)
    assert await outbox.drain(10)
    # Posted after the wait, then taken back: the chat's newest message of the key is the newer one.
    assert _sent(rig, chat.id) == ["Deal 2 · bidding"]
    assert len(_sent(rig, chat.id, "deleteMessage")) == 1
    assert [m.content for m in rig.fake.bot_messages(chat)] == []
    refs = await rig.store.get_refs(chat_scope(chat.id))
    assert Ref.decode(refs["table"]) == newer


async def test_an_urgent_send_waiting_for_the_budget_gives_way_and_is_handed_over(
    wall_rig: Rig,
) -> None:
    rig = wall_rig
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    await _hold_group(rig, rig.store, chat.id, 120)
    outbox = rig.bot.adapter.outbox
    outbox.put(replace(_group_op(chat.id, "Deal 2 · Alice to bid", "table", 4, fresh=True), priority=URGENT))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    report = await outbox.stop(0.2)
    took = time.monotonic() - started
    assert (report.handed_over, report.uncertain) == (1, 0)
    assert took < 1.5, took  # not the 2 s after which a busy worker is cancelled
    (taken,) = await rig.store.take_handed_over(HANDOVER_PLATFORM)
    back = op_of(taken)
    assert back is not None and back.rank == URGENT and back.version == 4
