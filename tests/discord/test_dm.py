"""Hands by direct message: switching with the hand's button or `/thousand hand dm:true`, the DM edited in
place and re-posted when the turn comes (a new message notifies), presses in the DM playing at the
guild's table; and closed DMs (403 50007): the player is told to use the My hand button instead, by an
ephemeral note or a bare ping, and gets ephemeral hands again."""

from __future__ import annotations

import copy
import random

from dckit import E2E, Driver, World, payload_of, running_bot, speed_up

from adapters.discord.i18n import DM_CLOSED, DM_ON, labels
from bot.storage import MemoryStore
from fakes.discord import FakeDiscord
from fakes.discord.interactions import MESSAGE_COMPONENT


async def test_hand_by_dm_from_the_button_and_back(fake: FakeDiscord, world: World) -> None:
    speed_up(fake)
    alice, bob = world.users[:2]
    async with running_bot(fake, MemoryStore(), config=E2E, seed=3) as bot:
        driver = Driver(fake, world.channel, [alice, bob], [bot], random.Random(3))
        await driver.open("polish", computers=1)
        table = driver.table_message()
        assert table is not None
        it = await fake.press(bob, table, f"h|dc:{world.channel.id}")
        hand = await it.original_message()
        await driver.settle(it)
        switch = await fake.press(bob, hand, "m|1")
        assert (await switch.response()).type == 7
        await driver.settle(switch)
        assert "direct message" in hand.content and not hand.custom_ids()  # the ephemeral hand says where
        [dm] = fake.dms(bob)
        assert dm.embeds and "m|0" in dm.custom_ids()
        driver.dm_users.add(bob.id)
        for _ in range(12):
            if not await driver.step():
                break
        assert driver.stats["hand_dm"] > 0
        # Earlier DM hands were replaced by the fresh one on each turn: one hand message in the DM.
        assert len([m for m in fake.dms(bob) if m.embeds]) == 1
        later = [m for m in fake.ephemerals(bob) if m.id > hand.id]
        assert not [m for m in later if m.embeds], "a hand was shown ephemerally to a player who chose DMs"

        back = await fake.press(bob, fake.dms(bob)[-1], "m|0")
        await driver.settle(back)
        driver.dm_users.discard(bob.id)
        assert not await bot.refs.wants_dm(bob.id)


async def test_closed_dms_fall_back_to_the_button(fake: FakeDiscord, world: World) -> None:
    speed_up(fake)
    alice, bob = world.users[:2]
    fake.close_dms(bob)
    async with running_bot(fake, MemoryStore(), config=E2E, seed=4) as bot:
        driver = Driver(fake, world.channel, [alice, bob], [bot], random.Random(4))
        await driver.open("polish", computers=1)
        it = await fake.slash(bob, world.channel, "thousand", "hand", dm=True)
        await driver.settle(it)
        notes = [m.content for m in fake.ephemerals(bob)]
        told = labels("en")._(DM_CLOSED).format(mention=f"<@{bob.id}>")
        assert told in notes, notes
        assert fake.dms(bob) == [] and not await bot.refs.wants_dm(bob.id)
        # The hand came ephemerally after all.
        assert any(
            payload_of(c) is not None or c.startswith("m|")
            for m in fake.ephemerals(bob)
            for c in m.custom_ids()
        )

        # Preference set while DMs were open, then closed: the next delivery (not an interaction of bob's)
        # fails with 50007 and bob is told in the channel, by a bare mention with the My hand button.
        await bot.refs.set_wants_dm(bob.id, True)
        for _ in range(40):
            if not await driver.step():
                break
            if not await bot.refs.wants_dm(bob.id):
                break
        assert not await bot.refs.wants_dm(bob.id)
        told_in_channel = [m for m in world.channel.messages if m.content == told]
        assert told_in_channel and bob in told_in_channel[-1].notified
        assert f"h|dc:{world.channel.id}" in told_in_channel[-1].custom_ids()
        assert fake.dms(bob) == []


async def test_a_table_in_the_dm_with_the_bot(fake: FakeDiscord, world: World) -> None:
    """The service allows a table in a private chat (against computers): the DM is then its channel."""
    alice = world.users[0]
    dm = fake.dm_channel(alice)
    async with running_bot(fake, MemoryStore(), config=E2E, seed=9) as bot:
        opened = await fake.slash(alice, dm, "thousand", "new")
        lobby = await opened.original_message()
        await fake.wait_until(lambda: bot.idle)
        assert not lobby.ephemeral and lobby.channel is dm
        for name in ("add_ai", "add_ai", "start"):
            cid = next(c for c in lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == name)
            it = await fake.press(alice, lobby, cid)
            await it.response()
            await fake.wait_until(lambda: bot.idle)
        tables = [m for m in fake.dms(alice) if any(c.startswith("h|") for c in m.custom_ids())]
        assert tables and tables[-1].embeds
        assert any(m.embeds and "Your hand" in m.embeds[0]["description"] for m in dm.messages)


async def test_a_forged_switch_on_the_table_message_answers_the_presser_alone(
    fake: FakeDiscord, world: World
) -> None:
    """The hand-delivery switch pressed on the channel's table message (an old layout or a tampered client
    sends `m|1` there): the note goes to the presser ephemerally and the public table stays as it was."""
    alice, bob = world.users[:2]
    async with running_bot(fake, MemoryStore(), config=E2E, seed=3) as bot:
        driver = Driver(fake, world.channel, [alice, bob], [bot], random.Random(3))
        await driver.open("polish", computers=1)
        table = driver.table_message()
        assert table is not None
        before = table.content, [e.get("description") for e in table.embeds]
        shown = table.components
        table.components = [*copy.deepcopy(shown), {"type": 1, "id": 998, "components": [dict(FORGED)]}]
        try:
            data = {"custom_id": "m|1", "component_type": 2, "id": 999}
            it = await fake._interact(MESSAGE_COMPONENT, bob, world.channel, data, message=table)
        finally:
            if len(table.components) == len(shown) + 1:
                table.components = shown
        await driver.settle(it)
        assert (table.content, [e.get("description") for e in table.embeds]) == before
        note = labels("en")._(DM_ON)
        assert note in [m.content for m in fake.ephemerals(bob)]
        assert not [m for m in fake.messages(world.channel) if note in (m.content or "")]
        assert await bot.refs.wants_dm(bob.id)


FORGED = {"type": 2, "style": 2, "label": "?", "custom_id": "m|1", "id": 999}
