"""A bot restart in the middle of a game: buttons sent before it still work after it (they are dynamic
items matched by custom id), the edit-in-place references survive in Redis, and a button from an older
version of the table is answered "the table has moved on", privately."""

from __future__ import annotations

import random

from dckit import (
    E2E,
    SHORT_GAME,
    Driver,
    World,
    assert_interactions_answered,
    assert_one_table_message_per_deal,
    payload_of,
    running_bot,
    speed_up,
)

from bot.storage import RedisStore
from fakes.discord import FakeDiscord


async def test_buttons_from_before_a_restart_still_work(
    fake: FakeDiscord, world: World, redis_url: str
) -> None:
    speed_up(fake)
    players = world.users[:3]
    async with running_bot(fake, RedisStore.from_url(redis_url), config=E2E, seed=31) as first:
        driver = Driver(fake, world.channel, players, [first], random.Random(3))
        await driver.open("polish", options=SHORT_GAME)
        for _ in range(8):
            assert await driver.step()
        version, doc, state = await driver.peek()
        assert doc is not None and state is not None and state.to_act is not None
        actor = driver.user(doc.seats[state.to_act].user or "")
        current = await driver.hand_for(actor, version)  # an ephemeral hand drawn by the first process
        table = driver.table_message()
        assert table is not None

    # A new process: new service, new store connection, new gateway session; commands are not re-synced.
    async with running_bot(fake, RedisStore.from_url(redis_url), config=E2E, seed=32, sync=False) as second:
        driver.bots = [second]
        # My hand on the table message the first process sent: a second hand message, at this version.
        it = await fake.press(actor, table, f"h|dc:{world.channel.id}")
        again = await it.original_message()
        await driver.settle(it)
        assert again.ephemeral and again.visible_to is actor and again is not current

        # A move on the hand the first process drew: played, and that message updated in place.
        move = next(c for c in current.custom_ids() if (p := payload_of(c)) is not None and p[2] == version)
        it = await fake.press(actor, current, move)
        assert (await it.response()).type == 7
        await driver.settle(it)
        after, _, _ = await driver.peek()
        assert after > version, "the move pressed on a pre-restart button was not played"

        # The second hand message still shows the old version: its buttons are stale now.
        old = next(c for c in again.custom_ids() if (p := payload_of(c)) is not None and p[2] == version)
        it = await fake.press(actor, again, old)
        await driver.settle(it)
        assert (await driver.peek())[0] == after, "a stale button changed the table"
        notes = [m.content for m in fake.ephemerals(actor) if m.content]
        assert any("out of date" in n for n in notes), notes
        assert not any("out of date" in m.content for m in fake.messages(world.channel))

        doc = await driver.play()
    assert doc.ended == "won"
    assert_one_table_message_per_deal(fake, world.channel)
    assert assert_interactions_answered(fake) > 0
    assert fake.gateway.stats.identifies == 2
