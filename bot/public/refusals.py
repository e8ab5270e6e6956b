"""The group commands a public table refuses, and what the refusal says.

A public table has no group, no admins and no creator in charge: its seats come from the queue and its
settings from the match. Opening, joining, starting, computers in the lobby, settings, kicking, ending
(which would end strangers' game) and "play again" (which would seat the same strangers again without
asking them) are refused before any handler runs; `/leave` gives one's own seat to a computer.
"""

from __future__ import annotations

from typing import Final

from bot.i18n import Translator

__all__ = ["PUBLIC_REFUSED", "refusal_text"]

PUBLIC_REFUSED: Final = frozenset(
    {"new", "join", "add_ai", "remove_ai", "start", "set", "kick", "end", "again", "title"}
)


def refusal_text(t: Translator) -> str:
    return t._(
        "This is a public table: nobody runs it, so this command is not available here. "
        "/leave gives your seat to a computer."
    )
