"""Translations: gettext catalogs (`bot/locales/<lang>.po`) read at run time, and card names per language.

The `.po` files are the only source: they are compiled in memory on first use (babel's `read_po` and
`write_mo`), so no binary `.mo` is committed or needed. Messages are marked in the code with `t._(...)`,
`t.ngettext(...)` or, where a message is chosen before its reader is known, `N_(...)`; `pybabel extract`
collects them (see `bot/locales/README.md`).

Card ranks render with the reader's letters (Polish `D` for the queen, Russian `Д`...) and suits as the
symbols every deck prints; commands accept both the reader's letters and the international notation.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Final

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from core.cards import RANK_NAMES, SUIT_LETTERS, SUIT_SYMBOLS, Card, CardMask, cards_of, parse_card

__all__ = [
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "N_",
    "Translator",
    "negotiate",
    "parse_card_in",
    "translator",
]

LANGUAGES: Final = ("en", "pl", "ru", "uk", "et", "tr")
LANGUAGE_NAMES: Final = {
    "en": "English",
    "pl": "Polski",
    "ru": "Русский",
    "uk": "Українська",
    "et": "Eesti",
    "tr": "Türkçe",
}

RANK_LETTERS: Final[dict[str, tuple[str, ...]]] = {
    "en": ("9", "J", "Q", "K", "10", "A"),
    "pl": ("9", "W", "D", "K", "10", "A"),
    "ru": ("9", "В", "Д", "К", "10", "Т"),
    "uk": ("9", "В", "Д", "К", "10", "Т"),
    "et": ("9", "P", "E", "K", "10", "Ä"),
    "tr": ("9", "B", "K", "P", "10", "A"),
}
"""Rank letters shown to readers of each language (9, J, Q, K, 10, A)."""

_EXTRA_ALIASES: Final[dict[str, dict[str, int]]] = {
    "et": {"S": 1},  # soldat, the other name of the jack
    "tr": {"V": 1, "O": 1},  # vale, oğlan
}

_ALIAS_CACHE: Final[dict[str, dict[str, int]]] = {
    lang: {**{letter: rank for rank, letter in enumerate(letters) if letter not in ("9", "10")},
           **_EXTRA_ALIASES.get(lang, {})}
    for lang, letters in RANK_LETTERS.items()
}  # fmt: skip


def N_(message: str) -> str:
    """Mark a message for extraction without translating it (it is translated where it is shown)."""
    return message


def negotiate(tag: str | None) -> str | None:
    """The supported language for a platform language tag (`pl-PL` -> `pl`), or None."""
    if not tag:
        return None
    base = tag.replace("_", "-").split("-")[0].lower()
    base = {"ua": "uk", "ee": "et"}.get(base, base)
    return base if base in LANGUAGES else None


def parse_card_in(token: str, languages: Iterable[str]) -> Card:
    """Parse a card typed by a reader of `languages` (their rank letters first, then the notation).

    Raises `core.cards.CardParseError`.
    """
    text = token.strip()
    if len(text) >= 2:
        rank_text = text[:-1].strip().upper()
        for lang in languages:
            rank = _ALIAS_CACHE.get(lang, {}).get(rank_text)
            if rank is not None:
                return parse_card(RANK_NAMES[rank] + text[-1])
    return parse_card(text)


@cache
def _translations(lang: str) -> Translations:
    source = resources.files("bot.locales").joinpath(f"{lang}.po")
    with source.open("rb") as fh:
        catalog = read_po(fh, locale=lang, domain="messages")
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return Translations(buf, domain="messages")


class Translator:
    """Everything language-specific a renderer needs: messages, card and suit names."""

    __slots__ = ("_gettext", "_ngettext", "card_labels", "lang")

    def __init__(self, lang: str) -> None:
        if lang not in LANGUAGES:
            raise ValueError(f"unsupported language {lang!r}")
        self.lang = lang
        tr = _translations(lang)
        self._gettext = tr.gettext
        self._ngettext = tr.ngettext
        letters = RANK_LETTERS[lang]
        self.card_labels: tuple[str, ...] = tuple(letters[c % 6] + SUIT_SYMBOLS[c // 6] for c in range(24))

    def _(self, message: str) -> str:
        return self._gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self._ngettext(singular, plural, n)

    def card(self, c: Card) -> str:
        return self.card_labels[c]

    def cards(self, cards: Iterable[Card] | CardMask) -> str:
        seq = cards_of(cards) if isinstance(cards, int) else tuple(cards)
        return " ".join(self.card_labels[c] for c in seq)

    def suit(self, suit: int) -> str:
        """A suit's symbol and name: `♥ hearts`."""
        return f"{SUIT_SYMBOLS[suit]} {self._gettext(SUIT_NAMES[suit])}"

    def preset(self, name: str) -> str:
        """A rule preset's name for the reader (an unknown one as it is)."""
        known = PRESET_NAMES.get(name)
        return self._gettext(known) if known is not None else name

    def marriage(self, letter: str) -> str:
        """A marriage by its record letter (`H`, or `A` for the ace marriage)."""
        if letter == "A":
            return self._gettext(N_("four aces"))
        return self.suit(SUIT_LETTERS.index(letter))


SUIT_NAMES: Final = (N_("clubs"), N_("spades"), N_("hearts"), N_("diamonds"))

PRESET_NAMES: Final = {"polish": N_("polish"), "estonian": N_("estonian"), "russian": N_("russian")}
"""The rule presets as shown to readers (`Polish variant`...); commands keep the identifiers."""


@cache
def translator(lang: str) -> Translator:
    """The translator for a supported language (shared: translators are immutable)."""
    return Translator(lang)
