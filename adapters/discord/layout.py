"""Custom ids and the arrangement of buttons within Discord's limits.

Custom ids (at most 100 characters, unique within a message):

    t|<payload>[|<n>]     a service button: the payload of `bot.commands` (code, arguments, table version,
                          table id); `n` only tells apart two buttons with the same payload
    h|<table id>          "My hand": the hand of the presser at that table (no version: never stale)
    m|1, m|0              switch the presser's hand delivery to direct messages, or back to ephemeral
    l|web                 (not sent: a link button has a URL instead) the web table's Open table link

A message holds at most 5 rows of 5 buttons. The service draws rows of its own width (4 cards a row);
`pack` keeps its rows where they fit and reflows them where they do not, and keeps the adapter's own
buttons (My hand, the DM switch) last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "HAND_TEMPLATE",
    "MAX_PER_ROW",
    "MAX_ROWS",
    "MODE_TEMPLATE",
    "PAYLOAD_TEMPLATE",
    "Key",
    "hand_id",
    "mode_id",
    "pack",
    "payload_id",
]

MAX_ROWS: Final = 5
MAX_PER_ROW: Final = 5
MAX_LABEL: Final = 80

PAYLOAD_TEMPLATE: Final = r"t\|(?P<payload>[^|]{1,64})(?:\|(?P<n>\d{1,2}))?"
HAND_TEMPLATE: Final = r"h\|(?P<table>[a-z][a-z0-9]{0,9}:[A-Za-z0-9_.:@-]{1,40})"
MODE_TEMPLATE: Final = r"m\|(?P<on>[01])"

Style = Literal["primary", "secondary", "success"]


@dataclass(frozen=True, slots=True)
class Key:
    """One button as Discord shows it."""

    label: str
    custom_id: str
    style: Style = "secondary"
    url: str | None = None
    """A link button (the web table's Open table): opens `url`, sends nothing to the bot."""


def payload_id(payload: str, n: int = 0) -> str:
    return f"t|{payload}" if n == 0 else f"t|{payload}|{n}"


def hand_id(table_id: str) -> str:
    return f"h|{table_id}"


def mode_id(dm: bool) -> str:
    return f"m|{int(dm)}"


def _label(text: str) -> str:
    text = text.strip() or "·"
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _unique(rows: Sequence[Sequence[Key]]) -> list[list[Key]]:
    """Equal custom ids (the service may draw one payload twice) get a distinguishing suffix."""
    seen: dict[str, int] = {}
    out: list[list[Key]] = []
    for row in rows:
        new_row = []
        for key in row:
            n = seen.get(key.custom_id, 0)
            seen[key.custom_id] = n + 1
            custom_id = key.custom_id if n == 0 else f"{key.custom_id}|{n}"
            new_row.append(Key(_label(key.label), custom_id, key.style, key.url))
        out.append(new_row)
    return out


def pack(rows: Sequence[Sequence[Key]], extra: Sequence[Key] = ()) -> list[list[Key]]:
    """At most 5 rows of at most 5 buttons: the service's rows, then `extra` in a row of their own.

    Rows wider than 5 are split; when that makes too many rows, every button is reflowed 5 a row; the
    extras then share the last row if there is room. Buttons beyond 25 are dropped from the end of the
    service's buttons (never the extras), which the service's own layouts never need.
    """
    body = _unique([row for row in rows if row])
    split = [row[i : i + MAX_PER_ROW] for row in body for i in range(0, len(row), MAX_PER_ROW)]
    room = MAX_ROWS - (1 if extra else 0)
    if len(split) > room:
        flat = [key for row in split for key in row]
        limit = room * MAX_PER_ROW
        if extra:
            # Let the extras share the last row when that saves a card.
            limit = MAX_ROWS * MAX_PER_ROW - len(extra)
        flat = flat[:limit]
        split = [flat[i : i + MAX_PER_ROW] for i in range(0, len(flat), MAX_PER_ROW)]
    out = [list(row) for row in split]
    if extra:
        tail = [Key(_label(k.label), k.custom_id, k.style, k.url) for k in extra[:MAX_PER_ROW]]
        if len(out) < MAX_ROWS:
            out.append(tail)
        else:
            last = out[-1]
            free = MAX_PER_ROW - len(last)
            last.extend(tail[:free])
    return out
