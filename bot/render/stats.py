"""A player's statistics and the top of the ratings."""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Translator
from bot.markup import escape

from .words import Rendered

__all__ = ["STAT_FIELDS", "render_stats", "render_top"]


STAT_FIELDS = ("games", "wins", "declared", "made", "score_sum", "marriages")


def render_stats(t: Translator, name: str, stats: dict[str, float], rating: float | None) -> Rendered:
    games = int(stats.get("games", 0))
    lines = [t._("**Statistics: {name}**").format(name=escape(name))]
    if not games:
        lines.append(t._("No finished games yet."))
    else:
        lines.append(t._("Games: {games} · wins: {wins}").format(games=games, wins=int(stats.get("wins", 0))))
        lines.append(
            t._("Deals declared: {declared} · contracts made: {made}").format(
                declared=int(stats.get("declared", 0)), made=int(stats.get("made", 0))
            )
        )
        average = stats.get("score_sum", 0.0) / games
        lines.append(t._("Average final score: {value}").format(value=round(average)))
        lines.append(t._("Marriages declared: {n}").format(n=int(stats.get("marriages", 0))))
    if rating is not None:
        lines.append(t._("Rating: {value}").format(value=round(rating)))
    return Rendered("\n".join(lines))


def render_top(t: Translator, rows: Sequence[tuple[str, float]]) -> Rendered:
    lines = [t._("**Top players**")]
    if not rows:
        lines.append(t._("Nobody is rated yet: ratings come from games with two or more people."))
    for i, (name, rating) in enumerate(rows):
        lines.append(f"{i + 1}. {escape(name)} · {round(rating)}")
    return Rendered("\n".join(lines))
