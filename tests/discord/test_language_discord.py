"""Every player in their own language, through the real discord.py bot and the fake Discord.

A whole game per language (lobby to the final score sheet): people whose Discord client speaks the
language (Estonian, which Discord lacks, is chosen with `/thousand lang`), the channel taking its
creator's language, and nothing anyone is shown may hold English (`tests/langkit.py`): channel
messages and every earlier version of them, ephemeral answers, DMs, embeds, buttons, autocomplete
choices and the localised command descriptions. Then a Polish player in an English channel.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from dckit import E2E, SHORT_GAME, Driver, message_texts, payload_of, running_bot, settings, speed_up
from langkit import OTHER_LANGUAGES, english_in

from adapters.discord.i18n import DISCORD_LOCALES
from adapters.discord.layout import mode_id
from adapters.discord.suggest import card_value
from bot.handlers.lobby import AI_NAMES
from bot.i18n import parse_card_in, translator
from bot.storage import MemoryStore
from core.cards import CARD_NAMES
from fakes.discord import FakeDiscord, FakeUser

NAMES = ("Ala", "Bartek", "Celina")
GUILD = "Karty 1000"


def seen_texts(fake: FakeDiscord, users: set[int] | None = None) -> list[tuple[str, str]]:
    """(where, text) of every message version anyone (or only `users`, privately) was shown, and the
    autocomplete choices offered."""
    out: list[tuple[str, str]] = []
    for message in list(fake.messages_by_id.values()):
        private = message.ephemeral or message.channel.guild is None
        if users is not None:
            viewer = getattr(message, "visible_to", None)
            dm_user = getattr(message.channel, "recipient", None)
            who = viewer or dm_user
            if not private or who is None or who.id not in users:
                continue
        where = "ephemeral" if message.ephemeral else "dm" if message.channel.guild is None else "channel"
        for version in [*message.history, message]:
            text, _ = message_texts(version)
            out.append((where, text))
    for interaction in list(fake.interactions.values()):
        if users is not None and interaction.user.id not in users:
            continue
        try:
            choices = interaction.choices
        except (AttributeError, AssertionError):
            continue
        out += [("autocomplete", str(c.get("name"))) for c in choices]
    return out


def command_texts(fake: FakeDiscord, lang: str) -> Iterator[tuple[str, str]]:
    """The localised descriptions of the synced commands (Discord shows English where a locale has none)."""
    locale = DISCORD_LOCALES.get(lang)
    if locale is None:
        return

    def walk(item: dict[str, Any]) -> Iterator[tuple[str, str]]:
        names = item.get("description_localizations") or {}
        yield f"command {item.get('name')}", names.get(locale.value, "")
        for option in item.get("options") or []:
            yield from walk(option)

    for command in fake.commands.global_commands.values():
        yield from walk(command)


async def _people(fake: FakeDiscord, lang: str, count: int = 3) -> tuple[Any, Any, list[FakeUser]]:
    locale = DISCORD_LOCALES[lang].value if lang in DISCORD_LOCALES else "en-US"
    guild = fake.add_guild(GUILD)
    users = [fake.add_user(name.lower(), global_name=name, locale=locale) for name in NAMES[:count]]
    for user in users:
        fake.add_member(guild, user)
    channel = fake.add_text_channel(guild, "tysiac")
    return guild, channel, users


async def _hand_by_dm(driver: Driver, user: FakeUser) -> None:
    """The player presses Hand by DM on their hand: the note, and their hand by direct message from now."""
    fake = driver.fake
    source = driver.table_message()
    assert source is not None
    it = await fake.press(user, source, next(c for c in source.custom_ids() if c.startswith("h|")))
    hand = await it.original_message()
    await driver.settle(it)
    await driver.settle(await fake.press(user, hand, mode_id(True)))
    driver.dm_users.add(user.id)


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
async def test_a_whole_game_in_one_language_shows_no_english(fake: FakeDiscord, lang: str) -> None:
    speed_up(fake)
    _, channel, users = await _people(fake, lang)
    async with running_bot(fake, MemoryStore(), settings(), config=E2E, seed=5) as bot:
        driver = Driver(fake, channel, users, [bot], random.Random(5))
        if lang == "tr":
            driver.slash_ratio = 0.0  # the kit types cards in the international notation (a Turkish K is a Q)
        if lang not in DISCORD_LOCALES:  # Discord has no Estonian: each person chooses it
            for user in users:
                await driver.settle(await fake.slash(user, channel, "thousand", "lang", language=lang))
        await driver.settle(await fake.slash(users[1], channel, "thousand", "help"))
        await driver.open("polish", options=SHORT_GAME)
        await _hand_by_dm(driver, users[2])
        await driver.settle(await fake.slash(users[2], channel, "thousand", "bid", amount=5))
        await driver.settle(await fake.slash(users[0], channel, "thousand", "rules"))
        doc = await driver.play()
        for who, name in ((2, "score"), (0, "stats"), (1, "top"), (0, "export"), (1, "lang"), (2, "leave")):
            await driver.settle(await fake.slash(users[who], channel, "thousand", name))
    assert doc.status == "finished" and doc.settings.language == lang
    texts = seen_texts(fake) + list(command_texts(fake, lang))
    assert len(texts) > 100
    shown = "\n".join(text for _, text in texts)
    t = translator(lang)
    for message in ("**Score sheet**", "**Statistics: {name}**", "**Top players**", "**1000: commands**"):
        assert t._(message).split("{")[0].strip("*") in shown, message  # the texts were collected
    assert not english_in(lang, texts, [*NAMES, *AI_NAMES, GUILD])


async def test_a_polish_player_in_an_english_channel(fake: FakeDiscord) -> None:
    speed_up(fake)
    guild = fake.add_guild(GUILD)
    ala = fake.add_user("ala", global_name="Ala", locale="en-US")
    bartek = fake.add_user("bartek", global_name="Bartek", locale="pl")
    for user in (ala, bartek):
        fake.add_member(guild, user)
    channel = fake.add_text_channel(guild, "cards")
    async with running_bot(fake, MemoryStore(), settings(), config=E2E, seed=6) as bot:
        driver = Driver(fake, channel, [ala, bartek], [bot], random.Random(6))
        await driver.open("polish", computers=1, options=SHORT_GAME)
        await driver.settle(await fake.slash(bartek, channel, "thousand", "help"))
        await driver.settle(await fake.slash(bartek, channel, "thousand", "bid", amount=5))
        doc = await driver.play()
    assert doc.settings.language == "en"
    private = seen_texts(fake, {bartek.id})
    assert len(private) > 10 and any("Twoje karty" in text for _, text in private)
    assert not english_in("pl", private, [*NAMES, *AI_NAMES, GUILD])
    group = [text for message in fake.messages(channel) for text in [message_texts(message)[0]]]
    assert any("Deal" in text for text in group)
    assert not any("Rozdanie" in text or "Twoje" in text for text in group)


@pytest.mark.parametrize("lang", ["en", *OTHER_LANGUAGES])
def test_a_chosen_card_reads_back_as_that_card_in_the_readers_language(lang: str) -> None:
    """The autocomplete's value is typed text to the service, read with the reader's letters first: a
    Turkish player's king must not arrive as `KS` (their K is the queen)."""
    for card in range(24):
        value = card_value(card, lang)
        assert parse_card_in(value, (lang, "en")) == card, (lang, value)
    assert card_value(CARD_NAMES.index("KS"), "tr") == "P♠"
    assert card_value(CARD_NAMES.index("KS"), "pl") == "KS"


