"""Names and titles: no invisible direction or format characters, one line, bounded, emoji kept whole;
checked on the cleaning itself and through the real service, in the lobby and table lines it renders."""

from __future__ import annotations

import unicodedata

import pytest
from botkit import Harness, errors, make_user

from bot.model import ChatRef, UserRef
from bot.names import NAME_MAX, TITLE_MAX, clean_name, clean_title, clusters

RLO = "\u202e"
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # man ZWJ woman ZWJ girl ZWJ boy
RAINBOW = "\U0001f3f3\ufe0f\u200d\U0001f308"
WAVE_DARK = "\U0001f44b\U0001f3ff"
POLAND = "\U0001f1f5\U0001f1f1"
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
INVISIBLE = (
    [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\u200e", "\u200f", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u061c"]
)


def format_chars(text: str) -> list[str]:
    return [f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) == "Cf"]


@pytest.mark.parametrize("ch", INVISIBLE, ids=lambda ch: f"U+{ord(ch):04X}")
def test_every_invisible_format_character_is_removed(ch: str) -> None:
    assert clean_name(f"Ala{ch}Kot{ch}") == "AlaKot"
    assert clean_title(f"{ch}Group{ch}") == "Group"


def test_direction_override_cannot_reverse_what_follows() -> None:
    user = UserRef("tg", "7", f"Ala{RLO}tseB eht m'I")
    assert user.name == "AlatseB eht m'I"
    assert format_chars(user.name) == []


def test_emoji_sequences_keep_their_joiners_and_tags() -> None:
    for emoji in (FAMILY, RAINBOW, WAVE_DARK, POLAND, SCOTLAND, "e\u0301"):
        assert clean_name(f"Ala {emoji}") == f"Ala {unicodedata.normalize('NFC', emoji)}"
    # A joiner between letters, or tags after anything but the black flag, are only hiding places.
    assert clean_name("A\u200dB") == "AB"
    assert clean_name("\U0001f600\U000e0067x") == "\U0001f600x"


def test_lines_tabs_and_blank_letters_become_one_space() -> None:
    assert clean_name("  Ala\n\n\tMa\u2028Kota\u3164\u3164 ") == "Ala Ma Kota"
    assert clean_name("\u3164\u200b\u2800") == ""
    assert UserRef("tg", "12345", "\u3164\u200b ").name == "12345"  # nothing visible: the id stands in


def test_names_are_cut_on_cluster_boundaries_with_an_ellipsis() -> None:
    long = "x" * 100
    assert clean_name(long) == "x" * (NAME_MAX - 1) + "…"
    assert clean_title(long) == "x" * (TITLE_MAX - 1) + "…"
    families = FAMILY * 40
    cut = clean_name(families)
    assert cut == FAMILY * (NAME_MAX - 1) + "…"  # no family split in the middle
    assert len(clusters(cut)) == NAME_MAX
    exact = "y" * NAME_MAX
    assert clean_name(exact) == exact
    assert clean_name("Ala " + " " * 40 + "z" * 40).endswith("z…")


def test_walls_of_marks_are_bounded() -> None:
    zalgo = "x" + "\u0301" * 500 + "b"
    cleaned = clean_name(zalgo)
    assert cleaned == "x" + "\u0301" * 4 + "b"
    assert clean_name("\ud800Ala") == "Ala"  # a lone surrogate could not even be encoded


def test_cleaning_is_stable() -> None:
    for raw in (f"Ala{RLO}x" * 20, FAMILY * 40, "  a  b  ", "x" * 100, "Ω" * 33):
        once = clean_name(raw)
        assert clean_name(once) == once
        assert UserRef("tg", "1", once).name == once


def test_chat_titles_are_cleaned_where_they_enter() -> None:
    chat = ChatRef("tg", "-100", f"Tysiąc {RLO}klub\n" + "!" * 100)
    assert format_chars(chat.title) == [] and "\n" not in chat.title
    assert len(clusters(chat.title)) == TITLE_MAX and chat.title.startswith("Tysiąc klub !")


async def test_a_reversing_name_does_not_reach_the_table_line(harness: Harness) -> None:
    h = harness
    sneaky = UserRef("t", "900", RLO + "Eve\u2066" + "w" * 60, language="en")
    ala = make_user(1)
    group = ChatRef("t", "-55", RLO + "Cards\u200b night")
    assert not errors(await h.text(ala, "/new", chat=group))
    lobby = await h.text(sneaky, "/join", chat=group)
    assert not errors(lobby)
    shown = "\n".join(m.text for m in lobby)
    assert RLO not in shown and "\u2066" not in shown and format_chars(shown) == []
    expected = "Eve" + "w" * (NAME_MAX - 4) + "…"
    assert expected in shown
    assert not errors(await h.text(ala, "/add_ai", chat=group))
    out = await h.text(ala, "/start", chat=group)
    assert not errors(out)
    table = [m for m in out if m.kind == "table"]
    assert table and expected in table[0].text and format_chars(table[0].text) == []
    stored = await h.store.load(group.key)
    assert stored is not None and RLO not in stored.document and "\\u202e" not in stored.document.lower()
    assert expected in stored.document
