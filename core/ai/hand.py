"""Judging a hand without search: card keep values, what to give away, and a points estimate.

The easy player decides with these alone; the medium and hard players use them to pick the candidate
exchanges worth simulating and as the other seats' exchange inside simulations.
"""

from __future__ import annotations

import math
from typing import Final

from ..cards import CARD_POINTS, MARRIAGE_MASKS, SUIT_MASKS, CardMask
from ..rules import RuleSet

_RANK_KEEP: Final = (0.0, 2.0, 6.0, 8.0, 14.0, 24.0)
"""Base keep value by rank: 9 J Q K 10 A."""


def marriage_values(rules: RuleSet) -> tuple[int, int, int, int]:
    return (
        rules.marriage_value(0),
        rules.marriage_value(1),
        rules.marriage_value(2),
        rules.marriage_value(3),
    )


def keep_value(c: int, hand: CardMask, unseen: CardMask, mvals: tuple[int, ...]) -> float:
    """How much the declarer wants to keep card ``c`` of ``hand`` (``unseen``: cards out of sight)."""
    suit = c // 6
    rank = c % 6
    suit_cards = hand & SUIT_MASKS[suit]
    v = _RANK_KEEP[rank]
    length = suit_cards.bit_count()
    if rank == 4:
        # A ten is a winner when its ace is ours or gone; otherwise it may feed the ace.
        if suit_cards >> (c + 1) & 1 or not unseen >> (c + 1) & 1:
            v += 8.0
        elif length <= 2:
            v -= 6.0
    if rank in (2, 3):
        m = MARRIAGE_MASKS[suit]
        if hand & m == m:
            v += 20.0 + mvals[suit] / 2.5
        else:
            other = 6 * suit + (5 - rank)
            # Giving away half of a marriage may complete one for the receiver.
            if unseen >> other & 1:
                v += 6.0 + mvals[suit] / 20.0
    # Length in a suit holding a marriage (future trumps) is worth keeping.
    if hand & MARRIAGE_MASKS[suit] == MARRIAGE_MASKS[suit]:
        v += 3.0
    elif length == 1 and rank < 4:
        v -= 1.5
    return v


def ranked_cards(hand: CardMask, unseen: CardMask, mvals: tuple[int, ...]) -> list[tuple[float, int]]:
    out = []
    m = hand
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        out.append((keep_value(c, hand, unseen, mvals) + CARD_POINTS[c] * 0.3, c))
    out.sort()
    return out


def choose_give(
    hand: CardMask, receivers: tuple[int, ...], unseen: CardMask, mvals: tuple[int, ...]
) -> tuple[tuple[int, int], ...]:
    """The cheapest cards to give, one per receiver, in receiver (seat) order."""
    ranked = ranked_cards(hand, unseen, mvals)
    cards = [c for _, c in ranked[: len(receivers)]]
    return tuple(zip(receivers, cards, strict=True))


def give_candidates(
    hand: CardMask, receivers: tuple[int, ...], unseen: CardMask, mvals: tuple[int, ...], limit: int
) -> list[tuple[tuple[int, int], ...]]:
    """A few plausible gives (sets of cards from the cheapest, each with the cheaper card first)."""
    ranked = [c for _, c in ranked_cards(hand, unseen, mvals)]
    k = len(receivers)
    pool = ranked[: min(len(ranked), k + 3)]
    sets: list[tuple[int, ...]] = []

    def rec(start: int, chosen: list[int]) -> None:
        if len(sets) >= limit * 3:
            return
        if len(chosen) == k:
            sets.append(tuple(chosen))
            return
        for i in range(start, len(pool)):
            chosen.append(pool[i])
            rec(i + 1, chosen)
            chosen.pop()

    rec(0, [])
    sets.sort(key=lambda cs: sum(ranked.index(c) for c in cs))
    out: list[tuple[tuple[int, int], ...]] = []
    for cs in sets[:limit]:
        out.append(tuple(zip(receivers, cs, strict=True)))
    return out


def choose_discard(
    hand: CardMask, unseen: CardMask, mvals: tuple[int, ...], count: int = 2
) -> tuple[int, ...]:
    ranked = ranked_cards(hand, unseen, mvals)
    return tuple(sorted(c for _, c in ranked[:count]))


def marriage_sum(hand: CardMask, mvals: tuple[int, ...]) -> int:
    return sum(mvals[s] for s in range(4) if hand & MARRIAGE_MASKS[s] == MARRIAGE_MASKS[s])


def estimate_points(hand: CardMask, mvals: tuple[int, ...], talon_cards: int, unseen_count: int) -> float:
    """Expected deal points of a declarer with ``hand`` who will still get ``talon_cards`` unknown cards.

    A hand-made formula in the spirit of players' rules of thumb: card points held, sure winners
    (aces, protected tens), marriages, and what the talon adds on average.
    """
    pts = 0.0
    for s in range(4):
        cards = hand & SUIT_MASKS[s]
        if not cards:
            continue
        ace = cards >> (6 * s + 5) & 1
        ten = cards >> (6 * s + 4) & 1
        king = cards >> (6 * s + 3) & 1
        length = cards.bit_count()
        for c in range(6 * s, 6 * s + 6):
            if cards >> c & 1:
                pts += CARD_POINTS[c]
        if ace:
            pts += 9.0
            if ten:
                pts += 8.0
                if king and length >= 4:
                    pts += 4.0
        elif ten and length >= 3:
            pts += 3.0
    ms = sorted((mvals[s] for s in range(4) if hand & MARRIAGE_MASKS[s] == MARRIAGE_MASKS[s]), reverse=True)
    for i, v in enumerate(ms):
        pts += v * (0.85 if i == 0 else 0.65)
        pts += 6.0
    if talon_cards:
        pts += talon_cards * 6.5
        # The talon may complete a marriage.
        if unseen_count:
            p = min(1.0, talon_cards / unseen_count)
            for s in range(4):
                m = hand & MARRIAGE_MASKS[s]
                if m and m != MARRIAGE_MASKS[s]:
                    pts += p * mvals[s] * 0.6
    return pts


def p_make(expected: float, contract: int, spread: float = 42.0) -> float:
    """Chance that deal points reach ``contract`` when ``expected`` is their mean (normal model).

    The spread is what playouts show for a hand before the talon (about 45 points).
    """
    return 0.5 * (1.0 + math.erf((expected - contract + 2.5) / (spread * math.sqrt(2.0))))


AFTER_EXCHANGE_BIAS: Final = 20.0
""":func:`estimate_points` of a hand after the exchange runs this much above what playouts make."""
AFTER_EXCHANGE_SPREAD: Final = 34.0


def p_make_after(expected: float, contract: int) -> float:
    """:func:`p_make` for a hand after the exchange (``expected`` from ``estimate_points(.., 0, ..)``)."""
    return p_make(expected - AFTER_EXCHANGE_BIAS, contract, AFTER_EXCHANGE_SPREAD)


def raise_for(expected_after: float, contract: int, top: int, step: int) -> int:
    """The contract a declarer fixes after the exchange by rule of thumb: likely made (about 60%)."""
    target = int(expected_after - AFTER_EXCHANGE_BIAS - 9) // step * step
    return max(contract, min(target, top))
