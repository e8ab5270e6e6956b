"""Whole deals from the bidding on, simulated: talon, exchange and play, for judging bids and exchanges.

A bid is worth what the deal it leads to is worth, so the medium and hard players estimate it by
dealing the unseen cards (consistently with the seat's knowledge), letting the would-be declarer take
the talon and give cards the way the heuristics of :mod:`core.ai.hand` would, and playing out.
"""

from __future__ import annotations

import random

from ..cards import CARD_POINTS, FULL_DECK, CardMask
from ..deal import successor_seats
from ..rules import RuleSet
from ..view import SeatView
from .hand import choose_discard, choose_give, estimate_points, marriage_sum, raise_for
from .sim import PlayRules, Sim, new_sim


def max_bid_for(rules: RuleSet, players: int, hand: CardMask, blind: bool = False) -> int:
    """The highest bid or contract a hand allows (as :meth:`core.deal.DealState.max_bid`)."""
    mvals = tuple(rules.marriage_value(s) for s in range(4))
    limit = (
        120 + sum(rules.marriage_values.values()) + (rules.ace_marriage_value if rules.ace_marriage else 0)
    )
    step = rules.bid_step
    if blind:
        top = min(limit, rules.blind_max_bid)
        return top - top % step
    value = marriage_sum(hand, mvals)
    if rules.ace_marriage and hand & _ACES == _ACES:
        value += rules.ace_marriage_value
    if rules.marriage_needed_above is not None and value == 0:
        limit = min(limit, rules.marriage_needed_above)
    if rules.cap_by_marriages:
        limit = min(limit, 120 + value)
    cap = rules.cap_for(players)
    if cap is not None:
        limit = min(limit, cap)
    return limit - limit % step


_ACES = sum(1 << (6 * s + 5) for s in range(4))


def points(mask: CardMask) -> int:
    total = 0
    while mask:
        low = mask & -mask
        total += CARD_POINTS[low.bit_length() - 1]
        mask ^= low
    return total


def _bits(mask: CardMask) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class DealSim:
    """Fixed facts of the deal for simulations from a view: seats, rules, marriage values."""

    __slots__ = ("active", "mvals", "players", "pr", "rules", "succ", "two_piles")

    def __init__(self, view: SeatView) -> None:
        self.rules = view.rules
        self.players = view.players
        self.active = view.active
        self.succ = successor_seats(view.players, view.active)
        self.pr = PlayRules(view.rules)
        self.mvals = self.pr.mvals
        self.two_piles = view.players == 2 and view.rules.two_musiki

    def receivers(self, declarer: int) -> tuple[int, ...]:
        return tuple(sorted(s for s in self.active if s != declarer))

    def start(
        self,
        hands: list[CardMask],
        declarer: int,
        contract: int,
        talon: CardMask,
        rng: random.Random,
        *,
        blind: bool = False,
        talon_order: list[int] | None = None,
    ) -> Sim:
        """The deal at the first lead after ``declarer`` took ``talon`` and exchanged by heuristic.

        ``hands`` is changed in place.  For two musiki ``talon`` holds both piles: a random pair of
        them is the pile taken (the declarer cannot see them when choosing).
        """
        piles_points = 0
        if blind:
            order = [self.succ[declarer]]
            while len(order) < len(self.active):
                order.append(self.succ[order[-1]])
            order[-1] = declarer
            cards = talon_order if talon_order is not None else _bits(talon)
            if talon_order is None:
                rng.shuffle(cards)
            for target, c in zip(order, cards, strict=True):
                hands[target] |= 1 << c
        elif self.two_piles:
            cards = _bits(talon)
            rng.shuffle(cards)
            taken = (1 << cards[0]) | (1 << cards[1])
            other = talon & ~taken
            hand = hands[declarer] | taken
            discard = choose_discard(hand, FULL_DECK & ~hand, self.mvals)
            dmask = 0
            for c in discard:
                dmask |= 1 << c
            hands[declarer] = hand & ~dmask
            piles_points = points(other | dmask)
        else:
            hand = hands[declarer] | talon
            give = choose_give(hand, self.receivers(declarer), FULL_DECK & ~hand, self.mvals)
            for target, c in give:
                hand &= ~(1 << c)
                hands[target] |= 1 << c
            hands[declarer] = hand
        if self.rules.contract_step and not blind:
            top = max_bid_for(self.rules, self.players, hands[declarer])
            e = estimate_points(hands[declarer], self.mvals, 0, 16)
            contract = raise_for(e, contract, top, self.rules.bid_step)
        return new_sim(self.pr, self.active, self.succ, declarer, contract, hands, piles_points=piles_points)

    def after_give(self, hands: list[CardMask], declarer: int, contract: int, piles_points: int = 0) -> Sim:
        return new_sim(self.pr, self.active, self.succ, declarer, contract, hands, piles_points=piles_points)
