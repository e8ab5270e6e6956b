"""What happens in a guild reaches the tables: a renamed channel or guild retitles its table (hands on
screen redrawn, nobody notified), and with the members intent a player who leaves the server gets a
computer in their seat (the service's `unreachable`)."""

from __future__ import annotations

import random

from dckit import E2E, SHORT_GAME, Driver, World, running_bot, speed_up

from adapters.discord.client import BotConfig
from bot.storage import MemoryStore
from fakes.discord import FakeDiscord


def shown(embed: dict[str, str]) -> str:
    """An embed's text as the reader sees it (markdown escapes removed)."""
    return (embed.get("description") or "").replace("\\", "")


async def test_renames_retitle_the_table(fake: FakeDiscord, world: World) -> None:
    speed_up(fake)
    alice, bob = world.users[:2]
    async with running_bot(fake, MemoryStore(), config=E2E, seed=15) as bot:
        driver = Driver(fake, world.channel, [alice, bob], [bot], random.Random(15))
        await driver.open("polish", computers=1)
        await driver.choose_dm(bob)
        [dm] = [m for m in fake.dms(bob) if m.embeds]
        assert "Card room · #thousand" in shown(dm.embeds[0])  # the DM names the game's channel
        dms_before = len(fake.dms(bob))

        fake.rename_channel(world.channel, "cards")
        await fake.wait_until(lambda: "#cards" in shown(fake.dms(bob)[-1].embeds[0]))
        await fake.wait_until(lambda: bot.idle)
        assert len(fake.dms(bob)) == dms_before  # edited, not posted: nobody was notified

        fake.rename_guild(world.guild, "Card club")
        await fake.wait_until(lambda: "Card club · #cards" in shown(fake.dms(bob)[-1].embeds[0]))
        await fake.wait_until(lambda: bot.idle)
        assert len(fake.dms(bob)) == dms_before


async def test_a_player_who_leaves_the_server_is_played_by_a_computer(
    fake: FakeDiscord, world: World
) -> None:
    speed_up(fake)
    alice, bob, carol = world.users[:3]
    config = BotConfig(ack_after=E2E.ack_after, channel_window=E2E.channel_window, members_intent=True)
    async with running_bot(fake, MemoryStore(), config=config, seed=16) as bot:
        driver = Driver(fake, world.channel, [alice, bob, carol], [bot], random.Random(16))
        await driver.open("polish", options=SHORT_GAME)
        fake.remove_member(world.guild, carol)
        await fake.wait_until(
            lambda: any("cannot be reached" in m.content for m in fake.messages(world.channel)), timeout=5
        )
        await fake.wait_until(lambda: bot.idle)
        _, doc, _ = await driver.peek()
        assert doc is not None
        seat = next(s for s in doc.seats if s.user == f"dc:{carol.id}")
        assert seat.away
        driver.players = [alice, bob]
        finished = await driver.play()
    assert finished.ended == "won"
