"""The delivery queues under pressure: identical answers merged, edits of a message about to be replaced
dropped, the most urgent message first, a waiting answer giving way to a table update, full queues
shedding the least urgent, and the shared budget keeping a share for urgent sends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from floodkit import Recorder, SimClock
from tgkit import Rig, VirtualClock

from adapters.telegram.content import render
from adapters.telegram.dispatch import priority
from adapters.telegram.limits import INFO, NORMAL, URGENT, SendLimits
from adapters.telegram.outbox import Outbox
from adapters.telegram.queue import QUEUE_LIMIT, Op
from bot.model import Button, ChatRef, Group, Message, Private, UserRef
from bot.storage import MemoryStore, StorageUnavailable

# Every test ends on its own, with a failure, when the outbox livelocks (serving its queue in arrival
# order makes a send that gives way come straight back, forever): the worker spins without awaiting, so
# only the timeout's signal can break into it, and each wait after that is bounded (`_drained`), or the
# test would wait for ever on a queue that no worker serves any more.
pytestmark = pytest.mark.timeout(15)
DRAIN_SECONDS = 5.0


async def _drained(outbox: Outbox) -> None:
    """Wait for the outbox to deliver everything queued; fail (instead of hanging) when it does not."""
    assert await outbox.drain(timeout=DRAIN_SECONDS), f"the outbox did not drain: {outbox.pending} pending"


def _group(chat_id: int, text: str, key: str | None = None, **kw: object) -> Message:
    return Message(Group(ChatRef("tg", str(chat_id), "Cards")), text, key, **kw)  # type: ignore[arg-type]


def _op(chat_id: int, text: str, key: str | None = None, *, priority: int | None = None, **kw: object) -> Op:
    return Op(chat_id, render(_group(chat_id, text, key)), key=key, priority=priority, **kw)  # type: ignore[arg-type]


def _sent_texts(rig: Rig, chat_id: int, method: str = "sendMessage") -> list[str]:
    return [
        str(c.params.get("text"))
        for c in rig.fake.calls
        if c.method == method and str(c.params.get("chat_id")) == str(chat_id) and c.status == 200
    ]


async def test_identical_answers_waiting_for_one_chat_go_once(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    outbox = rig.bot.adapter.outbox
    for _ in range(10):
        outbox.put(_op(chat.id, "**Rules: polish**"))
    outbox.put(_op(chat.id, "something else"))
    await _drained(outbox)
    assert _sent_texts(rig, chat.id) == ["<b>Rules: polish</b>", "something else"]
    assert outbox.stats.duplicates == 9
    # Once sent, the same answer asked again is sent again (only waiting ones merge).
    outbox.put(_op(chat.id, "**Rules: polish**"))
    await _drained(outbox)
    assert _sent_texts(rig, chat.id).count("<b>Rules: polish</b>") == 2


async def test_an_edit_of_a_hand_about_to_be_replaced_is_not_sent(rig: Rig) -> None:
    alice = rig.fake.add_user("Alice")
    rig.fake.user_starts_bot(alice)
    await rig.settle()
    user = UserRef("tg", str(alice.id), "Alice")
    outbox = rig.bot.adapter.outbox

    def hand(text: str, version: int, *, notify: bool) -> Op:
        message = Message(Private(user), text, "hand:tg:-1", notify=notify, version=version)
        key = "hand:tg:-1"
        return Op(alice.id, render(message), key=key, fresh=notify, replace_old=True, version=version)

    outbox.put(hand("hand v1", 1, notify=True))
    await _drained(outbox)
    first = rig.fake.last_bot_message(alice)
    outbox.put(hand("hand v2", 2, notify=False))  # an edit of v1 ...
    outbox.put(hand("hand v3", 3, notify=True))  # ... which v3 replaces: v1 is deleted, never edited
    await _drained(outbox)
    assert outbox.stats.moot == 1
    assert first.deleted and first.history == []
    assert [m.content for m in rig.fake.messages(alice) if m.content.startswith("hand")] == ["hand v3"]
    assert not [c for c in rig.fake.calls if c.method == "editMessageText"]


async def test_table_updates_go_before_answers_queued_earlier(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    outbox = rig.bot.adapter.outbox
    outbox.put(_op(chat.id, "table v1", "table:x:1", fresh=True, priority=URGENT, version=1))
    await _drained(outbox)
    outbox.put(_op(chat.id, "score answer"))
    outbox.put(_op(chat.id, "Bob is away", priority=NORMAL))
    outbox.put(_op(chat.id, "rules answer"))
    outbox.put(_op(chat.id, "table v2", "table:x:1", priority=URGENT, version=2))
    await _drained(outbox)
    order = [
        (c.method, str(c.params.get("text")))
        for c in rig.fake.calls
        if str(c.params.get("chat_id")) == str(chat.id) and c.method in ("sendMessage", "editMessageText")
    ]
    assert order[1:] == [
        ("editMessageText", "table v2"),
        ("sendMessage", "Bob is away"),
        ("sendMessage", "score answer"),
        ("sendMessage", "rules answer"),
    ]


def _table_key(serial: str, deal: int) -> str:
    """A key built at run time, as the service builds them (`f"table:{serial}:{deal}"`): equal keys are
    distinct objects, unlike two literals in one test, which Python makes one object."""
    return f"table:{serial}:{deal}"


async def test_messages_of_one_key_built_apart_merge_while_waiting(rig: Rig) -> None:
    """Three states of one table queued before the worker runs: only the newest is sent, once. (Keys
    compared by identity instead of equality would send all three.)"""
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    outbox = rig.bot.adapter.outbox
    serial = "".join(["s", "7"])
    keys = [_table_key(serial, 1) for _ in range(3)]
    assert keys[0] == keys[1] == keys[2] and keys[0] is not keys[1] and keys[1] is not keys[2]
    for version, key in enumerate(keys, start=1):
        outbox.put(_op(chat.id, f"table v{version}", key, fresh=version == 1, version=version))
    assert outbox.stats.merged == 2
    await _drained(outbox)
    assert _sent_texts(rig, chat.id) == ["table v3"]
    assert outbox.stats.sent == 1 and not [c for c in rig.fake.calls if c.method == "editMessageText"]


async def test_a_merged_message_keeps_the_higher_priority(rig: Rig) -> None:
    """The acting player's hand (urgent) is redrawn by a less urgent update of the same key while it
    waits: the merged message still goes before the notice queued earlier (taking the newer message's
    priority would send it after)."""
    alice = rig.fake.add_user("Alice")
    rig.fake.user_starts_bot(alice)
    await rig.settle()
    user = UserRef("tg", str(alice.id), "Alice")
    outbox = rig.bot.adapter.outbox
    hand_key = "".join(["hand:tg:", str(-1)])

    def hand(text: str, version: int, rank: int) -> Op:
        message = Message(Private(user), text, hand_key, version=version)
        return Op(alice.id, render(message), key=f"{hand_key}", priority=rank, version=version)

    before = len(_sent_texts(rig, alice.id))
    outbox.put(_op(alice.id, "a notice", priority=NORMAL))
    outbox.put(hand("hand v1: your turn", 1, URGENT))
    outbox.put(hand("hand v2: your turn", 2, INFO))
    assert outbox.stats.merged == 1
    await _drained(outbox)
    assert _sent_texts(rig, alice.id)[before:] == ["hand v2: your turn", "a notice"]


async def test_a_full_queue_drops_the_least_urgent_oldest_answers(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    outbox = rig.bot.adapter.outbox
    outbox.put(_op(chat.id, "notice", priority=NORMAL))
    for i in range(QUEUE_LIMIT + 5):
        outbox.put(_op(chat.id, f"answer {i}"))
    outbox.put(_op(chat.id, "table", "table:x:1", fresh=True, priority=URGENT, version=1))
    assert outbox.stats.shed == 7
    await _drained(outbox)
    sent = _sent_texts(rig, chat.id)
    assert sent[:2] == ["table", "notice"]  # kept, and first
    assert sent[2:] == [f"answer {i}" for i in range(7, QUEUE_LIMIT + 5)]  # the oldest answers went
    assert rig.fake.stats.too_many_requests == 0


@pytest.fixture
async def tight() -> AsyncIterator[tuple[Rig, Recorder]]:
    """The real bot on a `SimClock`, with a group budget of 3 messages a minute (2 for answers)."""
    clock = SimClock()
    rig = Rig(clock=clock, limits=SendLimits(group=(3, 60.0)))  # type: ignore[arg-type]
    recorder = Recorder()
    recorder.install(rig)
    await rig.start()
    try:
        yield rig, recorder
    finally:
        await rig.close()
        await clock.close()


async def test_a_waiting_answer_gives_way_to_a_table_update(tight: tuple[Rig, Recorder]) -> None:
    rig, recorder = tight
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    outbox = rig.bot.adapter.outbox
    start = rig.clock()
    for i in range(2):
        outbox.put(_op(chat.id, f"answer {i}"))
    await _drained(outbox)
    outbox.put(_op(chat.id, "answer 2"))
    for _ in range(50):  # time stands still while something can run: the third answer now waits
        await asyncio.sleep(0)
    assert _sent_texts(rig, chat.id) == ["answer 0", "answer 1"] and outbox.pending
    outbox.put(_op(chat.id, "table", "table:x:1", fresh=True, priority=URGENT, version=1))
    await _drained(outbox)
    times = {c.text: c.at for c in recorder.after(start, chat, ("sendMessage",))}
    assert _sent_texts(rig, chat.id) == ["answer 0", "answer 1", "table", "answer 2"]
    assert times["table"] - start <= 2.0  # the third slot of the minute went to the table
    assert times["answer 2"] - start >= 60.0  # the answer waited for the next minute
    assert outbox.stats.preempted >= 1 and rig.bot.limiter.preempted >= 1
    assert rig.fake.stats.too_many_requests == 0


def test_less_urgent_sends_take_from_smaller_buckets_too() -> None:
    limits = SendLimits()
    urgent = {b.key: b.limit for b in limits.buckets("7", -100, URGENT)}
    info = {b.key: b.limit for b in limits.buckets("7", -100, INFO)}
    assert urgent == {"tg:7:all": 30, "tg:7:chat:-100": 1, "tg:7:group:-100": 20}
    assert info == {**urgent, "tg:7:all:low": 20, "tg:7:group:-100:low": 13}
    assert {b.key for b in limits.buckets("7", 42, NORMAL)} == {"tg:7:all", "tg:7:all:low", "tg:7:chat:42"}


async def test_a_bot_without_the_shared_limiter_still_delivers(rig: Rig) -> None:
    """Outboxes on a plain `ExtBot` (no rate limiter: PTB refuses `rate_limit_args` then) work as before."""
    from telegram.ext import ExtBot

    from fakes.telegram import InProcessRequest

    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    bot: ExtBot[None] = ExtBot(rig.fake.token, request=InProcessRequest(rig.fake))
    await bot.initialize()
    other = Outbox(bot, rig.store, clock=rig.clock.now)
    other.put(_op(chat.id, "hello"))
    other.put(_op(chat.id, "table", "table:x:1", fresh=True, priority=URGENT, version=1))
    await _drained(other)
    assert _sent_texts(rig, chat.id) == ["table", "hello"] and other.stats.failed == 0
    await other.close()
    await bot.shutdown()


def test_a_new_deals_hand_waits_behind_the_hands_of_players_who_must_act() -> None:
    """A notifying hand with moves is urgent; one without (someone else bids first) may wait, and when
    its owner's turn comes while it waits, the turn's hand takes its place (one send)."""
    ala = Private(UserRef("tg", "1", "Ala"))
    move = ((Button("Pass", "pass"),),)
    assert priority(Message(ala, "hand", "hand:tg:-1", move, notify=True, kind="hand")) == URGENT
    assert priority(Message(ala, "hand", "hand:tg:-1", notify=True, kind="hand")) == NORMAL
    assert priority(Message(ala, "hand", "hand:tg:-1", move, kind="hand")) == NORMAL


class _StoreAway(MemoryStore):
    """A memory store whose send budget is unreachable while `away` (Redis restarting)."""

    away = False

    async def acquire_sends(self, buckets: Any, now: float | None = None) -> float:
        if self.away:
            raise StorageUnavailable("redis is restarting")
        return await super().acquire_sends(buckets, now)


async def test_a_message_waits_for_the_store_instead_of_being_lost() -> None:
    """A hand queued when Redis goes away is sent when it is back (before: dropped, and the player waited
    for the turn's warning)."""
    clock = VirtualClock()
    store = _StoreAway(clock=clock)
    rig = Rig(store=store, clock=clock)
    await rig.start()
    try:
        alice = rig.fake.add_user("Alice")
        rig.fake.user_starts_bot(alice)
        outbox = rig.bot.adapter.outbox
        store.away = True
        outbox.put(
            Op(alice.id, render(_group(alice.id, "your turn")), key="hand:x", fresh=True, priority=URGENT)
        )
        for _ in range(200):
            if outbox.stats.store_waits >= 1:
                break
            await asyncio.sleep(0.01)
        assert outbox.stats.store_waits >= 1 and "your turn" not in _sent_texts(rig, alice.id)
        store.away = False
        assert await outbox.drain(timeout=5)
        assert _sent_texts(rig, alice.id).count("your turn") == 1 and outbox.stats.failed == 0
    finally:
        await rig.close()