async def test_a_channel_the_bot_may_not_post_in_is_explained_in_the_starters_language(
    fake: FakeDiscord,
) -> None:
    """The note on the missing permissions goes to the one who pressed Start: their language (Polish),
    not the channel's (English, chosen by Alice who opened the table)."""
    from adapters.discord.i18n import NO_ACCESS, labels
    from fakes.discord import Overwrite
    from fakes.discord import permissions as perms

    guild = fake.add_guild(GUILD)
    alice = fake.add_user("alice", global_name="Alice", locale="en-US")
    bartek = fake.add_user("bartek", global_name="Bartek", locale="pl")
    for user in (alice, bartek):
        fake.add_member(guild, user)
    async with running_bot(fake, MemoryStore()) as bot:
        bot_role = next(r for r in guild.roles.values() if r.managed)
        closed = fake.add_text_channel(
            guild, "closed", overwrites=[Overwrite(bot_role.id, 0, deny=perms.SEND_MESSAGES)]
        )
        opened = await fake.slash(alice, closed, "thousand", "new")
        lobby = await opened.original_message()
        await fake.wait_until(lambda: bot.idle)
        pressed = None
        for user, name in ((bartek, "join"), (alice, "add_ai"), (bartek, "start")):
            cid = next(c for c in lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == name)
            pressed = await fake.press(user, lobby, cid)
            await pressed.response()
            await fake.wait_until(lambda: bot.idle)
        assert pressed is not None
        notes = [m.content for m in pressed.followups]
        assert labels("pl")._(NO_ACCESS) in notes, notes
