"""The `/thousand` commands as Discord registers and delivers them: the subcommands of the issue with
localized descriptions, options and autocomplete; who may change settings; where each answer goes."""

from __future__ import annotations

import json
import random

import pytest
from dckit import E2E, SHORT_GAME, Driver, World, payload_of, running_bot, speed_up

from adapters.discord.client import ThousandBot
from adapters.discord.i18n import DESCRIPTIONS, NO_ACCESS, labels
from bot.storage import MemoryStore
from fakes.discord import FakeDiscord, FakeInteraction, FakeUser

SUBCOMMANDS = {
    "new", "join", "leave", "start", "bid", "pass", "contract", "play", "hand", "score", "rules", "settings",
    "lang",
    "kick", "end", "export", "stats", "top", "back", "help", "cancel", "say", "block", "review", "report",
}  # fmt: skip


def texts(it: FakeInteraction) -> str:
    msgs = [m for m in (it.original, *it.followups) if m is not None]
    return "\n".join([m.content for m in msgs] + [e.get("description") or "" for m in msgs for e in m.embeds])


async def run(bot: ThousandBot, it: FakeInteraction) -> FakeInteraction:
    """The interaction answered and everything it caused sent."""
    await it.response()
    fake = it.channel.guild.fake if it.channel.guild is not None else None
    assert fake is not None
    await fake.wait_until(lambda: bot.idle and (it.original is None or not it.original.loading))
    return it


async def test_registered_commands_localized(fake: FakeDiscord, world: World) -> None:
    async with running_bot(fake, MemoryStore()):
        cmd = fake.commands.find(None, "thousand")
    assert cmd is not None
    subs = {o["name"]: o for o in cmd["options"]}
    assert set(subs) == SUBCOMMANDS
    for lang, locale in (("pl", "pl"), ("ru", "ru"), ("uk", "uk"), ("tr", "tr")):
        assert cmd["description_localizations"][locale] == labels(lang)._(DESCRIPTIONS["thousand"])
        for name, sub in subs.items():
            localized = sub["description_localizations"][locale]
            assert localized == labels(lang)._(DESCRIPTIONS[name]) != DESCRIPTIONS[name]
            for option in sub.get("options") or []:
                key = f"{name}.{option['name']}"
                assert option["description_localizations"][locale] == labels(lang)._(DESCRIPTIONS[key])
    assert subs["play"]["options"][0]["autocomplete"] is True
    assert subs["bid"]["options"][0]["autocomplete"] is True
    assert {o["name"]: o.get("autocomplete") for o in subs["settings"]["options"]} == {
        "option": True,
        "value": True,
    }
    assert [c["value"] for c in subs["new"]["options"][0]["choices"]] == ["polish", "estonian", "russian"]
    assert cmd["contexts"] == [0, 1]  # guilds and the DM with the bot


async def test_settings_need_manage_server_or_the_creator(fake: FakeDiscord, world: World) -> None:
    alice, bob = world.users[:2]
    async with running_bot(fake, MemoryStore()) as bot:
        opened = await run(bot, await fake.slash(alice, world.channel, "thousand", "new"))
        lobby = opened.original
        assert lobby is not None and not lobby.ephemeral

        refused = await run(
            bot, await fake.slash(bob, world.channel, "thousand", "settings", option="target", value="1200")
        )
        assert refused.callback is not None and refused.callback.ephemeral
        assert "Only the table's creator or a chat admin" in texts(refused)

        by_admin = await run(
            bot,
            await fake.slash(
                world.admin, world.channel, "thousand", "settings", option="target", value="1200"
            ),
        )
        assert "Settings changed" in texts(by_admin)
        by_creator = await run(
            bot, await fake.slash(alice, world.channel, "thousand", "settings", option="turn", value="60")
        )
        assert "Settings changed" in texts(by_creator)


async def test_answers_go_where_they_belong(fake: FakeDiscord, world: World) -> None:
    alice = world.users[0]
    async with running_bot(fake, MemoryStore()) as bot:
        helped = await run(bot, await fake.slash(alice, world.channel, "thousand", "help"))
        assert helped.callback is not None and helped.callback.ephemeral and "/thousand new" in texts(helped)
        rules = await run(bot, await fake.slash(alice, world.channel, "thousand", "rules"))
        assert rules.callback is not None and not rules.callback.ephemeral  # public information
        no_game = await run(bot, await fake.slash(alice, world.channel, "thousand", "play", card="QS"))
        assert no_game.callback is not None and no_game.callback.ephemeral
        language = await run(bot, await fake.slash(alice, world.channel, "thousand", "lang", language="pl"))
        assert language.callback is not None and language.callback.ephemeral
        top = await run(bot, await fake.slash(alice, world.channel, "thousand", "top"))
        assert top.callback is not None and not top.callback.ephemeral


