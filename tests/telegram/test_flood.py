"""Flood control through the real bot: one member sending `/rules` a hundred times in a group while a game
is going on must not bury the game, and one busy chat must not slow down another.

Time is a `SimClock` (discrete events): every send waits for its own budget and nothing else, so the
delays measured here are what the queues and budgets cause. Before the command budget, the merging and
priorities of the outbox and the chat-first update processor, the first test measured the table update
≈ 300 s after the move (98 answers ahead of it at the group's 20 a minute) and the second a quiet chat's
update ≈ 68 s late (the busy chat's waiting updates held every processing slot); see docs/TELEGRAM.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from floodkit import Recorder, SimClock
from tgkit import Rig, Table, seat_everyone, settings

from adapters.telegram.refs import chat_scope
from bot.model import Command, Message
from bot.settings import Settings
from core.deal import Phase
from fakes.telegram import FakeUser

FLOOD = 100
BUDGET: int = Settings.model_fields["command_limit"].default
"""The shipped command budget (the test environment switches it off for other tests)."""
WITHIN = 3.0
"""Seconds (of the clock) within which the table update and the acting player's hand must arrive."""


@pytest.fixture
async def sim() -> AsyncIterator[tuple[Rig, Recorder]]:
    clock = SimClock()
    rig = Rig(clock=clock, settings_=settings(command_limit=BUDGET))  # type: ignore[arg-type]
    recorder = Recorder()
    recorder.install(rig)
    await rig.start()
    try:
        yield rig, recorder
    finally:
        await rig.close()
        await clock.close()


async def _near_a_trick(table: Table) -> None:
    """Play on until the next card completes a trick (not the deal's last): that card updates the
    group's table message."""
    for _ in range(200):
        _, state = await table.state()
        assert state is not None
        deal = state.deal
        if (
            deal.phase == Phase.PLAY
            and len(deal.trick) == len(deal.active) - 1
            and bin(deal.hands[state.to_act or 0]).count("1") > 1
        ):
            return
        await table.move()
    raise AssertionError("no trick came")


async def _table_ref(rig: Rig, table: Table) -> int:
    doc, state = await table.state()
    assert state is not None
    refs = await rig.store.get_refs(chat_scope(table.chat.id))
    value = refs[f"table:{doc.serial}:{state.deal.number}"]
    return int(value.split(":", 1)[0])


@dataclass
class Delays:
    table: float
    hand: float
    rules_in_group: int
    slow_downs: int


async def _flood_and_move(rig: Rig, recorder: Recorder, table: Table, flooder: FakeUser) -> Delays:
    """`flooder` sends /rules FLOOD times in the group; right after, the player to act completes a trick.
    The delays of that move's table update and of the next player's hand, in seconds of the clock."""
    table_message = await _table_ref(rig, table)
    for _ in range(FLOOD):
        rig.fake.user_sends(table.chat, flooder, "/rules")
    start = rig.clock()
    await table.move()  # settles: every update handled, every queue empty
    _, state = await table.state()
    assert state is not None and state.to_act is not None
    doc = await table.doc()
    next_user = rig.fake._world.users[int(doc.seats[state.to_act].user_id or 0)]
    edits = [
        c for c in recorder.after(start, table.chat, ("editMessageText",)) if c.message_id == table_message
    ]
    hands = [c for c in recorder.after(start, next_user, ("sendMessage",)) if "Your hand" in c.text]
    rules = [c for c in recorder.after(start, table.chat, ("sendMessage",)) if "Rules" in c.text]
    slow = [c for c in recorder.after(start, flooder, ("sendMessage",)) if "Slow down" in c.text]
    assert edits and hands, "the move's table update or the next hand never came"
    return Delays(edits[0].at - start, hands[0].at - start, len(rules), len(slow))


async def test_a_flood_of_rules_does_not_bury_the_game(sim: tuple[Rig, Recorder]) -> None:
    rig, recorder = sim
    fake = rig.fake
    people = [fake.add_user(name) for name in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people)
    await _near_a_trick(table)
    _, state = await table.state()
    assert state is not None
    flooder = next(p for i, p in enumerate(people) if i != state.to_act)  # a player, not the one to act
    delays = await _flood_and_move(rig, recorder, table, flooder)
    print(f"\nflood of {FLOOD} /rules: {delays}")
    assert delays.table <= WITHIN and delays.hand <= WITHIN, delays
    assert fake.stats.too_many_requests == 0
    assert delays.slow_downs == 1  # privately, once
    assert 1 <= delays.rules_in_group <= 2  # the identical answers waiting together went as one
    assert not any("Slow down" in m.content for m in fake.messages(chat))
    # The flooder is silent for the rest of the window, and answered again after it.
    rig.clock.advance(61.0)
    await rig.say(chat, flooder, "/rules")
    assert "Rules" in fake.last_bot_message(chat).content


