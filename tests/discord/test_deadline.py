"""Every interaction is answered within Discord's 3 seconds and nobody sees "This interaction failed":
a slow service call is deferred first (thinking for commands, a silent deferral for buttons) and then
followed up; an error inside still gets a short private answer; a stopping process says so."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from dckit import World, assert_interactions_answered, payload_of, running_bot

from adapters.discord.client import ThousandBot
from adapters.discord.i18n import FAILED, RESTARTING, labels
from bot.model import Command, Message
from bot.storage import MemoryStore
from fakes.discord import FakeDiscord


def slow_down(bot: ThousandBot, seconds: float, names: set[str]) -> None:
    """Make the service take `seconds` for the named commands (as computer players thinking would)."""
    service = bot.runtime.service
    handle: Callable[[Command], Awaitable[list[Message]]] = service.handle

    async def slow(command: Command) -> list[Message]:
        if command.name in names:
            await asyncio.sleep(seconds)
        return await handle(command)

    service.handle = slow  # type: ignore[method-assign]


async def test_slow_commands_are_deferred_then_answered(fake: FakeDiscord, world: World) -> None:
    alice, bob = world.users[:2]
    async with running_bot(fake, MemoryStore()) as bot:  # defers after 1 s
        slow_down(bot, 3.5, {"new"})  # longer than Discord's deadline
        slow_down(bot, 1.5, {"join", "help"})
        opened = await fake.slash(alice, world.channel, "thousand", "new")
        first = await opened.response()
        assert first.type == 5 and first.ephemeral  # "thinking", in time
        await fake.wait_until(lambda: bot.idle, timeout=10)
        original = await opened.original_message()
        assert original.ephemeral and not original.loading  # the thinking message was replaced
        lobby = next(m for m in fake.messages(world.channel) if m.embeds)
        assert "A table of 1000" in lobby.embeds[0]["description"]

        join = next(c for c in lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == "join")
        pressed = await fake.press(bob, lobby, join)
        assert (await pressed.response()).type == 6  # a silent deferral...
        await fake.wait_until(lambda: bot.idle, timeout=10)
        assert "Bob" in lobby.embeds[0]["description"]  # ...then the lobby edited

        helped = await fake.slash(bob, world.channel, "thousand", "help")
        await fake.wait_until(lambda: bot.idle, timeout=10)
        assert "/thousand new" in (await helped.original_message()).embeds[0]["description"]
    assert assert_interactions_answered(fake) == 3


async def test_errors_and_stopping_still_answer(fake: FakeDiscord, world: World) -> None:
    alice = world.users[0]
    async with running_bot(fake, MemoryStore()) as bot:
        service = bot.runtime.service

        async def broken(command: Command) -> list[Message]:
            raise RuntimeError("boom")

        service.handle = broken  # type: ignore[method-assign]
        failed = await fake.slash(alice, world.channel, "thousand", "score")
        answer = await failed.original_message()
        assert answer.ephemeral and answer.content == labels("en")._(FAILED)

        bot.runtime.shutdown.request_stop("test")
        refused = await fake.slash(alice, world.channel, "thousand", "help")
        answer = await refused.original_message()
        assert answer.ephemeral and answer.content == labels("en")._(RESTARTING)
    assert assert_interactions_answered(fake) == 2


async def test_a_slow_store_after_the_service_call_is_deferred_too(fake: FakeDiscord, world: World) -> None:
    """The service answered fast, but the lookup of the pressed message's reference hangs past Discord's
    3 s (until the test has seen the answer): only the watchdog's deferral can answer in time, and the
    lobby is still updated once the lookup returns."""
    alice, bob = world.users[:2]
    async with running_bot(fake, MemoryStore()) as bot:
        opened = await fake.slash(alice, world.channel, "thousand", "new")
        lobby = await opened.original_message()
        await fake.wait_until(lambda: bot.idle)
        channel_refs = bot.refs.channel

        released = asyncio.Event()

        async def slow_refs(channel_id: int) -> dict[str, str]:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(released.wait(), timeout=30)
            return await channel_refs(channel_id)

        bot.refs.channel = slow_refs  # type: ignore[method-assign]
        join = next(c for c in lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == "join")
        pressed = await fake.press(bob, lobby, join)
        try:
            assert (await pressed.response(timeout=4)).type == 6
        finally:
            released.set()
        await fake.wait_until(lambda: bot.idle, timeout=10)
        assert "Bob" in lobby.embeds[0]["description"]
    assert assert_interactions_answered(fake) == 2


async def test_a_command_the_bot_no_longer_has_is_still_answered(fake: FakeDiscord, world: World) -> None:
    """Discord may still offer a command an older version registered: the tree fails, the user is answered."""
    alice = world.users[0]
    async with running_bot(fake, MemoryStore()):
        fake.commands.upsert(None, {"name": "legacy", "description": "An old command", "type": 1})
        it = await fake.slash(alice, world.channel, "legacy")
        answer = await it.original_message()
        assert answer.ephemeral and answer.content == labels("en")._(FAILED)
    assert assert_interactions_answered(fake) == 1
