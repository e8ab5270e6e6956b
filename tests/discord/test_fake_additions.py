"""What the fake gained for the adapter's tests, proven with discord.py: `allowed_mentions` decides who is
notified (and what `mentions` holds), edits never notify, and requests record their major parameter."""

from __future__ import annotations

import discord
from dckit import World

from fakes.discord import FakeDiscord, connect_client


async def test_allowed_mentions_decide_who_is_notified(fake: FakeDiscord, world: World) -> None:
    alice, bob = world.users[:2]
    client = discord.Client(intents=discord.Intents(guilds=True), guild_ready_timeout=0.05)
    async with connect_client(client, fake):
        channel = client.get_partial_messageable(world.channel.id)
        text = f"<@{alice.id}> <@{bob.id}> look"
        default = await channel.send(text)
        none = await channel.send(text, allowed_mentions=discord.AllowedMentions.none())
        only_bob = await channel.send(
            text, allowed_mentions=discord.AllowedMentions(users=[discord.Object(bob.id)])
        )
        assert [u.id for u in default.mentions] == [alice.id, bob.id]
        assert none.mentions == [] and [u.id for u in only_bob.mentions] == [bob.id]
        edited = await none.edit(content=f"<@{alice.id}> now", allowed_mentions=discord.AllowedMentions.all())
        assert [u.id for u in edited.mentions] == [alice.id]
    sent = {m.id: m for m in fake.messages(world.channel)}
    assert sent[default.id].notified == [alice, bob]
    assert sent[none.id].notified == []  # the edit that allowed the mention did not notify anyone
    assert sent[only_bob.id].notified == [bob]


async def test_requests_record_their_major_parameter(fake: FakeDiscord, world: World) -> None:
    other = fake.add_text_channel(world.guild, "other")
    client = discord.Client(intents=discord.Intents(guilds=True), guild_ready_timeout=0.05)
    async with connect_client(client, fake):
        await client.get_partial_messageable(world.channel.id).send("one")
        await client.get_partial_messageable(other.id).send("two")
        await client.get_partial_messageable(other.id).send("three")
    route = "POST /channels/{channel_id}/messages"
    assert len(fake.responses(route=route, major=str(world.channel.id))) == 1
    assert len(fake.responses(route=route, major=str(other.id))) == 2


async def test_member_removal_and_renames_reach_the_client(fake: FakeDiscord, world: World) -> None:
    alice = world.users[0]
    removed: list[int] = []
    intents = discord.Intents(guilds=True, members=True)
    client = discord.Client(intents=intents, guild_ready_timeout=0.05)

    async def on_raw_member_remove(payload: discord.RawMemberRemoveEvent) -> None:
        removed.append(payload.user.id)

    client.on_raw_member_remove = on_raw_member_remove  # type: ignore[attr-defined]
    async with connect_client(client, fake):
        fake.rename_channel(world.channel, "cards")
        fake.rename_guild(world.guild, "Card club")
        fake.remove_member(world.guild, alice)
        await fake.wait_until(lambda: bool(removed))
        channel = client.get_channel(world.channel.id)
        await fake.wait_until(lambda: getattr(client.get_channel(world.channel.id), "name", "") == "cards")
        guild = client.get_guild(world.guild.id)
        await fake.wait_until(lambda: guild is not None and guild.name == "Card club")
        assert channel is not None
    assert removed == [alice.id] and alice.id not in world.guild.members
