"""The Discord fake, proven with the real discord.py client (slash commands, autocomplete, dynamic buttons,
ephemeral replies, deferrals, deadlines, DMs, rate limits, validation, resume, sharding)."""

from __future__ import annotations

import asyncio
import io
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest
from discord import app_commands

from fakes.discord import (
    FakeChannel,
    FakeDiscord,
    FakeDiscordConfig,
    FakeGuild,
    FakeUsageError,
    FakeUser,
    Overwrite,
    connect_client,
)
from fakes.discord import permissions as perms
from fakes.discord.snowflake import shard_for_guild

API = "https://discord.com/api/v10"


class SeatButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"t:(?P<table>\d+):v(?P<version>\d+):seat"
):
    """A button whose custom_id carries a table id and version, like the adapter's."""

    def __init__(self, table: int, version: int) -> None:
        super().__init__(discord.ui.Button(label="Take seat", custom_id=f"t:{table}:v{version}:seat"))
        self.table = table
        self.version = version

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> SeatButton:
        return cls(int(match["table"]), int(match["version"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        bot = interaction.client
        assert isinstance(bot, ThousandBot)
        bot.seen.append(("seat", interaction.user.id, self.table, self.version))
        await interaction.response.send_message(f"seated at {self.table} (v{self.version})", ephemeral=True)


class TableView(discord.ui.View):
    """A persistent view (timeout=None, fixed custom_id) that edits its own message."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Refresh", custom_id="table:refresh")
    async def refresh(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        bot = interaction.client
        assert isinstance(bot, ThousandBot)
        bot.seen.append(("refresh", interaction.user.id))
        await interaction.response.edit_message(content="table refreshed", view=self)

    @discord.ui.button(label="Deal", custom_id="table:deal")
    async def deal(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await interaction.response.defer()  # DEFERRED_UPDATE_MESSAGE: @original is the table message.
        await interaction.edit_original_response(content="cards dealt")


class NameModal(discord.ui.Modal, title="Your name at the table"):
    name: discord.ui.TextInput[NameModal] = discord.ui.TextInput(
        label="Name", custom_id="name", max_length=20
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"Hello {self.name.value}", ephemeral=True)


CARDS = ["QS", "QH", "KS", "AS", "TS", "9S"]


class ThousandBot(discord.Client):
    """A small bot shaped like ours: a ``/thousand`` group, dynamic buttons, a persistent view."""

    def __init__(self, *, shard: bool = False, callback_delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(intents=discord.Intents.default(), guild_ready_timeout=0.05, **kwargs)
        self.tree = app_commands.CommandTree(self)
        self.seen: list[tuple[Any, ...]] = []
        self.errors: list[tuple[str, int, int]] = []
        self.available: list[int] = []
        self.callback_delay = callback_delay
        self.tree.add_command(self._thousand())

    async def setup_hook(self) -> None:
        self.add_dynamic_items(SeatButton)
        self.add_view(TableView())

    async def on_guild_available(self, guild: discord.Guild) -> None:
        self.available.append(guild.id)

    def _thousand(self) -> app_commands.Group:
        group = app_commands.Group(name="thousand", description="Play 1000")
        # Discord only honours default_member_permissions on top-level commands, so admin is its own group.
        admin = app_commands.Group(
            name="thousand-admin",
            description="Table admin",
            default_permissions=discord.Permissions(manage_guild=True),
        )
        self.tree.add_command(admin)

        @group.command(name="play", description="Play a card")
        @app_commands.describe(card="The card to play")
        async def play(interaction: discord.Interaction, card: str) -> None:
            self.seen.append(("play", interaction.user.id, card, interaction.guild_id))
            await interaction.response.send_message(f"{interaction.user.name} played {card}")

        @play.autocomplete("card")
        async def play_card(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
            return [app_commands.Choice(name=c, value=c) for c in CARDS if c.startswith(current.upper())]

        @group.command(name="bid", description="Bid")
        async def bid(interaction: discord.Interaction, amount: app_commands.Range[int, 100, 400]) -> None:
            self.seen.append(("bid", amount))
            await interaction.response.send_message(f"bid {amount}")

        @group.command(name="hand", description="Show my hand")
        async def hand(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("Your hand: QS KS", ephemeral=True)

        @group.command(name="think", description="Deferred answer")
        async def think(interaction: discord.Interaction) -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            await asyncio.sleep(0.05)
            await interaction.followup.send("thought about it")
            extra = await interaction.followup.send("and one more thing", wait=True)
            await extra.edit(content="and one more thing (edited)")

        @group.command(name="name", description="Set a display name")
        async def name(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(NameModal())

        @group.command(name="score", description="Score sheet")
        async def score(interaction: discord.Interaction) -> None:
            sheet = discord.File(io.BytesIO(b"alice 120\nbob 80\n"), filename="score.txt")
            await interaction.response.send_message("Scores", file=sheet)

        @group.command(name="undo", description="Say and unsay")
        async def undo(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("oops")
            await interaction.delete_original_response()

        @group.command(name="slow", description="Answers late")
        async def slow(interaction: discord.Interaction) -> None:
            await asyncio.sleep(self.callback_delay)
            try:
                await interaction.response.send_message("too late?")
            except discord.HTTPException as exc:
                self.errors.append(("slow", exc.status, exc.code))

        @group.command(name="ack", description="Acknowledge")
        async def ack(interaction: discord.Interaction) -> None:
            await asyncio.sleep(self.callback_delay)
            try:
                await interaction.response.send_message("acknowledged")
            except discord.HTTPException as exc:
                self.errors.append(("ack", exc.status, exc.code))

        @group.command(name="dm", description="DM my hand")
        async def dm(interaction: discord.Interaction) -> None:
            try:
                await interaction.user.send("Your hand: AS TS")
            except discord.Forbidden as exc:
                self.errors.append(("dm", exc.status, exc.code))
                await interaction.response.send_message("Open your DMs", ephemeral=True)
            else:
                await interaction.response.send_message("Sent!", ephemeral=True)

        @group.command(name="table", description="Open a table")
        async def table(interaction: discord.Interaction, table_id: int) -> None:
            view = TableView()
            view.add_item(SeatButton(table_id, 1))
            await interaction.response.send_message(f"Table {table_id}", view=view)

        @admin.command(name="reset", description="Reset the table")
        async def reset(interaction: discord.Interaction) -> None:
            self.seen.append(("reset", interaction.permissions.manage_guild))
            await interaction.response.send_message("reset", ephemeral=True)

        return group


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield server


def world(fake: FakeDiscord) -> tuple[FakeGuild, FakeUser, FakeUser, FakeChannel]:
    alice = fake.add_user("alice")
    bob = fake.add_user("bob")
    guild = fake.add_guild("Card room")
    guild.add_member(alice)
    guild.add_member(bob)
    channel = guild.add_text_channel("table-1")
    return guild, alice, bob, channel


async def test_ready_guild_available_and_commands_synced(fake: FakeDiscord) -> None:
    guild, _alice, _bob, _channel = world(fake)
    bot = ThousandBot()
    async with connect_client(bot, fake):
        assert bot.user is not None and bot.user.id == fake.bot_user.id
        assert bot.application_id == fake.application_id
        await fake.wait_until(lambda: guild.id in bot.available)
        assert bot.get_guild(guild.id) is not None
        synced = await bot.tree.sync()
        assert sorted(c.name for c in synced) == ["thousand", "thousand-admin"]
        fetched = await bot.tree.fetch_commands()
        assert {c.id for c in fetched} == {c.id for c in synced}
        # World changes while connected arrive as gateway events.
        late = fake.add_guild("Late room")
        await fake.wait_until(lambda: bot.get_guild(late.id) is not None)
        extra = guild.add_text_channel("table-2")
        await fake.wait_until(lambda: bot.get_channel(extra.id) is not None)
    stats = fake.gateway.stats
    assert stats.identifies == 1 and stats.hosts == ["gateway.discord.gg"]
    assert stats.heartbeats >= 1
    registered = fake.commands.find(None, "thousand")
    assert registered is not None
    subs = {o["name"] for o in registered["options"]}
    assert subs == {"play", "bid", "hand", "think", "name", "score", "undo", "slow", "ack", "dm", "table"}
    assert stats.compressions == ["zlib-stream"]
    admin = fake.commands.find(None, "thousand-admin")
    assert admin is not None and admin["default_member_permissions"] == str(perms.MANAGE_GUILD)


async def test_slash_options_and_autocomplete_reach_handlers(fake: FakeDiscord) -> None:
    guild, alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        played = await fake.slash(alice, channel, "thousand", "play", card="QS")
        cb = await played.response()
        assert cb.type == 4 and not cb.ephemeral
        assert ("play", alice.id, "QS", guild.id) in bot.seen
        [msg] = fake.messages(channel)
        assert msg.content == "alice played QS"
        assert msg.interaction_metadata is not None and msg.interaction_metadata["name"] == "thousand play"

        typed = await fake.autocomplete(alice, channel, "thousand", "play", focused="card", card="q")
        await typed.response()
        assert [c["value"] for c in typed.choices] == ["QS", "QH"]

        bid = await fake.slash(alice, channel, "thousand", "bid", amount=120)
        await bid.response()
        assert ("bid", 120) in bot.seen
        with pytest.raises(FakeUsageError):  # The Discord client enforces min/max itself.
            await fake.slash(alice, channel, "thousand", "bid", amount=50)
        with pytest.raises(FakeUsageError):
            await fake.slash(alice, channel, "thousand", "nonexistent")


async def test_ephemeral_reply_visible_only_to_invoker(fake: FakeDiscord) -> None:
    _guild, alice, bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        it = await fake.slash(alice, channel, "thousand", "hand")
        assert (await it.response()).ephemeral
        original = await it.original_message()
        assert original.content == "Your hand: QS KS" and original.ephemeral
        assert fake.ephemerals(alice) == [original]
        assert fake.ephemerals(bob) == []
        assert fake.messages(channel) == []
        assert original not in fake.visible_to(bob, channel)
        assert original in fake.visible_to(alice, channel)
        text_channel = bot.get_channel(channel.id)
        assert isinstance(text_channel, discord.TextChannel)
        with pytest.raises(discord.NotFound) as info:  # Ephemeral messages are not channel messages.
            await text_channel.fetch_message(original.id)
        assert info.value.code == 10008


async def test_deferred_response_then_followups(fake: FakeDiscord) -> None:
    _guild, alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        it = await fake.slash(alice, channel, "thousand", "think")
        cb = await it.response()
        assert cb.type == 5 and cb.ephemeral
        original = await it.original_message()  # The first followup replaces the "thinking" message.
        assert original.content == "thought about it" and original.ephemeral and not original.loading
        [extra] = await it.wait_followups(1)
        # Later followups are independent messages: this one did not ask to be ephemeral.
        await fake.wait_until(lambda: bool(extra.history))
        assert extra.content == "and one more thing (edited)" and not extra.ephemeral
        assert [v.content for v in extra.history] == ["and one more thing"]
        assert fake.ephemerals(alice) == [original]
        assert fake.messages(channel) == [extra]
        assert it.errors == []


async def test_callback_after_three_seconds_is_unknown_interaction(fake: FakeDiscord) -> None:
    assert fake.config.interaction_deadline == 3.0  # Discord's default, exercised for real here.
    _guild, alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(callback_delay=3.2), fake) as bot:
        await bot.tree.sync()
        it = await fake.slash(alice, channel, "thousand", "slow")
        err = await it.wait_error(timeout=6)
        assert (err.status, err.code, err.message) == (404, 10062, "Unknown interaction")
        await fake.wait_until(lambda: bool(bot.errors))
        assert bot.errors == [("slow", 404, 10062)]  # discord.py raised NotFound.
        assert not it.acknowledged and fake.messages(channel) == []


async def test_second_acknowledgement_is_rejected(fake: FakeDiscord) -> None:
    _guild, alice, _bob, channel = world(fake)
    # Two instances of the bot on the same token both receive the interaction; only one may answer.
    first, second = ThousandBot(), ThousandBot(callback_delay=0.2)
    async with connect_client(first, fake), connect_client(second, fake):
        await first.tree.sync()
        it = await fake.slash(alice, channel, "thousand", "ack")
        await it.response()
        await fake.wait_until(lambda: bool(first.errors or second.errors))
        assert first.errors + second.errors == [("ack", 400, 40060)]
        assert [e.code for e in it.errors] == [40060]
        assert [m.content for m in fake.messages(channel)] == ["acknowledged"]


async def test_dm_to_user_with_closed_dms_is_forbidden(fake: FakeDiscord) -> None:
    _guild, alice, bob, channel = world(fake)
    fake.close_dms(bob)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        it = await fake.slash(bob, channel, "thousand", "dm")
        assert (await it.original_message()).content == "Open your DMs"
        assert bot.errors == [("dm", 403, 50007)]
        assert fake.dms(bob) == []

        it = await fake.slash(alice, channel, "thousand", "dm")
        assert (await it.original_message()).content == "Sent!"
        assert [m.content for m in fake.dms(alice)] == ["Your hand: AS TS"]


async def test_button_press_reaches_dynamic_item_after_restart(fake: FakeDiscord) -> None:
    _guild, alice, bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        opened = await fake.slash(alice, channel, "thousand", "table", table_id=42)
        table_msg = await opened.original_message()
    assert table_msg.custom_ids() == ["table:refresh", "table:deal", "t:42:v1:seat"]

    async with connect_client(ThousandBot(), fake) as restarted:  # New process, same Discord.
        press = await fake.press(bob, table_msg, "t:42:v1:seat")
        reply = await press.original_message()
        assert reply.content == "seated at 42 (v1)" and reply.visible_to is bob
        assert reply.interaction_metadata is not None
        assert reply.interaction_metadata["interacted_message_id"] == str(table_msg.id)
        assert ("seat", bob.id, 42, 1) in restarted.seen

        refresh = await fake.press(alice, table_msg, "table:refresh")
        assert (await refresh.response()).type == 7
        assert table_msg.content == "table refreshed"
        assert [v.content for v in table_msg.history] == ["Table 42"]
        assert table_msg.edited_timestamp is not None
    assert fake.gateway.stats.identifies == 2


async def test_over_limit_channel_sends_are_delayed_not_lost(fake: FakeDiscord) -> None:
    _guild, _alice, _bob, channel = world(fake)
    fake.ratelimits.set_route_limit("POST /channels/{channel_id}/messages", 4, 0.5)
    async with connect_client(ThousandBot(), fake) as bot:
        target = bot.get_channel(channel.id)
        assert isinstance(target, discord.TextChannel)
        started = time.monotonic()
        await asyncio.gather(*(target.send(f"line {i}") for i in range(12)))
        elapsed = time.monotonic() - started
    assert sorted(m.content for m in fake.messages(channel)) == sorted(f"line {i}" for i in range(12))
    assert elapsed >= 1.0  # Three windows of 4 messages: discord.py waited for the bucket to reset.
    assert fake.rate_limited_count <= 2
    ok = fake.responses(status=200, route="POST /channels/{channel_id}/messages")
    assert len(ok) == 12


async def test_429_body_and_headers_match_discord(fake: FakeDiscord) -> None:
    _guild, _alice, _bob, channel = world(fake)
    fake.ratelimits.set_route_limit("POST /channels/{channel_id}/messages", 1, 30.0)
    url = f"{API}/channels/{channel.id}/messages"
    async with fake.session() as http:
        async with http.post(url, json={"content": "one"}, headers=fake.auth_header) as resp:
            assert resp.status == 200
            assert resp.headers["X-RateLimit-Limit"] == "1" and resp.headers["X-RateLimit-Remaining"] == "0"
            assert float(resp.headers["X-RateLimit-Reset-After"]) > 29
            assert resp.headers["X-RateLimit-Bucket"]
        async with http.post(url, json={"content": "two"}, headers=fake.auth_header) as resp:
            assert resp.status == 429
            body = await resp.json()
            assert body["global"] is False and 29 < body["retry_after"] <= 30
            assert resp.headers["Via"] and resp.headers["X-RateLimit-Scope"] == "user"
        async with http.get(f"{API}/users/@me") as resp:
            assert resp.status == 401 and (await resp.json())["message"] == "401: Unauthorized"
        async with http.get(f"{API}/gateway/bot") as resp:
            assert resp.status == 401
        async with http.get(f"{API}/gateway") as resp:
            assert (await resp.json()) == {"url": "wss://gateway.discord.gg"}
    assert fake.rate_limited_count == 1


async def test_component_and_content_validation_gives_50035(fake: FakeDiscord) -> None:
    _guild, _alice, _bob, channel = world(fake)
    # Rejected requests count against the bucket too; give this test room for its six.
    fake.ratelimits.set_route_limit("POST /channels/{channel_id}/messages", 20, 5.0)
    async with connect_client(ThousandBot(), fake) as bot:
        target = bot.get_channel(channel.id)
        assert isinstance(target, discord.TextChannel)
        view = discord.ui.View()
        view.add_item(discord.ui.Button(label="ok", custom_id="x" * 101))
        with pytest.raises(discord.HTTPException) as info:
            await target.send("too long id", view=view)
        assert info.value.status == 400 and info.value.code == 50035
        assert "components.0.components.0.custom_id" in info.value.text
        with pytest.raises(discord.HTTPException) as info:
            await target.send("x" * 2001)
        assert info.value.code == 50035 and "content" in info.value.text
        with pytest.raises(discord.HTTPException) as info:
            await target.send(
                embed=discord.Embed(description="d" * 4000, title="t" * 250)
                .add_field(name="n", value="v" * 1024)
                .add_field(name="m", value="w" * 1000)
            )
        assert info.value.code == 50035 and "6000" in info.value.text
    assert fake.messages(channel) == []

    rows = [
        {"type": 1, "components": [{"type": 2, "style": 1, "label": str(i), "custom_id": f"b{i}"}]}
        for i in range(6)
    ]
    six_buttons = [{"type": 2, "style": 2, "label": "b", "custom_id": f"c{i}"} for i in range(6)]
    async with fake.session() as http:
        url = f"{API}/channels/{channel.id}/messages"
        async with http.post(url, json={"components": rows}, headers=fake.auth_header) as resp:
            body = await resp.json()
            assert resp.status == 400 and body["code"] == 50035 and body["message"] == "Invalid Form Body"
            assert body["errors"]["components"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"
        payload = {"content": "x", "components": [{"type": 1, "components": six_buttons}]}
        async with http.post(url, json=payload, headers=fake.auth_header) as resp:
            body = await resp.json()
            assert (
                body["errors"]["components"]["0"]["components"]["_errors"][0]["code"]
                == "BASE_TYPE_MAX_LENGTH"
            )
        async with http.post(url, json={"content": ""}, headers=fake.auth_header) as resp:
            assert (await resp.json())["code"] == 50006


async def test_attachments_edits_and_deletes_through_the_client(fake: FakeDiscord) -> None:
    _guild, _alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        target = bot.get_channel(channel.id)
        assert isinstance(target, discord.TextChannel)
        sent = await target.send("score", file=discord.File(io.BytesIO(b"PNGDATA"), filename="score.png"))
        assert sent.attachments[0].filename == "score.png"
        assert await sent.attachments[0].read() == b"PNGDATA"  # Downloaded from the fake CDN.
        await sent.edit(content="score (final)")
        gone = await target.send("temporary")
        await gone.delete()
        [msg] = fake.messages(channel)
        assert msg.content == "score (final)" and [v.content for v in msg.history] == ["score"]
        assert msg.attachments[0].data == b"PNGDATA"
        history = [m.content async for m in target.history(limit=10)]
        assert history == ["score (final)"]


async def test_interaction_token_expires_for_followups() -> None:
    async with FakeDiscord(FakeDiscordConfig(token_ttl=0.3)) as fake:
        _guild, alice, _bob, channel = world(fake)
        async with connect_client(ThousandBot(), fake) as bot:
            await bot.tree.sync()
            it = await fake.slash(alice, channel, "thousand", "hand")
            await it.response()
            await asyncio.sleep(0.4)
            async with fake.session() as http:
                url = f"{API}/webhooks/{fake.application_id}/{it.token}"
                async with http.post(url, json={"content": "late"}) as resp:
                    assert resp.status == 401 and (await resp.json())["code"] == 50027


async def test_default_member_permissions_gate_admin_commands(fake: FakeDiscord) -> None:
    guild, alice, bob, channel = world(fake)
    managers = guild.add_role("Managers", perms.MANAGE_GUILD)
    carol = fake.add_user("carol")
    guild.add_member(carol, roles=[managers])
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        with pytest.raises(FakeUsageError):
            await fake.slash(bob, channel, "thousand-admin", "reset")
        it = await fake.slash(carol, channel, "thousand-admin", "reset")
        await it.response()
        assert ("reset", True) in bot.seen
        assert alice.id not in {s[1] for s in bot.seen if s[0] == "reset"}


async def test_gateway_drop_resumes_on_resume_url(fake: FakeDiscord) -> None:
    _guild, alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        resumed = asyncio.ensure_future(bot.wait_for("resumed", timeout=10))
        await fake.gateway.disconnect_all()
        await resumed
        it = await fake.slash(alice, channel, "thousand", "play", card="KS")
        await it.response()
        resumed = asyncio.ensure_future(bot.wait_for("resumed", timeout=10))
        await fake.gateway.request_reconnect()  # Opcode 7.
        await resumed
        it = await fake.slash(alice, channel, "thousand", "play", card="AS")
        await it.response()
    stats = fake.gateway.stats
    assert stats.resumes == 2 and stats.identifies == 1
    assert stats.hosts == ["gateway.discord.gg", *["gateway-us-east1-b.discord.gg"] * 2]


async def test_gateway_rejects_bad_token_with_4004_and_login_fails(fake: FakeDiscord) -> None:
    gateway = "wss://gateway.discord.gg/?v=10&encoding=json"
    async with fake.session() as http, http.ws_connect(gateway) as ws:
        hello = await ws.receive_json()
        assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] == 41_250
        await ws.send_json({"op": 1, "d": None})
        assert (await ws.receive_json())["op"] == 11
        await ws.send_json({"op": 2, "d": {"token": "nope", "intents": 513, "properties": {}}})
        msg = await ws.receive()
        assert msg.type == aiohttp.WSMsgType.CLOSE and msg.data == 4004
    with pytest.raises(discord.LoginFailure):
        async with connect_client(ThousandBot(), fake, token="wrong"):
            pass


async def test_shards_receive_their_own_guilds() -> None:
    async with FakeDiscord(FakeDiscordConfig(recommended_shards=2)) as fake:
        alice = fake.add_user("alice")
        guilds = {}
        for shard in (0, 1):
            gid = next(g for g in range(1 << 22, 50 << 22, 1 << 22) if shard_for_guild(g, 2) == shard) + shard
            g = fake.add_guild(f"shard {shard}", guild_id=gid)
            g.add_member(alice)
            guilds[shard] = (g, g.add_text_channel("t"))

        class ShardedBot(discord.AutoShardedClient):
            def __init__(self) -> None:
                super().__init__(intents=discord.Intents.default(), guild_ready_timeout=0.05)
                self.tree = app_commands.CommandTree(self)
                self.shards_seen: list[int | None] = []

                @self.tree.command(name="ping", description="Ping")
                async def ping(interaction: discord.Interaction) -> None:
                    self.shards_seen.append(interaction.guild.shard_id if interaction.guild else None)
                    await interaction.response.send_message("pong")

            async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
                return None  # Skip the 5 s spacing between IDENTIFYs.

        async with connect_client(ShardedBot(), fake) as bot:
            assert bot.shard_count == 2
            await bot.tree.sync()
            for shard in (0, 1):
                guild, channel = guilds[shard]
                assert bot.get_guild(guild.id) is not None
                it = await fake.slash(alice, channel, "ping")
                await it.response()
            assert bot.shards_seen == [0, 1]
            shard_ids = sorted((s.shard_id, s.shard_count) for s in fake.live_sessions())
            assert shard_ids == [(0, 2), (1, 2)]


async def test_injected_server_error_is_retried_by_discord_py(fake: FakeDiscord) -> None:
    _guild, _alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        target = bot.get_channel(channel.id)
        assert isinstance(target, discord.TextChannel)
        fake.faults.fail(500, times=1, route="POST /channels/{channel_id}/messages")
        await target.send("after a hiccup")
    assert [r.status for r in fake.responses(route="POST /channels")] == [500, 200]
    assert [m.content for m in fake.messages(channel)] == ["after a hiccup"]


async def test_modal_opened_and_submitted(fake: FakeDiscord) -> None:
    _guild, alice, bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        opened = await fake.slash(alice, channel, "thousand", "name")
        cb = await opened.response()
        assert cb.type == 9 and cb.data["title"] == "Your name at the table"
        with pytest.raises(FakeUsageError):  # max_length is enforced by the client.
            await fake.submit_modal(alice, opened, {"name": "x" * 21})
        with pytest.raises(FakeUsageError):
            await fake.submit_modal(bob, opened, {"name": "Bob"})
        submitted = await fake.submit_modal(alice, opened, {"name": "Ann"})
        reply = await submitted.original_message()
        assert reply.content == "Hello Ann" and reply.visible_to is alice


async def test_deferred_update_edits_the_component_message(fake: FakeDiscord) -> None:
    _guild, alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        opened = await fake.slash(alice, channel, "thousand", "table", table_id=7)
        table_msg = await opened.original_message()
        press = await fake.press(alice, table_msg, "table:deal")
        assert (await press.response()).type == 6
        await fake.wait_until(lambda: table_msg.content == "cards dealt")
        assert [v.content for v in table_msg.history] == ["Table 7"]
        assert fake.messages(channel) == [table_msg]


async def test_deleting_a_deleted_message_is_unknown_message(fake: FakeDiscord) -> None:
    """Discord answers a DELETE of a message that is gone with 404 and JSON code 10008 "Unknown Message";
    discord.py raises NotFound with that code. The fake records the code and the message's path, and its
    watchers see the deletion once."""
    _guild, _alice, _bob, channel = world(fake)
    seen: list[tuple[str, int]] = []
    fake.watchers.append(lambda change, msg: seen.append((change, msg.id)))
    async with connect_client(ThousandBot(), fake) as bot:
        target = bot.get_channel(channel.id)
        assert isinstance(target, discord.TextChannel)
        sent = await target.send("ping")
        await sent.delete()
        with pytest.raises(discord.NotFound) as info:
            await sent.delete()
        assert info.value.code == 10008 and info.value.status == 404
        assert info.value.text == "Unknown Message"
    [first, second] = fake.responses(route="DELETE /channels/{channel_id}/messages/{message_id}")
    assert (first.status, first.code) == (204, None)
    assert (second.status, second.code) == (404, 10008)
    assert second.path.endswith(f"/channels/{channel.id}/messages/{sent.id}")
    assert seen == [("create", sent.id), ("delete", sent.id)]
    [msg] = [m for m in channel.messages if m.id == sent.id]
    assert msg.deleted_at is not None and msg.deleted_at >= msg.created_at


async def test_interaction_reply_with_file_and_deleted_reply(fake: FakeDiscord) -> None:
    _guild, alice, _bob, channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        scored = await fake.slash(alice, channel, "thousand", "score")
        sheet = await scored.original_message()
        assert sheet.content == "Scores" and [a.filename for a in sheet.attachments] == ["score.txt"]
        assert sheet.attachments[0].data == b"alice 120\nbob 80\n"
        undone = await fake.slash(alice, channel, "thousand", "undo")
        await undone.response()
        await fake.wait_until(lambda: undone.original is not None and undone.original.deleted)
        assert fake.messages(channel) == [sheet]


async def test_slash_in_direct_messages(fake: FakeDiscord) -> None:
    _guild, alice, _bob, _channel = world(fake)
    async with connect_client(ThousandBot(), fake) as bot:
        await bot.tree.sync()
        dm = fake.dm_channel(alice)
        it = await fake.slash(alice, dm, "thousand", "play", card="AS")
        assert (await it.original_message()).content == "alice played AS"
        assert ("play", alice.id, "AS", None) in bot.seen
        assert [m.content for m in fake.dms(alice)] == ["alice played AS"]


async def test_member_chunking_and_message_content_intent(fake: FakeDiscord) -> None:
    guild, alice, _bob, channel = world(fake)
    intents = discord.Intents.default()
    intents.members = True
    bot = discord.Client(intents=intents, guild_ready_timeout=0.05)
    received: list[discord.Message] = []

    async def on_message(message: discord.Message) -> None:
        received.append(message)

    bot.event(on_message)
    async with connect_client(bot, fake):
        dguild = bot.get_guild(guild.id)
        assert dguild is not None and dguild.chunked
        assert {m.name for m in dguild.members} == {"app-owner", "Thousand", "alice", "bob"}
        await fake.say(alice, channel, "hello bot")
        await fake.say(alice, channel, f"hey {fake.bot_user.mention}")
        await fake.wait_until(lambda: len(received) == 2)
        # Without the MESSAGE_CONTENT intent, other users' guild messages arrive without content,
        # except where the bot is mentioned.
        assert received[0].author.id == alice.id and received[0].content == ""
        assert received[1].content == f"hey <@{fake.bot_user.id}>"
        assert bot.user in received[1].mentions


async def test_delay_fault_pushes_callback_past_a_shorter_deadline() -> None:
    async with FakeDiscord(FakeDiscordConfig(interaction_deadline=0.5)) as fake:
        _guild, alice, _bob, channel = world(fake)
        async with connect_client(ThousandBot(), fake) as bot:
            await bot.tree.sync()
            fake.faults.delay(0.7, times=1, route="/interactions/")
            slow = await fake.slash(alice, channel, "thousand", "ack")
            assert (await slow.wait_error()).code == 10062
            await fake.wait_until(lambda: bool(bot.errors))
            assert bot.errors == [("ack", 404, 10062)]
            on_time = await fake.slash(alice, channel, "thousand", "ack")
            assert (await on_time.response()).type == 4


async def test_channel_permissions_are_enforced_for_the_bot(fake: FakeDiscord) -> None:
    guild, _alice, _bob, _channel = world(fake)
    bot_role = next(r for r in guild.roles.values() if r.managed)
    read_only = guild.add_text_channel(
        "announcements", overwrites=[Overwrite(bot_role.id, 0, deny=perms.SEND_MESSAGES)]
    )
    hidden = guild.add_text_channel("staff", overwrites=[Overwrite(guild.id, 0, deny=perms.VIEW_CHANNEL)])
    async with connect_client(ThousandBot(), fake) as bot:
        target = bot.get_channel(read_only.id)
        assert isinstance(target, discord.TextChannel)
        with pytest.raises(discord.Forbidden) as info:
            await target.send("hello")
        assert info.value.code == 50013
        with pytest.raises(discord.Forbidden) as info:
            await bot.http.send_message(
                hidden.id, params=discord.http.handle_message_parameters(content="hi")
            )
        assert info.value.code == 50001
