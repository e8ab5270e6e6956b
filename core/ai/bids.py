"""What the bidding says about hands: a likelihood for weighting sampled deals (the hard player).

A player who passed early rarely holds a strong hand, one who bid high usually does.  The hard player
weights each sampled deal by how likely the auction it saw would have been with those hands, judged
by the rule of thumb of :func:`core.ai.hand.estimate_points` (a soft version of the easy player's
bidding), instead of treating every consistent deal as equally likely.
"""

from __future__ import annotations

import math
from typing import Final

from ..cards import CardMask, mask_of
from ..rules import Opening
from ..view import HIDDEN, SeatView
from .hand import estimate_points, p_make
from .infer import Knowledge

BID_CHANCE: Final = 0.58
SOFTNESS: Final = 0.12
FLOOR: Final = 0.02


def _logistic(x: float) -> float:
    if x < -30:
        return 0.0
    if x > 30:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


class BidModel:
    """Per view: which seats' auction calls carry information, and how to undo later card moves."""

    __slots__ = ("add", "calls", "gain", "mvals", "played", "remove", "seats")

    def __init__(self, view: SeatView, k: Knowledge) -> None:
        rules = view.rules
        self.mvals = tuple(rules.marriage_value(s) for s in range(4))
        self.gain = 2 if (view.players == 2 and rules.two_musiki) else view.talon_size
        step = rules.bid_step
        opening = max(rules.opening_bid, 120) if view.golden else rules.opening_bid
        compulsory = rules.opening == Opening.COMPULSORY
        calls: dict[int, list[tuple[int, bool]]] = {}
        running = 0
        first = True
        for seat, value in view.auction:
            if first and rules.opening == Opening.AUTOMATIC:
                running = value
                first = False
                continue
            nxt = running + step if running else opening
            if value:
                if not (compulsory and running == 0):
                    calls.setdefault(seat, []).append((value, True))
                running = value
            else:
                calls.setdefault(seat, []).append((nxt, False))
            first = False
        me = view.seat
        # Only seats whose hand at the time of bidding can be rebuilt from a sample.
        self.seats: list[tuple[int, int]] = []
        self.played: dict[int, CardMask] = {}
        self.remove: dict[int, CardMask] = {}
        self.add: dict[int, CardMask] = {}
        talon_taken = view.declarer >= 0 and view.phase not in ("bidding", "talon", "sale")
        for i, loc in enumerate(k.locs):
            if loc < 0 or loc == me or loc == view.blind_seat or loc not in calls:
                continue
            if talon_taken and loc == view.declarer:
                # The declarer's hand changed by the talon and the gives: rebuild it when the talon
                # was shown (the card given to another defender stays unknown: close enough).
                if not view.talon or len(view.talon) != view.talon_size or view.players == 2:
                    continue
                self.remove[loc] = mask_of(view.talon)
                self.add[loc] = mask_of(c for g, c in view.received if g == loc)
            elif talon_taken and view.exchanged and view.declarer != me and loc != view.declarer:
                # Another defender got an unknown card from the declarer.
                continue
            elif talon_taken and view.exchanged and view.declarer == me:
                self.remove[loc] = mask_of(c for t, c in view.given if t == loc)
            self.seats.append((i, loc))
        for cards, seats, _ in view.trick_history:
            for c, s in zip(cards, seats, strict=True):
                self.played[s] = self.played.get(s, 0) | 1 << c
        for c, s in zip(view.trick, view.trick_seats, strict=True):
            if c != HIDDEN:
                self.played[s] = self.played.get(s, 0) | 1 << c
        self.calls = calls

    @property
    def useful(self) -> bool:
        return bool(self.seats)

    def weight(self, masks: list[CardMask]) -> float:
        """Likelihood (up to a constant) of the auction given a sampled deal."""
        w = 1.0
        for i, seat in self.seats:
            hand = (masks[i] | self.played.get(seat, 0) | self.add.get(seat, 0)) & ~self.remove.get(seat, 0)
            e = estimate_points(hand, self.mvals, self.gain, 17)
            for value, bid in self.calls[seat]:
                p = _logistic((p_make(e, value) - BID_CHANCE) / SOFTNESS)
                w *= max(FLOOR, p if bid else 1.0 - p)
        return w
