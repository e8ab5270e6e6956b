"""Actions a seat can take, as small immutable values.

Actions compare by value, so ``action in state.legal_actions(seat)`` is the legality test, and the
names of ``kind`` are those of the game record (replay-format.md).  Frequently used actions are
interned (``play_action``, ``bid_action``) because the engine is also a simulator for the computer
players and allocation is its main cost.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .cards import CARD_NAMES, Card, cards_of, mask_of


class Bid(NamedTuple):
    value: int
    kind: str = "bid"


class Pass(NamedTuple):
    kind: str = "pass"


class Blind(NamedTuple):
    """The opener's choice before seeing the hand (estonian): announce a blind game or not."""

    announce: bool
    kind: str = "blind"


class TakeTalon(NamedTuple):
    pile: int = 0
    kind: str = "take_talon"


class SellTalon(NamedTuple):
    """Offer the talon for sale instead of taking it (option ``sell_talon``)."""

    kind: str = "sell"


class Discard(NamedTuple):
    cards: tuple[Card, ...]
    kind: str = "discard"


class Give(NamedTuple):
    """One card to each other player of the deal: ``((seat, card), ...)`` in seat order."""

    cards: tuple[tuple[int, Card], ...]
    kind: str = "give"


class Contract(NamedTuple):
    value: int
    kind: str = "contract"


class Bomb(NamedTuple):
    kind: str = "bomb"


class Concede(NamedTuple):
    kind: str = "concede"


class Crawl(NamedTuple):
    kind: str = "crawl"


class Play(NamedTuple):
    card: Card
    declare: bool = False
    kind: str = "play"


Action = (
    Bid | Pass | Blind | TakeTalon | SellTalon | Discard | Give | Contract | Bomb | Concede | Crawl | Play
)

PASS = Pass()
BOMB = Bomb()
CONCEDE = Concede()
CRAWL = Crawl()
SELL = SellTalon()
BLIND_YES = Blind(True)
BLIND_NO = Blind(False)
TAKE_PILE = (TakeTalon(0), TakeTalon(1))
PLAYS = tuple(Play(c) for c in range(24))
PLAYS_DECLARING = tuple(Play(c, True) for c in range(24))
_BIDS: dict[int, Bid] = {}
_CONTRACTS: dict[int, Contract] = {}


def bid_action(value: int) -> Bid:
    b = _BIDS.get(value)
    if b is None:
        b = _BIDS.setdefault(value, Bid(value))
    return b


def contract_action(value: int) -> Contract:
    c = _CONTRACTS.get(value)
    if c is None:
        c = _CONTRACTS.setdefault(value, Contract(value))
    return c


def give_action(cards: dict[int, Card]) -> Give:
    return Give(tuple(sorted(cards.items())))


def discard_action(cards: list[Card] | tuple[Card, ...]) -> Discard:
    return Discard(tuple(cards_of(mask_of(cards))))


def to_record(action: Action) -> dict[str, Any]:
    """The action as a record entry without the seat (replay-format.md)."""
    match action:
        case Bid(value) | Contract(value):
            return {"action": action.kind, "value": value}
        case Play(card, declare):
            out: dict[str, Any] = {"action": "play", "card": CARD_NAMES[card]}
            if declare:
                out["declare"] = True
            return out
        case Give(cards):
            return {"action": "give", "cards": {str(s): CARD_NAMES[c] for s, c in cards}}
        case Discard(cards):
            return {"action": "discard", "cards": [CARD_NAMES[c] for c in cards]}
        case TakeTalon(pile):
            return {"action": "take_talon", "pile": pile}
        case Blind(announce):
            return {"action": "blind", "announce": announce}
        case _:
            return {"action": action.kind}
