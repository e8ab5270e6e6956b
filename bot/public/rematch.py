"""A finished public game's offer to play again with the same people: its deadline, its words and
buttons, and how the web page shows it (`rematch_state`). What a press of its buttons does and what the
deadline decides is `bot.public.again`, where the whole story of Play again at a public table is told.

This module knows no `Context` and no `Service`: the service asks it for the deadline (`offer_turn`) and
calls its `Rematch`; the fan-out of a final sheet to the seated people adds its line (`bot.public.fanout`).
"""

from __future__ import annotations

from typing import Final, Protocol

from bot.commands import encode_payload, table_tag
from bot.i18n import Translator
from bot.markup import escape
from bot.model import Button, Command, Message
from bot.table import RematchDoc, TableDoc, TurnDoc

__all__ = [
    "CHAT_MARKS",
    "DECLINE",
    "PAGE_MARKS",
    "REMATCH_SECONDS",
    "STATUS_KEY",
    "Rematch",
    "offer_turn",
    "rematch_buttons",
    "rematch_line",
    "rematch_state",
    "status_text",
]

REMATCH_SECONDS: Final = 60.0
"""How long after a public game's end its people may agree to play again."""
DECLINE: Final = "no"
"""The argument of `again` that says No thanks."""
STATUS_KEY: Final = "rematch"


class Rematch(Protocol):
    """What `Service` calls for a public table's `again` and for the offer's deadline."""

    async def handle(self, command: Command, table_id: str) -> list[Message]: ...

    async def due(self, table_id: str, token: str, now: float) -> list[Message]: ...


def offer_turn(doc: TableDoc, now: float) -> TurnDoc | None:
    """The deadline a finished public table needs: its offer's, opened at a won game's end; None once
    decided, or for a game that was not won (everyone gone) or any other table."""
    if doc.platform != "pub" or doc.status != "finished":  # `bot.public.fanout.PUBLIC_PLATFORM`, above
        return None
    if doc.rematch is None:
        if doc.ended != "won" or doc.game is None or not any(s.human for s in doc.seats):
            return None
        doc.rematch = RematchDoc(deadline=now + REMATCH_SECONDS)
    if doc.rematch.closed:
        return None
    return TurnDoc(kind="rematch", token=f"{doc.serial}.R", deadline=doc.rematch.deadline)


def offer_text(t: Translator) -> str:
    return t._(
        "**Play again** with the same people? The new game starts when everyone agrees, within a minute; "
        "the seat of anyone who does not goes to a computer."
    )


def rematch_line(t: Translator) -> str:
    return "🔁 " + offer_text(t)


def rematch_buttons(
    t: Translator, version: int, table_id: str, serial: str
) -> tuple[tuple[Button, ...], ...]:
    tag = table_tag(serial)
    return (
        (
            Button(t._("Play again"), encode_payload("again", (), version, table_id, tag)),
            Button(t._("No thanks"), encode_payload("again", (DECLINE,), version, table_id, tag)),
        ),
    )


CHAT_MARKS: Final = ("✅", "❌", "⏳")
PAGE_MARKS: Final = ("✓", "✗", "…")
"""The web page's marks: characters every system font has (a machine without an emoji font draws ✅ as
an empty box, as issue 25 saw ⏱ and 🔎 drawn)."""


def answers(doc: TableDoc, marks: tuple[str, str, str] = CHAT_MARKS) -> list[tuple[str, str]]:
    """(display name, mark) of each person seated at the finished table: yes, no, not yet."""
    offer = doc.rematch
    assert offer is not None
    out = []
    for seat in doc.seats:
        if not seat.human or seat.user is None:
            continue
        mark = (
            marks[0] if seat.user in offer.accepted else marks[1] if seat.user in offer.declined else marks[2]
        )
        out.append((seat.name, mark))
    return out


def rematch_state(doc: TableDoc, user_key: str, t: Translator, now: float) -> dict[str, object] | None:
    """The offer as the web page shows it to `user_key` (None: no offer at this table)."""
    offer = doc.rematch
    if offer is None or doc.seat_of(user_key) is None:
        return None
    answer = "yes" if user_key in offer.accepted else "no" if user_key in offer.declined else None
    state = ("started" if offer.next is not None else "lapsed") if offer.closed else "open"
    text = {
        "open": offer_text(t),
        "started": t._("The new game has started below."),
        "lapsed": t._("No new game: nobody agreed in time."),
    }[state]
    return {
        "state": state,
        "text": text,
        "seconds_left": max(0, round(offer.deadline - now)) if state == "open" else 0,
        "people": [{"name": name, "mark": mark} for name, mark in answers(doc, PAGE_MARKS)],
        "answer": answer,
        "labels": {"yes": t._("Play again"), "no": t._("No thanks")},
        "next": offer.next,
    }


def status_text(doc: TableDoc, t: Translator, head: str) -> str:
    people = " · ".join(f"{mark} {escape(name)}" for name, mark in answers(doc))
    return f"{head}\n{people}"
