"""Every player in their own language, through the real bot and the fake Bot API.

A whole game per language (lobby to the final score sheet) with the people's Telegram language set to it:
the group takes its creator's language, and nothing anyone is shown (messages, edits, captions, button
labels, callback answers, the localised command menu) may hold English (`tests/langkit.py`). Then a mixed
table: a Polish player in an English group reads their own messages in Polish, the group English.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from langkit import OTHER_LANGUAGES, EnglishFinder, english_in
from tgkit import Rig, seat_everyone

from bot.handlers.lobby import AI_NAMES
from bot.i18n import translator
from fakes.telegram import FakeTelegram

NAMES = ("Ala", "Bartek", "Celina")
TITLE = "Karty 1000"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def seen_texts(fake: FakeTelegram, lang: str, chats: set[int] | None = None) -> list[tuple[str, str]]:
    """(method → chat, text) of everything the bot showed: texts, captions, buttons, callback answers, and
    the command menu of `lang` (the default menu is English by design). `chats`: only these chats."""
    out: list[tuple[str, str]] = []
    for call in fake.calls:
        if call.status != 200:
            continue
        params = call.params
        method = call.method
        menu = method.lower() in ("setmycommands", "setmydescription", "setmyshortdescription")
        if menu and params.get("language_code") != lang:
            continue
        chat = params.get("chat_id")
        if chats is not None and (chat is None or int(str(chat)) not in chats):
            continue
        for key in ("text", "caption", "reply_markup", "commands", "description", "short_description"):
            raw = params.get(key)
            if isinstance(raw, str) and key in ("reply_markup", "commands"):
                with contextlib.suppress(ValueError):
                    raw = json.loads(raw)
            for text in _strings(raw):
                out.append((f"{method} → {chat}", text))
    return out


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
async def test_a_whole_game_in_one_language_shows_no_english(rig: Rig, lang: str) -> None:
    fake = rig.fake
    people = [fake.add_user(name, language_code=lang) for name in NAMES]
    chat = rig.group(TITLE, people)
    table = await seat_everyone(rig, chat, people, 0)
    if lang == "tr":
        # Typed cards are read with the reader's letters first: a Turkish K is the queen (kız), so the
        # kit's international "KS" would be another card. Turkish players here press buttons.
        table.button_share = 1.0
    # Help, information and a refusal, in the group and privately, besides the game itself.
    await rig.say(chat, people[1], "/help")
    await rig.say(people[2], people[2], "/help")
    await rig.say(chat, people[0], "/rules")
    await rig.say(chat, people[1], "/bid 5")
    await rig.say(people[0], people[0], "/hand")
    await rig.say(chat, people[0], "/table")
    await table.play_out()
    for where, who, text in (
        (chat, 2, "/score"),
        (chat, 0, "/stats"),
        (chat, 1, "/top"),
        (chat, 0, "/export"),
        (people[1], 1, "/lang"),
        (chat, 2, "/leave"),
    ):
        await rig.say(where, people[who], text)
    doc = await table.doc()
    assert doc.status == "finished" and doc.settings.language == lang
    texts = seen_texts(fake, lang)
    assert len(texts) > 100
    assert any(where.startswith("setMyCommands") for where, _ in texts)
    shown = "\n".join(text for _, text in texts)
    t = translator(lang)
    for message in ("**Score sheet**", "**Statistics: {name}**", "**Top players**", "**1000: commands**"):
        assert t._(message).split("{")[0].strip("*") in shown, message  # the texts were collected
    assert not english_in(lang, texts, [*NAMES, *AI_NAMES, TITLE])


async def test_the_finder_sees_english(rig: Rig) -> None:
    """The check is not vacuous: English pieces and words are found, the language's own are not."""
    finder = EnglishFinder("pl")
    assert finder.find("Twój ruch: Ala. Your hand") != []
    assert finder.find("It is not your turn.") != []
    assert finder.find("Bartek: Pass") == ["Pass"]
    assert finder.find("Twoje karty · rozdanie 2") == []
    assert "Pass" not in EnglishFinder("et").words  # Estonian says "Pass" too


async def test_a_polish_player_in_an_english_group(rig: Rig) -> None:
    """Private messages follow the reader (their Telegram language here), the group its own language."""
    fake = rig.fake
    ala = fake.add_user("Ala", language_code="en")
    bartek = fake.add_user("Bartek", language_code="pl")
    chat = rig.group(TITLE, [ala, bartek])
    table = await seat_everyone(rig, chat, [ala, bartek], 1)
    await rig.say(chat, bartek, "/bid 5")
    await rig.say(chat, bartek, "/help")
    await table.play_out()
    doc = await table.doc()
    assert doc.settings.language == "en"
    names = [*NAMES, *AI_NAMES, TITLE]
    private = seen_texts(fake, "pl", {bartek.id})
    assert len(private) > 20
    assert not english_in("pl", private, names)
    assert any("Twoje karty" in text for _, text in private)
    assert any(text.startswith("Masz miejsce przy stole") for _, text in private)  # the seat's greeting
    group = [text for _, text in seen_texts(fake, "en", {chat.id})]
    assert any("Deal 1" in text for text in group)
    assert not any("Rozdanie" in text or "Twoje" in text for text in group)
    # The callback answers Bartek saw (a refused press, a toast) are Polish too.
    answers = [q.text for q in fake.callback_answers if q.user.id == bartek.id and q.text]
    assert not english_in("pl", [("answer", a) for a in answers], names)


async def test_the_note_to_open_the_private_chat_follows_the_persons_lang_choice(rig: Rig) -> None:
    """Someone who never started the bot types /join in the group: the note naming them (open our
    private chat) is in the language they chose with /lang, though their Telegram and the group are
    English."""
    fake = rig.fake
    ala, dana = fake.add_user("Ala", language_code="en"), fake.add_user("Dana", language_code="en")
    chat = rig.group(TITLE, [ala, dana])
    fake.user_starts_bot(ala)
    await rig.say(chat, ala, "/new")
    await rig.say(chat, dana, "/lang uk")
    await rig.say(chat, dana, "/join")
    notes = [m.content for m in fake.bot_messages(chat) if m.content.startswith("Dana:")]
    assert notes, [m.content for m in fake.bot_messages(chat)]
    assert not english_in("uk", [("note", notes[-1])], ["Dana", TITLE])
    assert translator("uk")._("Join") in [b for m in fake.bot_messages(chat) for b in _labels(m)]


def _labels(message: object) -> list[str]:
    markup = getattr(message, "reply_markup", None) or {}
    return [b.get("text", "") for row in markup.get("inline_keyboard", []) for b in row]
