"""The help: the commands of the reader's platform, who may do what, the languages."""

from __future__ import annotations

from bot.help import help_lines
from bot.i18n import LANGUAGE_NAMES, Translator

from .words import Rendered

__all__ = ["language_list", "render_help", "rights_sentence"]


def render_help(t: Translator, platform: str = "") -> Rendered:
    """The commands of the reader's platform (`bot.help`), each line's explanation in their language."""
    lines = [t._("**1000: commands**")]
    for commands, what in help_lines(platform):
        explained = t._(what) if what else ""
        lines.append(f"{commands}: {explained}" if commands and explained else commands or explained)
    if platform != "console":  # one person at their terminal: no admins, no votes, no one else's seat
        lines.append(rights_sentence(t))
    return Rendered("\n".join(lines))


def rights_sentence(t: Translator) -> str:
    """Who may do what (`bot.handlers.rights`), the same on every platform."""
    return t._(
        "Anyone seated or a chat admin may start; the table's creator or a chat admin changes settings and "
        "ends it; a chat admin hands a seat to a computer at once, the other players by a majority vote."
    )


def language_list() -> str:
    return ", ".join(f"{code} ({name})" for code, name in LANGUAGE_NAMES.items())
