"""Wording the catalogs must keep: no slash forms for a grammatical gender the bot does not know
("Dałeś(-aś)", "сыграл(а)": the wording is chosen to need none), and one colon per prompt (the Russian
lead prompt read "Ваш ход: ваш заход: …")."""

from __future__ import annotations

import re

import pytest
from babel.messages.pofile import read_po

from bot.i18n import LANGUAGES, translator

_SLASH_FORM = re.compile(r"\w\((?:-?\w{1,4})\)")
"""A word with a gender ending in brackets: `Dałeś(-aś)`, `сыграл(а)`, `вышел(ла)`, `został(a)`."""


def _messages(lang: str) -> list[tuple[str, str]]:
    with open(f"bot/locales/{lang}.po", "rb") as f:
        catalog = read_po(f, locale=lang)
    return [(str(m.id), str(m.string)) for m in catalog if m.id and isinstance(m.string, str)]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_message_guesses_a_gender_with_a_slash_form(lang: str) -> None:
    found = [(mid, text) for mid, text in _messages(lang) if _SLASH_FORM.search(text)]
    assert not found, found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_turn_prompt_has_one_colon(lang: str) -> None:
    t = translator(lang)
    turn = t._("**Your turn:** {prompt}")
    for prompt in ("lead a card.", "play a card.", "take the talon.", "you can only pass."):
        text = turn.format(prompt=t._(prompt))
        assert text.count(":") == turn.count(":"), text
