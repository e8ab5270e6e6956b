"""Interaction tokens expire (15 minutes on Discord; seconds here, the fake's shorter deadline): an open
hand is refreshed while its token lives, and after that the player is still pinged and gets a fresh hand
from My hand; a token Discord already refuses is forgotten without harm."""

from __future__ import annotations

import asyncio
import random

from dckit import E2E, Driver, World, running_bot, speed_up

from adapters.discord.client import BotConfig
from bot.storage import MemoryStore
from fakes.discord import FakeDiscord, FakeDiscordConfig

TTL = 2.0


async def test_expired_tokens_are_not_used() -> None:
    async with FakeDiscord(FakeDiscordConfig(token_ttl=TTL)) as fake:
        from dckit import make_world

        world: World = make_world(fake)
        speed_up(fake)
        alice, bob = world.users[:2]
        config = BotConfig(ack_after=E2E.ack_after, channel_window=E2E.channel_window, token_lifetime=TTL)
        async with running_bot(fake, MemoryStore(), config=config, seed=6) as bot:
            driver = Driver(fake, world.channel, [alice, bob], [bot], random.Random(6))
            await driver.open("polish", computers=1)
            version, doc, state = await driver.peek()
            assert doc is not None and state is not None and state.to_act is not None
            actor = driver.user(doc.seats[state.to_act].user or "")
            other = bob if actor is alice else alice
            # The other player opens their hand now; its token will have expired by their next turn.
            held = await driver.hand_for(other, version)
            edits = len(held.history)
            assert await bot.refs.hand(other.id, driver.channel.id) is not None
            await asyncio.sleep(TTL + 0.1)
            assert await bot.refs.hand(other.id, driver.channel.id) is None  # too old to be used
            while True:
                version, doc, state = await driver.peek()
                assert doc is not None and state is not None and doc.status == "game"
                if doc.seats[state.to_act or 0].user == f"dc:{other.id}":
                    break
                assert await driver.step()
            assert len(held.history) == edits  # not edited with a dead token
            assert driver.ping_for(other) is not None
            fresh = await driver.hand_for(other, version)
            assert fresh is not held
            # A token the store still trusts but Discord refuses (clocks disagree): tried, then forgotten.
            for _ in range(20):
                _, doc, state = await driver.peek()
                assert doc is not None and state is not None
                if doc.status != "game":
                    break
                if doc.seats[state.to_act or 0].user != f"dc:{other.id}":
                    await bot.refs.set_hand(other.id, driver.channel.id, "not-a-token", fresh.id, 10**12)
                assert await driver.step()
                if fake.responses(route="PATCH /webhooks/", status=404):
                    break
            assert fake.responses(route="PATCH /webhooks/", status=404)
            ref = await bot.refs.hand(other.id, driver.channel.id)
            assert ref is None or ref.token != "not-a-token"
