"""First lines of private messages about a group, and the lines that show only cards already played (which
privacy checks leave out)."""

from __future__ import annotations

import re

from bot.i18n import N_, Translator, translator
from bot.markup import escape

from .words import TRICK_TAKEN

__all__ = ["PLAYED_ONLY", "render_chat_heading", "render_heading", "without_played_tricks"]


def render_heading(t: Translator, title: str) -> str:
    """The first line of a private message about a group's game: which group it belongs to."""
    return t._("🃏 Game in «{title}»").format(title=escape(title))


PLAYED_ONLY = (
    N_("Last trick: {cards} → {name}"),
    TRICK_TAKEN,
    N_("Talon taken by {name}: {cards}"),
    N_("Talon you took: {cards}"),
)
"""Lines that show only cards of tricks taken or of a finished deal's public talon (its result, told to
everyone or to the declarer)."""


def without_played_tricks(text: str, lang: str) -> str:
    """`text` without the lines that show only cards already played or shown to everyone (`PLAYED_ONLY`:
    the previous trick on a table message, tricks taken unseen, a finished deal's final trick and public
    talon on its result). Privacy checks scan the rest: once the next deal is dealt, those cards are in
    new hands, yet naming them where they were played is no leak."""
    t = translator(lang)
    patterns = [_line_pattern(t._(template)) for template in PLAYED_ONLY]
    kept = [ln for ln in text.split("\n") if not any(p.fullmatch(ln.lstrip("*_ ")) for p in patterns)]
    return "\n".join(kept)


def _line_pattern(template: str) -> re.Pattern[str]:
    """A translated template as a pattern: each `{field}` any text."""
    parts = re.split(r"\{\w+\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts))


def render_chat_heading(t: Translator, title: str) -> str:
    """The first line of a private answer to a command given in a group that has no table."""
    return t._("🃏 In «{title}»").format(title=escape(title))