async def test_game_commands_kick_leave_export_stats_end(fake: FakeDiscord, world: World) -> None:
    speed_up(fake)
    players = world.users[:3]
    alice, bob, carol = players
    async with running_bot(fake, MemoryStore(), config=E2E, seed=5) as bot:
        driver = Driver(fake, world.channel, players, [bot], random.Random(5))
        await driver.open("polish", options=SHORT_GAME)
        nothing = await run(bot, await fake.slash(alice, world.channel, "thousand", "export"))
        assert nothing.callback is not None and nothing.callback.ephemeral

        vote = await run(bot, await fake.slash(alice, world.channel, "thousand", "kick", player=carol))
        assert vote.callback is not None and not vote.callback.ephemeral and "Vote to kick" in texts(vote)
        kicked = await run(
            bot, await fake.slash(world.admin, world.channel, "thousand", "kick", player=carol)
        )
        assert "was kicked" in texts(kicked)
        came_back = await run(bot, await fake.slash(carol, world.channel, "thousand", "back"))
        assert came_back.callback is not None and came_back.callback.ephemeral  # not seated any more

        driver.players = [alice, bob]
        doc = await driver.play()
        assert doc.ended == "won"
        record = await run(bot, await fake.slash(bob, world.channel, "thousand", "export"))
        original = record.original
        assert original is not None and original.ephemeral and original.visible_to is bob
        [attachment] = original.attachments
        assert attachment.filename.endswith(".json") and json.loads(attachment.data)["deals"]
        # /thousand review: the asker's own costliest choices of the last finished deal, only to them.
        review = await run(bot, await fake.slash(bob, world.channel, "thousand", "review"))
        answers = [m for m in (review.original, *review.followups) if m is not None]
        assert answers and "Your review of deal 1" in texts(review), texts(review)
        assert all(m.ephemeral and m.visible_to is bob for m in answers)
        stats = await run(bot, await fake.slash(alice, world.channel, "thousand", "stats"))
        assert stats.callback is not None and not stats.callback.ephemeral

        again = await run(bot, await fake.slash(bob, world.channel, "thousand", "new", preset="russian"))
        assert again.original is not None and "russian" in (again.original.embeds[0].get("description") or "")
        not_allowed = await run(bot, await fake.slash(alice, world.channel, "thousand", "end"))
        assert "Only the table's creator" in texts(not_allowed)
        ended = await run(bot, await fake.slash(bob, world.channel, "thousand", "end"))
        assert ended.callback is not None
        assert "closed" in (again.original.embeds[0].get("description") or "")


@pytest.mark.parametrize("lang", ["pl", "ru"])
async def test_buttons_and_notes_in_the_players_language(fake: FakeDiscord, world: World, lang: str) -> None:
    alice, bob = world.users[:2]
    bob.locale = lang  # alice opens the table: the channel takes her language (English)
    async with running_bot(fake, MemoryStore(), config=E2E) as bot:
        driver = Driver(fake, world.channel, [alice, bob], [bot], random.Random(1))
        await driver.open("polish", computers=1)
        table = driver.table_message()
        assert table is not None
        label = next(b["label"] for b in table.buttons() if b["custom_id"].startswith("h|"))
        assert [b["label"] for b in table.buttons()].count(label) == 1  # one "My hand", not two
        # The table is in the chat's language (its creator's); the hand in the player's.
        assert label == labels("en")._("My hand")
        it = await fake.press(bob, table, f"h|dc:{world.channel.id}")
        hand = await it.original_message()
        switch = next(b["label"] for b in hand.buttons() if b["custom_id"].startswith("m|"))
        assert switch == labels(lang)._("Hand by DM") != "Hand by DM"
        pings = [m for m in fake.messages(world.channel) if m.content.startswith("<@")]
        for ping in pings:  # channel messages: the channel's language
            user: FakeUser = next(u for u in (alice, bob) if ping.content.startswith(f"<@{u.id}>"))
            assert ping.content == labels("en")._("{mention}, your turn.").format(mention=f"<@{user.id}>")
        assert all(payload_of(c) is None or c.startswith("t|") for c in hand.custom_ids())


async def test_a_channel_the_bot_may_not_post_in_is_explained(fake: FakeDiscord, world: World) -> None:
    """The lobby is an interaction answer (no permission needed), but the table is a channel message:
    when Discord refuses it (50013), the player who started is told what the bot needs."""
    from fakes.discord import Overwrite
    from fakes.discord import permissions as perms

    bot_role = next(r for r in world.guild.roles.values() if r.managed)
    closed = fake.add_text_channel(
        world.guild, "closed", overwrites=[Overwrite(bot_role.id, 0, deny=perms.SEND_MESSAGES)]
    )
    alice, bob = world.users[:2]
    async with running_bot(fake, MemoryStore()) as bot:
        opened = await run(bot, await fake.slash(alice, closed, "thousand", "new"))
        lobby = opened.original
        assert lobby is not None and not lobby.ephemeral
        for user, name in ((bob, "join"), (alice, "add_ai"), (alice, "start")):
            cid = next(c for c in lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == name)
            pressed = await run(bot, await fake.press(user, lobby, cid))
        notes = [m.content for m in pressed.followups]
        assert labels("en")._(NO_ACCESS) in notes, notes
