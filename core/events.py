"""What happened, and who may see it.

Every event names its audience: ``None`` for everyone at the table, or the one seat allowed to see it.
A front end shows a group chat only events whose audience is ``None``; private cards (a hand, a secret
talon, a card given, a face-down crawl card) are only ever put into events addressed to one seat, so
nothing private can reach a group by construction.
"""

from __future__ import annotations

from typing import Any, NamedTuple

EVERYONE = None


class Event(NamedTuple):
    kind: str
    audience: int | None
    seat: int = -1
    value: int = 0
    cards: tuple[int, ...] = ()
    detail: Any = None

    @property
    def public(self) -> bool:
        return self.audience is None

    def visible_to(self, seat: int | None) -> bool:
        """Whether ``seat`` (``None``: an onlooker) may see this event."""
        return self.audience is None or self.audience == seat


def public_events(events: list[Event]) -> list[Event]:
    return [e for e in events if e.audience is None]


def events_for(events: list[Event], seat: int) -> list[Event]:
    return [e for e in events if e.audience is None or e.audience == seat]


# Event kinds (the ``kind`` field); the payload fields each uses are noted.
DEAL_STARTED = "deal_started"  # seat=dealer, value=deal number, cards=seats in play
HAND_DEALT = "hand_dealt"  # private: seat, cards=hand
BLIND_CHOSEN = "blind_chosen"  # seat, value=1 when announced
BID = "bid"  # seat, value, detail="automatic" for the polish opening
PASSED = "passed"  # seat
BIDDING_WON = "bidding_won"  # seat=declarer, value=bid, detail=True when forced
TALON_SHOWN = "talon_shown"  # public talon cards (or private to the declarer when secret)
TALON_TAKEN = "talon_taken"  # seat=declarer, value=pile (two musiki), cards only in the private copy
TALON_OFFERED = "talon_offered"  # seat=seller, cards=talon (shown to all for the sale)
TALON_BOUGHT = "talon_bought"  # seat=buyer, value=price
DISCARDED = "discarded"  # seat, value=count; cards only in the private copy
CARD_GIVEN = "card_given"  # seat=giver, value=receiver; cards=(card,) only in the receiver's/giver's copy
CARD_RECEIVED = "card_received"  # private: seat=receiver, cards=(card,) from the talon (blind game)
CONTRACT = "contract"  # seat=declarer, value
BOMB = "bomb"  # seat
CONCEDE = "concede"  # seat
CRAWL = "crawl"  # seat
CARD_PLAYED = "card_played"  # seat, cards=(card,) (empty in the public copy of a face-down card)
MARRIAGE = "marriage"  # seat, value=points, detail=suit letter ("A" for the ace marriage)
TRUMP = "trump"  # value=suit
CRAWL_REVEALED = "crawl_revealed"  # cards in play order, detail=seats
TRICK_TAKEN = "trick_taken"  # seat=winner, value=points, cards in play order, detail=seats
PILES_TAKEN = "piles_taken"  # two musiki: seat=last trick winner, value=points, cards
REDEAL = "redeal"  # seat=holder of four nines
DEAL_ENDED = "deal_ended"  # detail=DealResult
GAME_ENDED = "game_ended"  # detail=winner (seat, tuple of seats)


def event_to_json(event: Event) -> dict[str, Any]:
    """A JSON-friendly form, for logs and storage."""
    out: dict[str, Any] = {"kind": event.kind}
    if event.audience is not None:
        out["audience"] = event.audience
    if event.seat >= 0:
        out["seat"] = event.seat
    if event.value:
        out["value"] = event.value
    if event.cards:
        out["cards"] = list(event.cards)
    if event.detail is not None and not hasattr(event.detail, "to_json"):
        out["detail"] = event.detail
    elif event.detail is not None:
        out["detail"] = event.detail.to_json()
    return out
