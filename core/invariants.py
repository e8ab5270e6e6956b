"""Invariants every reachable state keeps, checked by the fuzz run and the property tests.

They restate the rules' bookkeeping independently of how the engine implements it: the 24 cards are
all somewhere exactly once, hand sizes agree with the number of tricks played, and the points of a
finished deal add up.
"""

from __future__ import annotations

from .cards import CARD_POINTS, DECK_SIZE, FULL_DECK, TOTAL_CARD_POINTS, mask_of
from .deal import DealState, Phase
from .game import GameState


class InvariantError(AssertionError):
    """A state that the rules cannot produce."""


def card_locations(deal: DealState) -> list[int]:
    """Every place a card can be in a deal, as masks."""
    places = [*deal.hands, mask_of(deal.talon), mask_of(deal.trick), *deal.won]
    if deal.piles is not None:
        places.append(mask_of(deal.discard))
        places.append(
            mask_of(deal.piles[1 - deal.pile]) if deal.pile >= 0 else mask_of(deal.piles[0] + deal.piles[1])
        )
    return places


def check_deal(deal: DealState) -> None:
    places = card_locations(deal)
    union = 0
    total = 0
    for m in places:
        union |= m
        total += m.bit_count()
    if union != FULL_DECK or total != DECK_SIZE:
        raise InvariantError(f"cards not conserved: {total} cards in {union.bit_count()} distinct")
    if deal.phase == Phase.PLAY:
        sizes = {deal.hands[s].bit_count() + (1 if s in deal.trick_seats else 0) for s in deal.active}
        if len(sizes) != 1:
            raise InvariantError(f"hand sizes differ during play: {sorted(sizes)}")
        trick_points = sum(CARD_POINTS[c] for m in deal.won for c in range(DECK_SIZE) if m >> c & 1)
        marriages = sum(deal.taken) - trick_points
        if marriages < 0:
            raise InvariantError("taken points below the card points of won tricks")
    if deal.sitting_out is not None and deal.hands[deal.sitting_out]:
        raise InvariantError("the dealer sitting out holds cards")


def check_finished_deal(before: GameState, after: GameState) -> None:
    """After a deal was scored: card points add up to 120 and scores agree with totals."""
    result = after.results[-1]
    if result.ending == "played":
        card_points = sum(result.points) - sum(
            _marriage_points(before, seat, suits) for seat, suits in enumerate(result.marriages)
        )
        if card_points != TOTAL_CARD_POINTS:
            raise InvariantError(f"card points of a played deal add up to {card_points}, not 120")
    for s, score in enumerate(result.scores):
        if before.totals[s] + score != result.totals[s]:
            raise InvariantError("a score does not match the change of the total")
    if after.totals != result.totals:
        raise InvariantError("match totals differ from the last deal's totals")


def _marriage_points(state: GameState, seat: int, suits: tuple[str, ...]) -> int:
    rules = state.rules
    return sum(rules.ace_marriage_value if s == "A" else rules.marriage_value("CSHD".index(s)) for s in suits)