class _Slow:
    """A runner whose commands from one chat each take `seconds` (a computer thinking, a slow store)."""

    def __init__(self, inner: Any, clock: SimClock, chat_id: int, seconds: float) -> None:
        self.inner = inner
        self.clock = clock
        self.chat_id = str(chat_id)
        self.seconds = seconds

    async def handle(self, command: Command, *, kind: str = "command") -> list[Message]:
        if command.chat.chat_id == self.chat_id:
            await self.clock.sleep(self.seconds)
        result: list[Message] = await self.inner.handle(command, kind=kind)
        return result


async def test_a_busy_chat_does_not_delay_a_quiet_one(sim: tuple[Rig, Recorder]) -> None:
    rig, recorder = sim
    fake = rig.fake
    people = [fake.add_user(name) for name in ("Alice", "Bob", "Carol")]
    quiet = rig.group("Quiet", people)
    table = await seat_everyone(rig, quiet, people)
    await _near_a_trick(table)
    spammer = fake.add_user("Mallory")
    busy = rig.group("Busy", [spammer, fake.add_user("Trent")])
    adapter = rig.bot.adapter
    assert isinstance(rig.clock, SimClock)
    adapter.runner = _Slow(adapter.runner, rig.clock, busy.id, 0.5)
    table_message = await _table_ref(rig, table)
    for _ in range(2 * FLOOD):
        fake.user_sends(busy, spammer, "/score")
    start = rig.clock()
    await table.move()
    edits = [c for c in recorder.after(start, quiet, ("editMessageText",)) if c.message_id == table_message]
    assert edits
    delay = edits[0].at - start
    print(f"\nquiet chat's table update {delay:.2f} s after the move, busy chat flooding")
    assert delay <= WITHIN
    assert fake.stats.too_many_requests == 0
    # The busy chat's updates were all handled, in order, one at a time.
    assert rig.bot.adapter.updates >= 2 * FLOOD
    processor = rig.bot.application.update_processor
    assert getattr(processor, "working", 0) == 0


async def test_processing_slots_go_to_chats_not_to_waiting_updates() -> None:
    """A chat with many updates waiting holds one slot: another chat's update runs at once, with two
    slots in all. (PTB took a slot before the chat's lock: the waiting updates held every slot.)"""
    from telegram import Chat, Update
    from telegram import Message as TgMessage

    from adapters.telegram.processor import ChatOrderedProcessor

    processor = ChatOrderedProcessor(2)
    gate = asyncio.Event()
    order: list[str] = []

    def update(chat_id: int, n: int) -> Update:
        chat = Chat(chat_id, "group")
        return Update(n, message=TgMessage(n, None, chat))  # type: ignore[arg-type]

    async def busy(n: int) -> None:
        await gate.wait()
        order.append(f"busy{n}")

    async def quiet() -> None:
        order.append("quiet")

    tasks = [asyncio.ensure_future(processor.process_update(update(-1, n), busy(n))) for n in range(10)]
    tasks.append(asyncio.ensure_future(processor.process_update(update(-2, 99), quiet())))
    await asyncio.sleep(0.01)
    assert order == ["quiet"]  # done while the busy chat's first update is stuck
    assert processor.working == 1 and processor.waiting == 9
    gate.set()
    await asyncio.gather(*tasks)
    assert order[1:] == [f"busy{n}" for n in range(10)]  # the busy chat's updates kept their order


async def test_a_stranger_flooding_a_group_gets_no_note_there() -> None:
    """Someone who never opened the private chat cannot be told to slow down privately: they are told
    nothing, and the group gets neither the "slow down" nor a note pointing at the private chat."""
    rig = Rig(settings_=settings(command_limit=BUDGET))
    await rig.start()
    try:
        await _stranger_floods(rig)
    finally:
        await rig.close()


async def _stranger_floods(rig: Rig) -> None:
    fake = rig.fake
    alice, stranger = fake.add_user("Alice"), fake.add_user("Sam")
    chat = rig.group("Cards", [alice, stranger])
    for _ in range(30):
        fake.user_sends(chat, stranger, "/rules")
    rig.acted()
    await rig.settle()
    texts = [m.content for m in fake.messages(chat) if m.from_bot]
    assert texts and all(t.startswith("Rules") for t in texts), texts
    assert len(texts) <= BUDGET  # at most the budget (identical ones waiting together went as one)
    assert rig.bot.runtime.service.throttle.warned == 1
    assert rig.bot.adapter.dispatcher.stats.notes == 0
