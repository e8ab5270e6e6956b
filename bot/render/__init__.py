"""Text of every message, in the markup of `bot.markup` and the reader's language.

Renderers for a group take a `PublicTableView` (no hands in it); the hand renderer takes the seat's own
`SeatView`. Renderers return text (and buttons where there are any); the service decides audiences,
keys and when to send. Names coming from users are escaped here.

One module per kind of message: `lobby`, `table` (the group's), `hand` (a player's, with the buttons of
their moves), `stats`, `help`, `errors` (refusals), `headings`; `words` holds the pieces they share. The
results, the rules, the ladder and the queue have their own modules beside this package
(`bot.render_result`, `bot.render_rules`, `bot.render_ladder`, `bot.render_queue`). This package's face is
what other modules import (`from bot.render import render_hand`).
"""

from __future__ import annotations

from bot.vocabulary import give_order as give_order  # the words of moves live there; kept here for callers
from bot.vocabulary import page_start as page_start

from .errors import ERRORS, render_error
from .hand import (
    FIRST_TRICK_NOTE,
    PAGE_SIZE,
    VALUES_ON_ONE_PAGE,
    first_trick_note,
    private_notes,
    render_hand,
)
from .headings import PLAYED_ONLY, render_chat_heading, render_heading, without_played_tricks
from .help import language_list, render_help, rights_sentence
from .lobby import render_lobby
from .stats import STAT_FIELDS, render_stats, render_top
from .table import render_table
from .words import (
    LEVEL_NAMES,
    PHASE_NAMES,
    TRICK_TAKEN,
    Payload,
    Rendered,
    Rows,
    Trick,
    escape_code,
    hand_order,
    level_name,
    seat_name,
    seat_names,
    trick_lines,
    trick_text,
)

__all__ = [
    "ERRORS",
    "FIRST_TRICK_NOTE",
    "LEVEL_NAMES",
    "PAGE_SIZE",
    "PHASE_NAMES",
    "PLAYED_ONLY",
    "STAT_FIELDS",
    "TRICK_TAKEN",
    "VALUES_ON_ONE_PAGE",
    "Payload",
    "Rendered",
    "Rows",
    "Trick",
    "escape_code",
    "first_trick_note",
    "give_order",
    "hand_order",
    "language_list",
    "level_name",
    "page_start",
    "private_notes",
    "render_chat_heading",
    "render_error",
    "render_hand",
    "render_heading",
    "render_help",
    "render_lobby",
    "render_stats",
    "render_table",
    "render_top",
    "rights_sentence",
    "seat_name",
    "seat_names",
    "trick_lines",
    "trick_text",
    "without_played_tricks",
]
