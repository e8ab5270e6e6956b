"""The suite's detector of private cards (`fakes/cardspy.py`): it recognises every form a card takes, in
every language and field, raises no false alarm on ordinary text, and calls private exactly the cards
the engine's own events have not shown to everyone."""

from __future__ import annotations

import io
import json
import random
import re
from importlib import resources

import pytest
from babel.messages.pofile import read_po

from bot.commands import encode_payload
from bot.i18n import _EXTRA_ALIASES, LANGUAGES, RANK_LETTERS, translator
from bot.model import Button
from core import events as ev
from core.cards import CARD_NAMES, SUIT_SYMBOLS
from core.game import GameState, new_game
from core.rules import preset
from fakes.cardspy import Part, discord_parts, leaks, message_parts, readings, secret_cards, telegram_parts

ALL = frozenset(range(24))
OUTLINED = ("♧", "♤", "♡", "♢")


def cards(text: str, lang: str | None = "en") -> list[int]:
    """The one card each token means for a reader of `lang` (a token with several readings fails)."""
    out = []
    for r in readings(text, None if lang is None else [lang]):
        assert len(r.cards) == 1, (text, r)
        out.append(next(iter(r.cards)))
    return out


# --------------------------------------------------------------------------- every form


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_label_of_every_language_in_every_spelling(lang: str) -> None:
    letters = RANK_LETTERS[lang]
    for card in range(24):
        rank, suit = letters[card % 6], SUIT_SYMBOLS[card // 6]
        forms = [
            rank + suit,
            f"{rank} {suit}",
            suit + rank,
            f"{suit} {rank}",
            rank + suit + "\ufe0f",  # emoji presentation
            suit + "\ufe0f" + rank,
            rank + OUTLINED[card // 6],
            rank.lower() + suit,  # typed
        ]
        assert translator(lang).card(card) == forms[0]
        for form in forms:
            assert cards(form, lang) == [card], (lang, form)
            assert cards(f"Alice played {form}.", lang) == [card], (lang, form)
            assert cards(f"({form})", lang) == [card], (lang, form)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_aliases_the_parser_accepts_are_cards_too(lang: str) -> None:
    for letter, rank in _EXTRA_ALIASES.get(lang, {}).items():
        assert cards(f"{letter}♠", lang) == [6 + rank]


def test_a_whole_hand_in_a_row() -> None:
    t = translator("pl")
    hand = [0, 7, 14, 21, 5, 10]
    assert cards(t.cards(hand), "pl") == hand
    assert cards(" ".join(CARD_NAMES[c] for c in hand)) == hand
    assert cards("[" + " ".join(CARD_NAMES[c] for c in hand) + " …]") == hand
    assert cards("".join(t.card(c) for c in hand), "pl") == hand  # glued: rank then suit wins


def test_codes_in_every_case_and_the_ten_as_t() -> None:
    for card, name in enumerate(CARD_NAMES):
        assert cards(name) == [card]
        assert cards(name.lower()) == [card] or name.lower() in ("as", "ad", "ah")
        assert cards(f"/play {name} !") == [card]
        assert cards(f"{name},{name}.") == [card, card]
    assert cards("TH") == cards("10H") == cards("th") == [16]
    assert cards("9c qs") == [0, 8]


def test_unicode_playing_cards() -> None:
    assert cards("🂭 🂱 🃁 🃙") == [8, 17, 23, 0]  # Q♠ A♥ A♦ 9♣


def test_languages_decide_what_a_letter_means() -> None:
    assert cards("K♠", "en") == [9]  # king
    assert cards("K♠", "tr") == [8]  # the Turkish queen
    assert cards("P♠", "tr") == [9] and cards("P♠", "et") == [7]
    assert cards("Q♠", "pl") == [8]  # not Polish: the notation
    assert cards("E♠", "en") == [8]  # only Estonian spells it: read as Estonian
    (r,) = readings("K♠", ["tr", "en"])  # a table that changed language: both readings
    assert r.cards == {8, 9}
    assert leaks([Part("text", "K♠")], {8}, ["tr", "en"]) == []  # the king may be the public card
    assert len(leaks([Part("text", "K♠")], {8, 9}, ["tr", "en"])) == 1
    (r,) = readings("P♠", None)
    assert r.cards == {7, 9}


# --------------------------------------------------------------------------- no false alarm


ORDINARY = [
    "as soon as possible, as Ad said: ah, ok",
    "MASS 10HZ ASAP ADHD 9CX 12QS QS2 X10H",
    "Bid 120 · 110 ♠ · 100 ♥",
    "Trump: ♥ hearts",
    "Jan K ♥ hearts",  # a name and a suit as Translator.suit writes it
    "Alice declared a ♥ marriage",
    "It was ♠ spades, then ♦ diamonds",
    "Ad Soyad: Ahmet · Tamam",  # Turkish
    "Ta käis ära. Sa oled järgmine",  # Estonian
    "Атут: ♣ трефы. Тот, кто взял, ходит",  # Russian
    "Dan K.",
    "NOW♠ SAW♥",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_shows_no_card(text: str) -> None:
    assert readings(text, None) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_catalog_message_is_a_card(lang: str) -> None:
    """Every message of the catalogs, filled with harmless values, shows no card (the examples they
    hold, such as 'Write it like QS, 10H or Q♠', are fixed text, not cards of the game)."""
    t = translator(lang)
    source = resources.files("bot.locales").joinpath(f"{lang}.po")
    catalog = read_po(io.BytesIO(source.read_bytes()))
    checked = 0
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple | list) else (message.string,)
        for text in strings:
            filled = re.sub(r"\{[^{}]*\}", "Alice 120", str(text or ""))
            assert readings(filled, [lang]) == [], (lang, text)
            checked += 1
    assert checked > 100
    # The fixed examples hide nothing put next to them.
    example = t._("That is not a card. Write it like QS, 10H or Q♠.")
    assert example != "" and readings(example, [lang]) == []
    assert cards(f"{example} {t.card(0)}", lang) == [0]


# --------------------------------------------------------------------------- every field


def test_leaks_names_the_private_card_and_the_field() -> None:
    parts = message_parts("hello", ((Button("Join", encode_payload("play", ("QS",), 3, "tg:-1")),),))
    (found,) = leaks(parts, {8}, ["en"])
    assert "QS" in found and "button payload" in found
    assert leaks(parts, {9}, ["en"]) == []
    assert leaks(message_parts("Q♠ K♠ 10♠", ()), {8, 10}, ["en"]) == [
        "QS as 'Q♠', 10S as '10♠' in text: 'Q♠ K♠ 10♠'"
    ]
    # A "Last trick" line shows played cards only (in any language); the other lines are still read.
    for lang in LANGUAGES:
        t = translator(lang)
        last = t._("Last trick: {cards} → {name}").format(cards=t.card(8), name="Ala")
        assert leaks([Part("text", f"**{last}**")], ALL, [lang]) == []
        assert len(leaks([Part("text", f"{last}\n{t.card(9)}")], ALL, [lang])) == 1
    # A payload is read by its arguments: its table id or tag is no card.
    assert leaks([Part("data", encode_payload("bid", ("120",), 3, "tg:-100"), payload=True)], ALL) == []


@pytest.mark.parametrize("as_json", [False, True])
def test_telegram_every_field_with_the_keyboard_as_dict_or_json(as_json: bool) -> None:
    keyboard = {
        "inline_keyboard": [
            [{"text": "Join", "callback_data": encode_payload("play", ("JD",), 1, "tg:-5")}],
            [{"text": "Hand A♠", "callback_data": "x"}, {"text": "Open", "url": "https://t.me/b?start=KH"}],
        ]
    }
    message = {
        "text": "Table 9♣",
        "caption": "Score 10♥",
        "reply_markup": json.dumps(keyboard) if as_json else keyboard,
    }
    found = leaks(telegram_parts(message), ALL, ["en"])
    assert [f.split(" as ")[0] for f in found] == ["9C", "10H", "JD", "AS", "KH"], found
    assert [f.split(" in ")[1].split(":")[0] for f in found] == [
        "text", "caption", "callback_data", "button label", "button url"
    ]  # fmt: skip


def test_discord_every_field() -> None:
    embeds = [
        {
            "title": "T 9♣",
            "description": "D J♣",
            "fields": [{"name": "N Q♣", "value": "V K♣"}],
            "footer": {"text": "F 10♣"},
            "author": {"name": "A A♣"},
        }
    ]
    components = [
        {
            "type": 1,
            "components": [
                {"type": 2, "label": "B 9♠", "custom_id": "t|" + encode_payload("play", ("JS",), 1, "dc:5")},
                {
                    "type": 3,
                    "custom_id": "pick",
                    "placeholder": "P Q♠",
                    "options": [{"label": "L K♠", "value": "10S", "description": "O A♠"}],
                },
            ],
        },
        {"type": 10, "content": "C 9♥"},
    ]
    found = leaks(discord_parts("content J♥", embeds, components), ALL, ["en"])
    named = sorted(f.split(" as ")[0] for f in found)
    assert named == sorted(
        ["JH", "9C", "JC", "QC", "KC", "10C", "AC", "9S", "JS", "QS", "KS", "AS", "10S", "9H"]
    )


# --------------------------------------------------------------------------- what is private


@pytest.mark.parametrize(("name", "players"), [("polish", 2), ("polish", 3), ("russian", 3), ("estonian", 4)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_private_means_not_yet_shown_to_everyone(name: str, players: int, seed: int) -> None:
    """`secret_cards` against the engine's events: no card an event showed to everyone in this deal is
    called private, and every card not shown to everyone that a hand, talon or pile holds is."""
    rng = random.Random(seed)
    state: GameState
    rules = preset(name, {"crawl": True} if name != "russian" else None)
    state, events = new_game(rules, players, seed)
    shown: set[int] = set()
    steps = 0
    while not state.finished and steps < 400:
        for e in events:
            if e.kind == ev.DEAL_STARTED:
                shown = set()  # its cards are the seats in play
            elif e.audience is None:
                shown |= set(e.cards)
        secret = secret_cards(state)
        assert not secret & shown, [CARD_NAMES[c] for c in secret & shown]
        deal = state.deal
        held = {c for c in range(24) if any(h >> c & 1 for h in deal.hands)}
        held |= set(deal.talon) | set(deal.discard)
        assert held - shown <= secret, [CARD_NAMES[c] for c in held - shown - secret]
        seat = state.to_act
        assert seat is not None
        legal = list(state.legal_actions(seat))
        events = state.apply_action(seat, legal[rng.randrange(len(legal))])
        steps += 1
    assert steps > 20
    if state.finished:
        assert secret_cards(state) == frozenset()
