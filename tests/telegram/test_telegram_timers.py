"""Turn timers through Telegram: a private warning, then a computer plays for the absent player."""

from __future__ import annotations

import asyncio

from tgkit import Rig, seat_everyone, settings


async def test_a_missed_turn_is_played_by_the_computer() -> None:
    rig = Rig(settings_=settings(turn_seconds=30, warn_seconds=10))
    await rig.start()
    try:
        fake = rig.fake
        people = [fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
        chat = rig.group("Cards", people)
        table = await seat_everyone(rig, chat, people, short=False)
        await rig.say(chat, people[0], "/settings turn 30")
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
