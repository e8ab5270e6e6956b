"""Two bot processes, each running one of two shards, on one Redis: each plays the games of its guilds,
and what crosses over (a DM press, which Discord sends to shard 0, for a table of a guild on shard 1) is
handled correctly from the shared state."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import discord
from dckit import (
    E2E,
    SHORT_GAME,
    Driver,
    assert_channel_budget,
    assert_interactions_answered,
    make_world,
    running_bot,
    speed_up,
)

from bot.storage import RedisStore
from fakes.discord import FakeDiscord
from fakes.discord.snowflake import shard_for_guild


def guild_id_on(fake: FakeDiscord, shard: int, count: int) -> int:
    while True:
        gid = fake.ids.next()
        if shard_for_guild(gid, count) == shard:
            return gid


def record_interactions(bot: discord.Client, seen: Counter[int | None]) -> None:
    async def on_interaction(interaction: discord.Interaction) -> None:
        seen[interaction.guild_id] += 1

    bot.on_interaction = on_interaction  # type: ignore[attr-defined]  # Client.dispatch finds it by name


async def test_two_shard_processes_play_their_guilds(fake: FakeDiscord, redis_url: str) -> None:
    speed_up(fake)
    north = make_world(fake, players=3, guild_id=guild_id_on(fake, 0, 2), name="North")
    south = make_world(fake, players=3, guild_id=guild_id_on(fake, 1, 2), name="South")
    seen: list[Counter[int | None]] = [Counter(), Counter()]
    async with (
        running_bot(
            fake, RedisStore.from_url(redis_url), config=E2E, seed=21, shard_count=2, shard_ids=[0]
        ) as p0,
        running_bot(
            fake,
            RedisStore.from_url(redis_url),
            config=E2E,
            seed=22,
            shard_count=2,
            shard_ids=[1],
            sync=False,
        ) as p1,
    ):
        for bot, counter in ((p0, seen[0]), (p1, seen[1])):
            record_interactions(bot, counter)
        bots = [p0, p1]
        a = Driver(fake, north.channel, north.users, bots, random.Random(1))
        b = Driver(fake, south.channel, south.users, bots, random.Random(2))
        await asyncio.gather(a.open("polish", options=SHORT_GAME), b.open("russian", options=SHORT_GAME))
        # One player in the south plays from their DMs: Discord sends DM interactions to shard 0.
        await b.choose_dm(south.users[1])
        docs = await asyncio.gather(a.play(), b.play())
    assert [d.ended for d in docs] == ["won", "won"]
    assert set(seen[0]) == {north.guild.id, None}, "process 0 handled another guild's interaction"
    assert set(seen[1]) == {south.guild.id}, "process 1 handled another guild's interaction"
    # The south player's presses in their DMs went to process 0, which played them on the south's table.
    assert seen[0][None] > 0 and b.stats["hand_dm"] > 0
    assert a.stats["pings_seen"] > 0 and b.stats["pings_seen"] > 0
    assert assert_interactions_answered(fake) > 0
    for world in (north, south):
        assert assert_channel_budget(fake, world.channel, E2E.channel_limit, E2E.channel_window) > 0
