"""Quick players (issue 18, part 1): people who act the moment it is their turn, faster than the channel's
budget lets the bot post, with the memory store and with Redis and two shard processes.

Checked at every change of a message (`dckit.Watch`): at most one turn ping in the channel; the newest
table message never shows an older state than was shown; no hand of a deal (ephemeral or DM) before the
last deal's result; a player's newest DM hand never goes back to an older version. At every deal's
start, once the bots are idle: one ping, naming the player who must act. At the end: every ping deleted
exactly once (no Unknown Message from Discord), one table message per deal, every interaction answered.
"""

from __future__ import annotations

import random

from dckit import (
    E2E,
    QuickDriver,
    Shown,
    Watch,
    World,
    assert_channel_budget,
    assert_interactions_answered,
    assert_one_table_message_per_deal,
    assert_pings_deleted_once,
    make_world,
    running_bot,
    settings,
    speed_up,
)
from test_shards import guild_id_on

from bot.storage import MemoryStore, RedisStore
from fakes.discord import FakeDiscord

FIVE_DEALS = (("barrel_at", "200"), ("target", "250"))
"""A game of several deals (more deal boundaries than `SHORT_GAME`'s)."""


def check(fake: FakeDiscord, world: World, driver: QuickDriver, watch: Watch, deals: int) -> None:
    assert not watch.problems, watch.problems[:5]
    assert watch.max_pings == 1
    assert assert_pings_deleted_once(fake, watch) >= deals
    assert driver.stats["pings_seen"] > 0 and driver.deal >= 2
    assert assert_interactions_answered(fake) > driver.stats["steps"]
    assert assert_channel_budget(fake, world.channel, E2E.channel_limit, E2E.channel_window) > 0
    assert fake.rate_limited_count == 0
    assert assert_one_table_message_per_deal(fake, world.channel) >= deals


async def test_quick_players_memory(fake: FakeDiscord, world: World) -> None:
    speed_up(fake)
    shown = Shown()
    async with running_bot(fake, MemoryStore(), settings(), config=E2E, seed=31) as bot:
        shown.tap(bot)
        driver = QuickDriver(fake, world.channel, world.users[:3], [bot], random.Random(31), slash_ratio=0.2)
        watch = Watch(fake, world.channel, shown, world.users)
        await driver.open("polish", options=FIVE_DEALS)
        driver.quick = True
        doc = await driver.play()
        await QuickDriver.__mro__[1].settle(driver)
        watch.close()
    assert doc.status == "finished"
    check(fake, world, driver, watch, deals=driver.deal)
    print(dict(driver.stats), "pings", len(watch.pings))


async def test_quick_players_redis_two_shards(fake: FakeDiscord, redis_url: str) -> None:
    """The table's guild is on shard 1 (process 1); one player has their hand by DM, and Discord sends DM
    presses to shard 0 (process 0): both processes post in one channel, sharing its references."""
    speed_up(fake)
    world = make_world(fake, players=3, guild_id=guild_id_on(fake, 1, 2), name="South")
    shown = Shown()
    async with (
        running_bot(
            fake, RedisStore.from_url(redis_url, prefix="quick0"), config=E2E, seed=41, shard_count=2,
            shard_ids=[0],
        ) as p0,
        running_bot(
            fake, RedisStore.from_url(redis_url, prefix="quick0"), config=E2E, seed=42, shard_count=2,
            shard_ids=[1], sync=False,
        ) as p1,
    ):  # fmt: skip
        for bot in (p0, p1):
            shown.tap(bot)
        driver = QuickDriver(fake, world.channel, world.users, [p0, p1], random.Random(41), slash_ratio=0.2)
        watch = Watch(fake, world.channel, shown, world.users)
        await driver.open("russian", options=FIVE_DEALS)
        await driver.choose_dm(world.users[1])
        driver.quick = True
        doc = await driver.play()
        await QuickDriver.__mro__[1].settle(driver)
        watch.close()
    assert doc.status == "finished"
    assert driver.stats["hand_dm"] > 0
    check(fake, world, driver, watch, deals=driver.deal)
    print(dict(driver.stats), "pings", len(watch.pings))
