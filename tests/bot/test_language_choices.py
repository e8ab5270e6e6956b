"""Which language each text is in: a new chat's from its creator, private texts in the reader's own, and
each platform's help listing that platform's commands."""

from __future__ import annotations

import random
import re

import pytest
from botkit import Harness, errors, make_user

from adapters.discord.tree import build_group
from bot.commands import parse_text
from bot.help import DISCORD, TERMINAL, TYPED
from bot.model import ChatRef, Group, Private, Sender
from core.actions import Play
from core.cards import CARD_NAMES, parse_card


async def test_a_new_chat_takes_its_creators_language_and_keeps_it(harness: Harness) -> None:
    ala, bartek = make_user(0, "pl-PL"), make_user(1, "en")
    out = await harness.text(ala, "/new")
    lobby = [m for m in out if isinstance(m.audience, Group)]
    assert lobby and lobby[0].language == "pl" and "Stół" in lobby[0].text
    version, settings = await harness.service.chat_settings(harness.chat.key)
    assert version > 0 and settings.language == "pl"  # saved: the chat's own setting from now on
    await harness.text(ala, "/end")
    # The chat's next table, opened by an English speaker, stays Polish: the chat chose already.
    out = await harness.text(bartek, "/new")
    assert [m.language for m in out if isinstance(m.audience, Group)] == ["pl"]


async def test_a_chat_language_chosen_before_is_kept(harness: Harness) -> None:
    admin = make_user(0, "en", admin=True)
    assert not errors(await harness.text(admin, "/set lang et"))
    out = await harness.text(make_user(1, "tr"), "/new")
    assert [m.language for m in out if isinstance(m.audience, Group)] == ["et"]


async def test_the_first_setting_of_a_chat_takes_the_setters_language(harness: Harness) -> None:
    admin = make_user(0, "uk", admin=True)
    assert not errors(await harness.text(admin, "/set turn 60"))
    _, settings = await harness.service.chat_settings(harness.chat.key)
    assert settings.language == "uk" and settings.turn_seconds == 60


async def test_a_lang_choice_counts_before_the_platform_language(harness: Harness) -> None:
    """Refusals and help for someone not seated follow their `lang` choice, not the group's."""
    ala, bartek = make_user(0, "en"), make_user(1, "en")
    await harness.text(ala, "/new")
    await harness.text(bartek, "/lang ru")
    [refusal] = await harness.text(bartek, "/start")  # not seated: refused
    assert isinstance(refusal.audience, Sender) and refusal.language == "ru"
    [help_] = await harness.text(bartek, "/help")
    assert help_.language == "ru" and "команды" in help_.text
    [help_] = await harness.text(ala, "/help")
    assert help_.language == "en"


async def test_private_messages_follow_the_reader_and_the_group_its_language(harness: Harness) -> None:
    ala, bartek = make_user(0, "en"), make_user(1, "pl")
    await harness.open_table([ala, bartek], computers=1)
    hands = {
        m.audience.user.key: m for m in harness.sent if isinstance(m.audience, Private) and m.kind == "hand"
    }
    assert hands[bartek.key].language == "pl" and "Twoje karty" in hands[bartek.key].text
    assert hands[ala.key].language == "en" and "Your hand" in hands[ala.key].text
    assert {m.language for m in harness.sent if isinstance(m.audience, Group)} == {"en"}


async def test_a_turkish_players_king_button_plays_the_king(harness: Harness) -> None:
    """Buttons carry the international notation; a Turkish K (kız) is the queen only when typed."""
    ala, bartek = make_user(0, "tr"), make_user(1, "tr")
    await harness.open_table([ala, bartek], computers=1)
    users = {0: ala, 1: bartek}
    rng = random.Random(3)
    for _ in range(400):
        state = await harness.state()
        seat = state.to_act
        if seat in users:
            kings = [
                a for a in state.legal_actions(seat) if isinstance(a, Play) and CARD_NAMES[a.card][0] == "K"
            ]
            if kings:
                user = users[seat]
                payload = harness.button_for(user, "play", (CARD_NAMES[kings[0].card],))
                if payload is not None:
                    replies = await harness.press(user, payload)
                    assert not errors(replies), [m.text for m in replies]
                    after = await harness.state()
                    queen = kings[0].card - 1  # the same suit's queen: what a Turkish K would have named
                    assert not after.deal.hands[seat] >> kings[0].card & 1  # the king left the hand
                    assert (after.deal.hands[seat] >> queen & 1) == (state.deal.hands[seat] >> queen & 1)
                    return
        if not await harness.play_turn(rng, users, buttons=1.0, sensible=True):
            break
    pytest.fail("no king was ever playable by a button")


def test_typed_help_commands_exist() -> None:
    chat, user = ChatRef("t", "-1"), make_user(0)
    for commands, _ in TYPED:
        for word in re.findall(r"/\w+(?:\\_\w+)?", commands):
            command = parse_text(word.replace("\\_", "_"), chat, user)
            assert command is not None and command.name not in ("", "unknown"), word


def test_the_discord_help_lists_exactly_the_slash_commands() -> None:
    from unittest.mock import MagicMock

    group = build_group(MagicMock())
    existing = {c.name for c in group.commands}
    listed = {word for commands, _ in DISCORD for word in re.findall(r"/thousand (\w+)", commands)}
    assert listed == existing


def test_the_terminal_help_lists_words_without_slashes() -> None:
    chat, user = ChatRef("console", "local", private=True), make_user(0)
    for commands, _ in TERMINAL:
        assert "/" not in commands
        for word in re.findall(r"\b[a-z]{3,}\b", commands):
            if word in ("yes", "quit", "help"):
                continue
            command = parse_text("/" + word, chat, user)
            assert command is not None and command.name != "unknown", word
    assert parse_card("QS") == CARD_NAMES.index("QS")


async def test_timer_messages_come_in_the_absent_players_language(timed: Harness) -> None:
    """The turn warning and "a computer played your turn" are private: the player's language (Polish),
    while the group, opened by an English speaker, reads English."""
    h = timed
    ala, bartek, celina = make_user(0, "en"), make_user(1, "pl"), make_user(2, "uk")
    users = {0: ala, 1: bartek, 2: celina}
    await h.open_table([ala, bartek, celina], preset="russian")
    state = await h.state()
    assert state.to_act is not None
    absent = users[state.to_act]
    h.clock.advance(61)
    [warning] = await h.tick()
    assert warning.alert and warning.language == (absent.language or "en")
    h.clock.advance(30)
    out = await h.tick()
    private = [m for m in out if isinstance(m.audience, Private) and m.audience.user.key == absent.key]
    assert private and {m.language for m in private} == {absent.language}
    assert {m.language for m in h.sent if isinstance(m.audience, Group)} == {"en"}


async def test_a_refused_new_saves_no_chat_settings(harness: Harness) -> None:
    out = await harness.text(make_user(0, "pl"), "/new nosuchpreset")
    assert errors(out) and errors(out)[0].language == "pl"
    assert await harness.store.load(f"settings:{harness.chat.key}") is None


async def test_the_rule_presets_are_named_in_the_readers_language(harness: Harness) -> None:
    """`polish` is what one types (`/new polish`); a Polish reader sees "wariant polski"."""
    out = await harness.text(make_user(0, "pl"), "/new estonian")
    [lobby] = [m for m in out if isinstance(m.audience, Group)]
    assert "wariant estoński" in lobby.text and "estonian" not in lobby.text
    [rules] = await harness.text(make_user(0, "pl"), "/rules")
    assert "wariant estoński" in rules.text and "estonian" not in rules.text
