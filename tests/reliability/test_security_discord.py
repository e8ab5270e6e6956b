"""The outsider's attack on Discord: Mallory is in another guild only, and acts on the table of a channel of
«Card room» from the DM with the bot and from her own guild, with slash commands and with the lobby's own
button ids pressed elsewhere (a modified client). The real discord.py bot runs against the fake Discord.

Every attempt is answered (never "This interaction failed"), refused, names nothing of «Card room», and
leaves the table and the channel as they were.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from dcfuzz import forge_press, payload_of
from dckit import FAST, World, make_world, running_bot

from bot.storage import MemoryStore, Store
from fakes.discord import FakeDiscord, FakeDiscordConfig, FakeInteraction, FakeMessage, FakeUser


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(FakeDiscordConfig()) as server:
        yield server


def _seen_by(fake: FakeDiscord, user: FakeUser) -> list[str]:
    """Everything only `user` sees: their ephemerals and their DMs (content and embeds)."""
    out = []
    for m in [*fake.ephemerals(user), *fake.dms(user)]:
        out.append(m.content or "")
        for embed in m.embeds:
            out.append(str(embed))
    return out


async def _answered(it: FakeInteraction, world: World) -> None:
    await it.response(timeout=6)
    await world.fake.settle()


async def _stored(store: Store, table_id: str) -> tuple[int, str] | None:
    stored = await store.load(table_id)
    return None if stored is None else (stored.version, stored.document)


async def test_an_outsider_cannot_touch_a_guild_table_from_a_dm_or_another_guild(fake: FakeDiscord) -> None:
    world = make_world(fake, players=2)
    alice, bob = world.users
    elsewhere = fake.add_guild("Elsewhere")
    mallory = fake.add_user("mallory", global_name="Mallory")
    fake.add_member(elsewhere, mallory)
    hers = fake.add_text_channel(elsewhere, "games")
    store = MemoryStore()
    table_id = f"dc:{world.channel.id}"
    async with running_bot(fake, store, config=FAST):
        it = await fake.slash(alice, world.channel, "thousand", "new")
        lobby = await it.original_message()
        await _answered(it, world)
        join = next(c for c in lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == "join")
        await _answered(await fake.press(bob, lobby, join), world)
        lobby = next(m for m in reversed(fake.messages(world.channel)) if m.id == lobby.id)
        ids = [c for c in lobby.custom_ids() if payload_of(c) is not None]
        assert {payload_of(c)[0] for c in ids} >= {"join", "leave", "add_ai", "start"}  # type: ignore[index]

        # Mallory's own places: the DM with the bot and her guild's channel, each with a bot message
        # to press forged buttons on.
        dm = fake.dm_channel(mallory)
        pressable: list[FakeMessage] = []
        for where in (dm, hers):
            it = await fake.slash(mallory, where, "thousand", "new")
            pressable.append(await it.original_message())
            await _answered(it, world)

        before = await _stored(store, table_id)
        in_channel = [(m.id, m.content, len(m.history)) for m in fake.messages(world.channel)]
        answers = 0
        for where in (dm, hers):
            for sub, options in (
                ("join", {}),
                ("start", {}),
                ("end", {}),
                ("leave", {}),
                ("kick", {"player": alice}),
                ("settings", {"option": "target", "value": "300"}),
            ):
                it = await fake.slash(mallory, where, "thousand", sub, **options)
                await _answered(it, world)
                answers += 1
        for message in pressable:
            for custom_id in ids:
                it = await forge_press(fake, mallory, message, custom_id)
                await _answered(it, world)
                answers += 1
        assert answers == 12 + 2 * len(ids)

        assert await _stored(store, table_id) == before
        assert [(m.id, m.content, len(m.history)) for m in fake.messages(world.channel)] == in_channel
        seen = _seen_by(fake, mallory)
        assert seen, "Mallory was answered"
        leaks = [s for s in seen if "Card room" in s or "Alice" in s or "Bob" in s]
        assert leaks == []
