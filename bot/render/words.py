"""Words and pieces every message of a table shares: a seat's name, a trick, the bids, a phase's name, and
what a renderer returns (`Rendered`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.i18n import N_, Translator
from bot.markup import escape
from bot.model import Button
from bot.views import HIDDEN, SeatLabel
from core.deal import Phase

__all__ = [
    "LEVEL_NAMES",
    "PHASE_NAMES",
    "TRICK_TAKEN",
    "Payload",
    "Rendered",
    "Rows",
    "Trick",
    "auction_text",
    "escape_code",
    "hand_order",
    "level_name",
    "seat_name",
    "seat_names",
    "trick_lines",
    "trick_text",
]

Payload = Callable[[str, tuple[str, ...]], str]
"""Builds a button payload for (command name, args) at the table's next version."""

Rows = tuple[tuple[Button, ...], ...]

LEVEL_NAMES = {"easy": N_("easy"), "medium": N_("medium"), "hard": N_("hard")}

PHASE_NAMES = {
    Phase.BLIND: N_("blind choice"),
    Phase.BIDDING: N_("bidding"),
    Phase.SALE: N_("talon sale"),
    Phase.TALON: N_("talon"),
    Phase.DISCARD: N_("laying down"),
    Phase.EXCHANGE: N_("giving cards"),  # as its prompt says ("give a card to Ala"), in every language
    Phase.CONTRACT: N_("contract"),
    Phase.PLAY: N_("play"),
    Phase.DONE: N_("game over"),
}


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    buttons: Rows = ()


def seat_name(t: Translator, seat: SeatLabel) -> str:
    """A seat's name for markup: escaped, with a robot for a computer and a mark for an away player."""
    name = escape(seat.name)
    if seat.computer:
        return f"{name} 🤖"
    if seat.away:
        return f"{name} 💤"
    return name


def level_name(t: Translator, level: str | None) -> str:
    return t._(LEVEL_NAMES.get(level or "", N_("medium")))


def seat_names(t: Translator, seats: Sequence[SeatLabel]) -> list[str]:
    return [seat_name(t, s) for s in seats]


def auction_text(t: Translator, names: list[str], auction: Sequence[tuple[int, int]]) -> str:
    passed = t._("pass")
    parts = [f"{names[s]} {v if v else passed}" for s, v in auction]
    return " · ".join(parts)


def trick_text(t: Translator, names: list[str], cards: Sequence[int], seats: Sequence[int]) -> str:
    parts = []
    for c, s in zip(cards, seats, strict=True):
        parts.append(f"{names[s]} {'🂠' if c == HIDDEN else t.card(c)}")
    return " · ".join(parts)


def hand_order(cards: Sequence[int]) -> list[int]:
    """Cards as a hand shows them: by suit, high to low within a suit. The card buttons follow the same
    order, so the n-th choice is where the eye finds it in the hand."""
    return sorted(cards, key=lambda c: (c // 6, -(c % 6)))


Trick = tuple[Sequence[int], Sequence[int], int]
"""A trick taken: (cards in play order, their seats, the winner)."""

TRICK_TAKEN = N_("Trick {number}: {cards} → {name}")
"""A trick that was taken and that no table message showed (several were taken in one command)."""


def trick_lines(t: Translator, names: list[str], tricks: Sequence[tuple[int, Trick]]) -> list[str]:
    """One line per (trick number, trick) taken, "Trick 7: … → Ada": tricks that were taken while nobody
    looked (computers and forced cards playing on in one command), which the table message skipped."""
    lines = []
    for number, (cards, seats, winner) in tricks:
        text = t._(TRICK_TAKEN).format(
            number=number + 1, cards=trick_text(t, names, cards, seats), name=names[winner]
        )
        lines.append(text)
    return lines


def escape_code(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`")
