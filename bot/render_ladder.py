"""The public ladder as players see it: their rating per preset with its recent changes (`/stats`) and
the top of a preset's ladder (`/top public <preset>`). Display names only: a ladder row's player key
(`tg:123`) is never shown. A provisional rating (`bot.ladder.PROVISIONAL_RD`) carries a '?'."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from bot.i18n import Translator
from bot.ladder import DEFAULT_RATING, Rating
from bot.markup import escape
from bot.matchmaking.ladder_store import HistoryPoint, Standing
from bot.render import Rendered

__all__ = ["HISTORY_SHOWN", "rating_text", "render_ladder_stats", "render_public_top"]

HISTORY_SHOWN: Final = 10
"""How many of the latest rating changes `/stats` lists per preset."""


def rating_text(rating: Rating) -> str:
    return f"{round(rating.rating)}{'?' if rating.provisional else ''}"


def _changes(points: Sequence[HistoryPoint]) -> list[str]:
    """Each game's change, oldest first, from the point before it (the first from a newcomer's rating)."""
    out = []
    before = DEFAULT_RATING.rating
    for p in points:
        delta = round(p.rating - before)
        out.append(f"+{delta}" if delta > 0 else "±0" if delta == 0 else f"−{-delta}")
        before = p.rating
    return out


def render_ladder_stats(t: Translator, rows: Sequence[tuple[str, Rating, Sequence[HistoryPoint]]]) -> str:
    """The lines `/stats` adds: one per preset the player is rated in, and its last changes."""
    if not rows:
        return ""
    lines = [t._("**Public ladder**")]
    for preset, rating, points in rows:
        games = t._("games: {n}").format(n=rating.games)
        line = f"{preset}: {rating_text(rating)} ({games})"
        if rating.provisional:
            line += " · " + t._("provisional")
        lines.append(line)
        changes = _changes(points)[-HISTORY_SHOWN:]
        if changes:
            lines.append("  " + t._("Last changes: {changes}").format(changes=", ".join(changes)))
    return "\n".join(lines)


def render_public_top(t: Translator, preset: str, rows: Sequence[Standing]) -> Rendered:
    lines = [t._("**Public ladder: {preset}**").format(preset=escape(preset))]
    if not rows:
        lines.append(t._("Nobody is established yet: a rating counts here after a few public games."))
    for i, row in enumerate(rows):
        lines.append(f"{i + 1}. {escape(row.name)} · {round(row.rating.rating)}")
    return Rendered("\n".join(lines))
