"""The lobby: a table before its game starts, with its seats and the buttons to join and start."""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Translator
from bot.markup import escape
from bot.model import Button
from bot.table import ChatSettings, SeatDoc
from bot.views import SeatLabel
from core.rules import RuleSet

from .words import Payload, Rendered, Rows, level_name, seat_name

__all__ = ["render_lobby"]


def render_lobby(
    t: Translator,
    seats: Sequence[SeatDoc],
    settings: ChatSettings,
    rules: RuleSet,
    creator: str,
    payload: Payload,
) -> Rendered:
    labels = [SeatLabel.of(s) for s in seats]
    lines = [t._("**A table of 1000** · {preset}").format(preset=escape(t.preset(settings.preset)))]
    counts = ", ".join(str(n) for n in rules.player_counts)
    lines.append(t._("Players: {counts}. Seats taken: {n}.").format(counts=counts, n=len(seats)))
    for i, (seat, label) in enumerate(zip(seats, labels, strict=True)):
        extra = f" ({level_name(t, seat.level)})" if seat.kind == "ai" else ""
        lines.append(f"{i + 1}. {seat_name(t, label)}{extra}")
    lines.append(t._("Created by {name}.").format(name=escape(creator)))
    lines.append(t._("Join, add computer players, then start."))
    buttons: Rows = (
        (Button(t._("Join"), payload("join", ())), Button(t._("Leave"), payload("leave", ()))),
        (
            Button(t._("Add computer"), payload("add_ai", ())),
            Button(t._("Remove computer"), payload("remove_ai", ())),
        ),
        (Button(t._("Start"), payload("start", ())), Button(t._("Rules"), payload("rules", ()))),
    )
    return Rendered("\n".join(lines), buttons)
