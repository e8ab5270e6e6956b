"""Turn timers through Telegram: a private warning, then a computer plays for the absent player."""

from __future__ import annotations

import asyncio

from tgkit import Rig, Table, seat_everyone, settings

from fakes.telegram import FakeChat, FakeUser


async def _timed_table(rig: Rig) -> tuple[Table, FakeChat, list[FakeUser]]:
    """Three people at a table whose turns last 30 s (a warning 10 s before the end)."""
    people = [rig.fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people, short=False)
    await rig.say(chat, people[0], "/settings turn 30")
    return table, chat, people


async def test_a_missed_turn_is_played_by_the_computer() -> None:
    rig = Rig(settings_=settings(turn_seconds=30, warn_seconds=10))
    await rig.start()
    try:
        fake = rig.fake
        table, chat, people = await _timed_table(rig)
        doc, state = await table.state()
        assert state is not None and doc.settings.turn_seconds == 30
        await table.move()  # a move restarts the turn's clock with the new settings
        _, state = await table.state()
        assert state is not None
        absent = people[state.to_act]
        actions = len(state.actions_this_deal())
        rig.clock.advance(21)  # the warning falls due 10 s before the deadline
        await fake.wait_until(lambda: "seconds left" in fake.bot_messages(absent)[-1].content, timeout=5)
        rig.clock.advance(10)
        await fake.wait_until(lambda: "Time is up" in fake.bot_messages(absent)[-1].content, timeout=5)
        await rig.settle()
        _, after = await table.state()
        assert after is not None and len(after.actions_this_deal()) > actions
        assert not any(
            "seconds left" in m.content or "Time is up" in m.content for m in fake.bot_messages(chat)
        )
        await asyncio.sleep(0)
    finally:
        await rig.close()


async def test_the_warning_brings_the_hand_and_its_buttons_play() -> None:
    """The warning is the player's hand again, new and notifying: a hand whose send was lost (a process
    killed before its queue went out) arrives with it, and a press on it plays the turn."""
    rig = Rig(settings_=settings(turn_seconds=30, warn_seconds=10))
    await rig.start()
    try:
        fake = rig.fake
        table, _, _ = await _timed_table(rig)
        await table.move()
        late, _, state = await table.lose_acting_hand()  # its send went down with a killed process
        assert table.hand_message(late) is None
        actions = len(state.actions_this_deal())
        rig.clock.advance(21)
        await fake.wait_until(lambda: "seconds left" in fake.bot_messages(late)[-1].content, timeout=5)
        warning = fake.bot_messages(late)[-1]
        assert not warning.silent and table.hand_message(late) is warning
        assert warning.content.splitlines()[1].startswith("Your turn:")  # under the heading, on top
        table.button_share, pressed = 1.0, table.pressed
        assert await table.move() and table.pressed == pressed + 1  # pressed on the warning's buttons
        await rig.settle()
        _, after = await table.state()
        assert after is not None and len(after.actions_this_deal()) == actions + 1
        rig.clock.advance(15)  # past the old deadline: the move was the player's, no computer's
        await rig.settle()
        assert not any("Time is up" in m.content for m in fake.bot_messages(late))
    finally:
        await rig.close()
