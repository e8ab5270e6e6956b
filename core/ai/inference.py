"""What the cards played say about the cards held: a likelihood for weighting sampled deals (hard).

Voids are certain and the sampler already respects them; this is the softer kind of evidence.  Each
sampled deal is replayed from the first lead, and at every card another seat played we ask what the
playout policy would have played there, judging the others only by what that seat could see.  A
deal in which the seats' real choices look natural gets more weight than one in which they look like
mistakes: a defender who did not take a trick cheaply probably could not.
"""

from __future__ import annotations

from typing import Final

from ..cards import SUIT_MASKS, CardMask
from ..deal import successor_seats
from ..view import SeatView
from .rollout import heuristic_move
from .sim import DECLARE, PlayRules, new_sim

_VOID_CARDS: Final = tuple(sum(SUIT_MASKS[s] for s in range(4) if v >> s & 1) for v in range(16))


class PlayModel:
    """The deal's played cards in order, ready to be replayed on sampled hands."""

    __slots__ = ("active", "declarer", "epsilon", "me", "moves", "pr", "succ")

    def __init__(self, view: SeatView, epsilon: float) -> None:
        self.epsilon = epsilon
        self.me = view.seat
        self.declarer = view.declarer
        self.active = view.active
        self.succ = successor_seats(view.players, view.active)
        self.pr = PlayRules(view.rules)
        moves: list[tuple[int, int, bool]] = []
        trump = -1
        tricks = list(view.trick_history)
        if view.trick and not view.crawl:
            tricks.append((view.trick, view.trick_seats, view.trump))
        usable = not view.crawled and not view.rules.must_beat and not view.rules.ace_marriage
        for cards, seats, t in tricks:
            for j, (c, s) in enumerate(zip(cards, seats, strict=True)):
                declare = j == 0 and t >= 0 and t != trump and c // 6 == t and c % 6 in (2, 3)
                moves.append((s, c, declare))
            trump = t
        self.moves = moves if usable else []

    @property
    def useful(self) -> bool:
        return any(s != self.me for s, _, _ in self.moves)

    def weight(self, hands_now: list[CardMask]) -> float:
        """Likelihood (up to a constant) of the other seats' plays, given a sampled deal."""
        hands = hands_now.copy()
        for s, c, _ in self.moves:
            hands[s] |= 1 << c
        sim = new_sim(self.pr, self.active, self.succ, self.declarer, 0, hands)
        voids = [0] * len(hands)
        w = 1.0
        eps = self.epsilon
        me = self.me
        for s, c, declare in self.moves:
            if sim.to_act != s or not hands[s] >> c & 1:
                return w
            if s != me:
                unknown = 0
                for h in hands:
                    unknown |= h
                unknown &= ~hands[s]
                seen = [unknown & ~_VOID_CARDS[v] for v in voids]
                if heuristic_move(sim, seen) & 31 != c:
                    w *= eps
            if sim.trick:
                led = sim.trick[0] // 6
                if c // 6 != led:
                    voids[s] |= 1 << led
                    if sim.trump >= 0 and c // 6 != sim.trump and led != sim.trump:
                        voids[s] |= 1 << sim.trump
            sim.play(c | DECLARE if declare else c)
        return w
