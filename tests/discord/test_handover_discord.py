"""A restart loses no channel message on Discord either: what waits for the channel budget when the
process stops is handed over (`adapters/discord/handover.py`) and a live process posts it once, never an
older state after a newer one; with the memory store the loss is counted and the exit status says so.

Against the Discord fake, with the bot's real delivery and a real redis-server: the channel's budget is
held in the store as a 429 from Discord would hold it for every process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest
from dckit import World, message_texts, running_bot

from adapters.discord.client import ThousandBot
from adapters.discord.handover import HANDOVER_PLATFORM, install, message_of, payload_of
from bot.model import Button, ChatRef, Group, Message
from bot.ops.shutdown import EXIT_OK, EXIT_UNDELIVERED, STOP_WITHIN
from bot.storage import HandedOver, KeyLayout, MemoryStore, RedisStore
from fakes.discord import FakeDiscord
from fakes.discord.models import FakeChannel

pytestmark = pytest.mark.timeout(90)


def _group(channel: FakeChannel, text: str, key: str, version: int, *, notify: bool, kind: str) -> Message:
    chat = ChatRef("dc", str(channel.id), "thousand")
    return Message(Group(chat), text, key, version=version, notify=notify, kind=kind)


def _shown(fake: FakeDiscord, channel: FakeChannel, text: str) -> list[int]:
    return [m.id for m in fake.messages(channel) if not m.deleted and text in message_texts(m)[0]]


async def _in_update(bot: ThousandBot, messages: list[Message]) -> None:
    """Deliver as an interaction's handling does: inside an update of the stop sequence."""
    async with bot.runtime.shutdown.update():
        await bot.outbox.deliver(messages)


async def _until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def _stop_with_a_full_channel(
    bot: ThousandBot, channel: FakeChannel, messages: list[Message], hold: Callable[[], Awaitable[None]]
) -> tuple[int, int, float]:
    """Hold the channel's budget, deliver `messages` in an update, SIGTERM: (exit status, lost, seconds)."""
    await hold()
    task = asyncio.create_task(_in_update(bot, messages))
    await asyncio.sleep(0.3)
    assert not task.done(), "the channel's budget did not hold the send"
    started = time.monotonic()
    report = await bot.runtime.stop("SIGTERM")
    took = time.monotonic() - started
    await asyncio.wait_for(task, 5)
    return report.exit_code, report.undelivered, took


async def test_a_result_waiting_for_the_channel_budget_is_handed_over_and_posted_once(
    fake: FakeDiscord, world: World, redis_url: str, redis_prefix: str
) -> None:
    channel = world.channel
    result = _group(channel, "Deal 1: result", "result:1:1", 9, notify=True, kind="result")
    table = _group(channel, "Deal 2 · bidding", "table:1", 9, notify=True, kind="table")
    bucket = f"discord:chan:{channel.id}"
    async with running_bot(fake, RedisStore.from_url(redis_url, prefix=redis_prefix)) as first:
        handover = install(first, deliver_for=0.5)
        handover.start()

        async def hold() -> None:
            await first.runtime.store.hold_sends(bucket, 120)

        code, lost, took = await _stop_with_a_full_channel(first, channel, [result, table], hold)
        assert (code, lost, handover.handed_over) == (EXIT_OK, 0, 2)
        assert took < STOP_WITHIN and took < 5, took
        assert _shown(fake, channel, "Deal 1: result") == []
    # The channel's budget is back when the next process starts.
    other = RedisStore.from_url(redis_url, prefix=redis_prefix)
    await other.call("DEL", KeyLayout(redis_prefix).send_hold(bucket))
    await other.close()
    async with running_bot(fake, RedisStore.from_url(redis_url, prefix=redis_prefix), sync=False) as second:
        taker = install(second, interval=0.2)
        taker.start()
        await _until(lambda: len(_shown(fake, channel, "Deal 2 · bidding")) == 1, 10, "the handed-over table")
        await asyncio.sleep(1.0)  # more looks: nothing twice
        assert len(_shown(fake, channel, "Deal 1: result")) == 1
        assert taker.taken == 2 and taker.dropped == 0
        # The same result handed over again (taken twice) and an older table: neither is posted.
        store = second.runtime.store
        older = _group(channel, "Deal 2 · older", "table:1", 8, notify=True, kind="table")
        await store.hand_over(
            [
                HandedOver(
                    HANDOVER_PLATFORM, f"dc:{channel.id}", str(channel.id), m.key, m.version, i, payload_of(m)
                )
                for i, m in enumerate((result, older))
            ]
        )
        await _until(lambda: taker.taken == 4, 5, "the second hand-over")
        await asyncio.sleep(1.0)
        assert taker.dropped == 2
        assert len(_shown(fake, channel, "Deal 1: result")) == 1
        assert _shown(fake, channel, "Deal 2 · older") == []
        assert len(_shown(fake, channel, "Deal 2 · bidding")) == 1
    assert fake.rate_limited_count == 0


async def test_with_the_memory_store_the_lost_channel_messages_are_counted_in_the_exit_status(
    fake: FakeDiscord, world: World
) -> None:
    channel = world.channel
    messages = [
        _group(channel, "Deal 1: result", "result:1:1", 9, notify=True, kind="result"),
        _group(channel, "Deal 2 · bidding", "table:1", 9, notify=True, kind="table"),
    ]
    async with running_bot(fake, MemoryStore()) as bot:
        handover = install(bot, deliver_for=0.5)
        handover.start()

        async def hold() -> None:
            await bot.runtime.store.hold_sends(f"discord:chan:{channel.id}", 120)

        code, lost, took = await _stop_with_a_full_channel(bot, channel, messages, hold)
    assert (code, lost, handover.lost, handover.handed_over) == (EXIT_UNDELIVERED, 2, 2, 0)
    assert took < 5, took
    assert _shown(fake, channel, "Deal 1: result") == []


def test_a_handed_over_channel_message_comes_back_as_it_was() -> None:
    chat = ChatRef("dc", "77", "thousand")
    buttons = ((Button("Join", "j|1|dc:77"), Button("Start", "s|1|dc:77")),)
    m = Message(
        Group(chat),
        "**Lobby**",
        "lobby:1",
        buttons,
        notify=True,
        language="pl",
        kind="lobby",
        heading="",
        version=3,
        series="s",
        optional=True,
    )
    handed = HandedOver(HANDOVER_PLATFORM, chat.key, chat.chat_id, m.key, m.version, 1, payload_of(m))
    assert message_of(handed) == m
    assert message_of(replace(handed, platform="tg")) is None
    assert message_of(replace(handed, payload="[]")) is None
