"""The channel send budget at Discord's real values (5 messages per 5 s per channel), shared by two
processes through Redis, and edits of one message coalescing while they wait: Discord never has to
answer 429, and a burst of moves costs one edit of the table, not one per move."""

from __future__ import annotations

import asyncio
import time

from dckit import World, assert_channel_budget, running_bot

from adapters.discord.client import BotConfig
from bot.model import ChatRef, Group, Message
from bot.storage import RedisStore
from fakes.discord import FakeDiscord

REAL = BotConfig(ack_after=1.0)  # channel_limit=5, channel_window=5.0


def group(world: World, text: str, *, key: str | None = None, kind: str = "notice") -> Message:
    return Message(Group(ChatRef("dc", str(world.channel.id))), text, key=key, kind=kind)


async def test_two_processes_share_the_budget(fake: FakeDiscord, world: World, redis_url: str) -> None:
    assert REAL.channel_limit == 5 and REAL.channel_window == 5.0
    async with (
        running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as one,
        running_bot(fake, RedisStore.from_url(redis_url), config=REAL, sync=False) as two,
    ):
        started = time.monotonic()
        await asyncio.gather(
            *(one.deliver([group(world, f"one {i}")]) for i in range(4)),
            *(two.deliver([group(world, f"two {i}")]) for i in range(4)),
        )
        elapsed = time.monotonic() - started
    sent = sorted(m.content for m in fake.messages(world.channel))
    assert sent == sorted([f"one {i}" for i in range(4)] + [f"two {i}" for i in range(4)])
    assert elapsed >= 4.5  # eight sends need a second window of 5 s
    assert fake.rate_limited_count == 0  # the budget kept both processes under Discord's limit
    assert assert_channel_budget(fake, world.channel, 5, 5.0) == 8


async def test_waiting_edits_of_one_message_coalesce(fake: FakeDiscord, world: World, redis_url: str) -> None:
    async with running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as bot:
        await bot.deliver([group(world, "table 0", key="table:s:0", kind="table")])
        for i in range(4):  # use up the window
            await bot.deliver([group(world, f"notice {i}")])
        # Ten moves in quick succession, each editing the table: they queue behind the budget, and the
        # ones overtaken by a newer edit drop out.
        await asyncio.gather(
            *(bot.deliver([group(world, f"table {i}", key="table:s:0", kind="table")]) for i in range(1, 11))
        )
    [table] = [m for m in fake.messages(world.channel) if m.embeds]
    assert table.embeds[0]["description"] == "table 10"
    edits = fake.responses(
        route="PATCH /channels/{channel_id}/messages/{message_id}", major=str(world.channel.id)
    )
    assert 1 <= len(edits) <= 2, len(edits)
    assert fake.rate_limited_count == 0
    assert assert_channel_budget(fake, world.channel, 5, 5.0) == 5 + len(edits)


async def test_an_older_edit_from_another_process_is_dropped(
    fake: FakeDiscord, world: World, redis_url: str
) -> None:
    """Two processes deliver edits of one message in the wrong order (a timer in one, a press in the
    other): the one drawn from an older table version is dropped, whoever sends it last."""

    def table(text: str, version: int, *, notify: bool = False) -> Message:
        return Message(
            Group(ChatRef("dc", str(world.channel.id))),
            text,
            key="table:s:0",
            kind="table",
            notify=notify,
            version=version,
        )

    async with (
        running_bot(fake, RedisStore.from_url(redis_url)) as one,
        running_bot(fake, RedisStore.from_url(redis_url), sync=False) as two,
    ):
        await one.deliver([table("v1", 1, notify=True)])
        await one.deliver([table("v3", 3)])
        await two.deliver([table("v2", 2)])  # late: drawn before v3
        await two.deliver([table("v4", 4)])
        await one.deliver([table("v3 again", 3)])
    [message] = [m for m in fake.messages(world.channel) if m.embeds]
    assert message.embeds[0]["description"] == "v4"
    assert [v.embeds[0]["description"] for v in message.history] == ["v1", "v3"]
