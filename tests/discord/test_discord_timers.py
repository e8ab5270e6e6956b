"""Turn timers through Discord (short turn times): the warning reaches only its player (an ephemeral
followup on their open hand, else a bare ping with the My hand button), and at the deadline a computer
plays for them, the table moving on in the channel."""

from __future__ import annotations

import asyncio
import random

from dckit import E2E, Driver, World, running_bot, settings, speed_up

from adapters.discord.i18n import HURRY, labels
from bot.storage import MemoryStore
from fakes.discord import FakeDiscord


async def test_warning_then_a_computer_plays_for_the_absent(fake: FakeDiscord, world: World) -> None:
    speed_up(fake)
    alice, bob, carol = world.users[:3]
    timed = settings(turn_seconds=2, warn_seconds=1)
    async with running_bot(fake, MemoryStore(), timed, config=E2E, seed=8) as bot:
        driver = Driver(fake, world.channel, [alice, bob, carol], [bot], random.Random(8))
        await driver.open("polish")
        version, doc, state = await driver.peek()
        assert doc is not None and state is not None and state.to_act is not None
        absent = driver.user(doc.seats[state.to_act].user or "")
        # The player on turn opens their hand (so the bot holds a token to reach them), then waits.
        await driver.hand_for(absent, version)
        await moved(driver, version)
        await fake.wait_until(lambda: bot.idle, timeout=5)
        later, doc, state = await driver.peek()
        assert (
            later > version
            and doc is not None
            and doc.seats[[s.user for s in doc.seats].index(f"dc:{absent.id}")].missed == 1
        )
        private = [m for m in fake.ephemerals(absent) if not m.embeds]
        texts = " ".join(m.content for m in private)
        assert "seconds left" in texts or "second left" in texts, texts
        # "Time is up" is said on top of the redrawn hand (an embed), as on every platform.
        hands = " ".join(e.get("description", "") for m in fake.ephemerals(absent) for e in m.embeds)
        assert "computer played your turn" in hands, hands
        for m in fake.messages(world.channel):
            assert "second" not in m.content and "computer played your turn" not in m.content

        # Someone the bot holds no interaction token for (they never saw a hand here): a bare ping warns them.
        for _ in range(8):
            version, doc, state = await driver.peek()
            assert doc is not None and state is not None and doc.status == "game"
            seat = doc.seats[state.to_act if state.to_act is not None else 0]
            actor = driver.user(seat.user or "")
            if await bot.refs.hand(actor.id, driver.channel.id) is None:
                break
            await moved(driver, version)
        else:
            raise AssertionError("the turn never came to a player without a hand open")
        hurry = labels("en")._(HURRY).format(mention=f"<@{actor.id}>")
        await moved(driver, version)
        await fake.wait_until(lambda: bot.idle, timeout=5)
        warned = [m for m in world.channel.messages if m.content == hurry]
        assert warned and actor in warned[0].notified and not warned[0].ephemeral
        assert f"h|dc:{world.channel.id}" in warned[0].custom_ids()


async def moved(driver: Driver, version: int, timeout: float = 6.0) -> None:
    """Until the table's version passes `version` (a timer fired and a computer played)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while (await driver.peek())[0] <= version:
        assert asyncio.get_running_loop().time() < deadline, "no timer fired"
        await asyncio.sleep(0.05)
