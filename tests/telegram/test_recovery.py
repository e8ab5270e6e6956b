"""Turn hands a killed process had not sent come from the next process that starts (`recovery`).

The tables are found by their turn deadlines, so the rigs run with turn timers (the default of a real
bot, 90 s)."""

from __future__ import annotations

from tgkit import Rig, Table, seat_everyone, settings

from adapters.telegram.recovery import LOST_HAND_GRACE
from adapters.telegram.refs import chat_scope
from fakes.telegram import FakeUser


def _counts(rig: Rig, people: list[FakeUser]) -> dict[int, int]:
    return {p.id: len(rig.fake.bot_messages(p)) for p in people}


async def _started(rig: Rig) -> tuple[Table, list[FakeUser]]:
    fake = rig.fake
    people = [fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people, short=False)
    table.button_share = 1.0
    for _ in range(3):
        assert await table.move()
    return table, people


async def _restart(rig: Rig) -> None:
    """The process goes, another one comes and looks for lost hands after `LOST_HAND_GRACE`."""
    await rig.stop()
    await rig.start()
    rig.clock.advance(LOST_HAND_GRACE + 1)
    await rig.settle()
    for _ in range(50):  # the look happens in a task of its own, after the clock moved
        if rig.bot.adapter._recovery is not None and rig.bot.adapter._recovery.done():
            break
        rig.clock.advance(0.1)
        await rig.settle()
    await rig.settle()


async def test_a_hand_lost_with_a_killed_process_comes_when_the_next_one_starts() -> None:
    rig = Rig(settings_=settings(turn_seconds=60))
    await rig.start()
    try:
        table, people = await _started(rig)
        # The acting hand never went out: its message is not there, its reference was never written.
        late, lost, state = await table.lose_acting_hand()
        await rig.store.delete_ref(chat_scope(late.id), f"hand:{table.table_id}")
        before = _counts(rig, people)
        await _restart(rig)
        assert rig.bot.adapter.recovered_hands == 1
        after = _counts(rig, people)
        assert after[late.id] == before[late.id] + 1
        assert all(after[p.id] == before[p.id] for p in people if p is not late), "only the lost hand"
        hand = table.hand_message(late)
        assert hand is not None and hand is not lost and not hand.silent
        actions = len(state.actions_this_deal())
        pressed = table.pressed
        assert await table.move() and table.pressed == pressed + 1  # played from the recovered hand
        _, now = await table.state()
        assert now is not None and len(now.actions_this_deal()) == actions + 1
    finally:
        await rig.close()


async def test_a_restart_sends_nothing_when_every_hand_went_out() -> None:
    rig = Rig(settings_=settings(turn_seconds=60))
    await rig.start()
    try:
        table, people = await _started(rig)
        before = _counts(rig, people)
        await _restart(rig)
        assert rig.bot.adapter.recovered_hands == 0
        assert _counts(rig, people) == before
        assert await table.move()
    finally:
        await rig.close()
