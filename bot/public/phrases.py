"""The only words strangers at a public table exchange: a few fixed phrases, translated for each reader.

No free text is relayed between people who do not know each other (no insults, no links, no contact
details to lure anyone off the table): a phrase is chosen by its id (`/say gl`) and each person reads it
in their own language. `N_` marks the texts for the catalogs; they are translated when drawn.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PHRASES", "phrase_id"]


def N_(text: str) -> str:
    """Marks a text for the translation catalogs without translating it here."""
    return text


PHRASES: Final[dict[str, str]] = {
    "gl": N_("Good luck!"),
    "wp": N_("Well played!"),
    "ty": N_("Thanks!"),
    "oops": N_("Oops!"),
}
"""Phrase id → its English text (the catalogs' msgid)."""

_ALIASES: Final = {"1": "gl", "2": "wp", "3": "ty", "4": "oops", "thanks": "ty", "luck": "gl"}


def phrase_id(arg: str) -> str | None:
    """The phrase a typed argument names (its id, its number in the list, an alias), or None."""
    word = arg.strip().lower()
    if word in PHRASES:
        return word
    return _ALIASES.get(word)
