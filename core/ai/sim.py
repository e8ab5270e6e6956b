"""A fast simulator of the card play of one deal, for playouts on determinized (all cards known) deals.

The engine's :class:`~core.deal.DealState` would do, but a playout only needs the play phase, and
this cut-down copy with moves as plain ints (a card, ``| DECLARE`` to call a marriage, or ``CRAWL``)
runs several times faster.  ``tests/ai/test_sim.py`` plays random positions through both and checks
that they agree on legal moves, trick winners, marriages and points.
"""

from __future__ import annotations

from typing import Final

from ..cards import ACES, CARD_POINTS, MARRIAGE_MASKS, SUIT_MASKS, CardMask, trick_winner
from ..deal import ACE_SUIT, DealState, Phase
from ..rules import Declaration, RuleSet

DECLARE: Final = 32
"""Added to a card: lead it and call the marriage (declaration by choice)."""
CRAWL: Final = 64
"""The declarer's crawl instead of the first lead."""

QK_ALL: Final = MARRIAGE_MASKS[0] | MARRIAGE_MASKS[1] | MARRIAGE_MASKS[2] | MARRIAGE_MASKS[3]
_QUEEN_OF: Final = tuple(1 << (6 * s + 2) for s in range(4))
_KING_OF: Final = tuple(1 << (6 * s + 3) for s in range(4))


def low_card(mask: CardMask) -> int:
    return (mask & -mask).bit_length() - 1


def high_card(mask: CardMask) -> int:
    return mask.bit_length() - 1


def iter_bits(mask: CardMask) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def above(card: int) -> CardMask:
    """Cards of the same suit higher than ``card``."""
    return SUIT_MASKS[card // 6] & ~((1 << (card + 1)) - 1)


class PlayRules:
    """The rule values the play needs, cached from a :class:`RuleSet`."""

    __slots__ = ("ace", "ace_value", "choice", "crawl", "min_cards", "must_beat", "mvals")

    def __init__(self, rules: RuleSet) -> None:
        self.choice = rules.declaration == Declaration.CHOICE
        self.min_cards = rules.marriage_min_cards
        self.mvals = tuple(rules.marriage_value(s) for s in range(4))
        self.ace = rules.ace_marriage
        self.ace_value = rules.ace_marriage_value
        self.must_beat = rules.must_beat
        self.crawl = rules.crawl


class Sim:
    """The play phase of one deal with every hand known.  Mutable; :meth:`clone` before exploring."""

    __slots__ = (
        "contract",
        "crawl",
        "declared",
        "declarer",
        "hands",
        "last_winner",
        "leader",
        "n_active",
        "piles_points",
        "pr",
        "succ",
        "taken",
        "to_act",
        "trick",
        "trick_seats",
        "tricks",
        "trump",
    )

    pr: PlayRules
    n_active: int
    succ: tuple[int, ...]
    declarer: int
    contract: int
    piles_points: int
    hands: list[CardMask]
    trump: int
    trick: list[int]
    trick_seats: list[int]
    leader: int
    to_act: int
    tricks: int
    taken: list[int]
    declared: int
    crawl: bool
    last_winner: int

    def clone(self) -> Sim:
        new = Sim.__new__(Sim)
        new.pr = self.pr
        new.n_active = self.n_active
        new.succ = self.succ
        new.declarer = self.declarer
        new.contract = self.contract
        new.piles_points = self.piles_points
        new.hands = self.hands.copy()
        new.trump = self.trump
        new.trick = self.trick.copy()
        new.trick_seats = self.trick_seats.copy()
        new.leader = self.leader
        new.to_act = self.to_act
        new.tricks = self.tricks
        new.taken = self.taken.copy()
        new.declared = self.declared
        new.crawl = self.crawl
        new.last_winner = self.last_winner
        return new

    @property
    def done(self) -> bool:
        return self.to_act < 0

    # ------------------------------------------------------------------ moves

    def playable(self, seat: int) -> CardMask:
        hand = self.hands[seat]
        trick = self.trick
        if not trick or self.crawl:
            return hand
        led = trick[0] // 6
        follow = hand & SUIT_MASKS[led]
        trump = self.trump
        if not self.pr.must_beat:
            if follow:
                return follow
            if trump >= 0:
                trumps = hand & SUIT_MASKS[trump]
                if trumps:
                    return trumps
            return hand
        if follow:
            if trump >= 0 and led != trump and any(c // 6 == trump for c in trick):
                return follow
            best = max(c for c in trick if c // 6 == led)
            return (follow & above(best)) or follow
        if trump >= 0:
            trumps = hand & SUIT_MASKS[trump]
            if trumps:
                in_trick = [c for c in trick if c // 6 == trump]
                if not in_trick:
                    return trumps
                return (trumps & above(max(in_trick))) or trumps
        return hand

    def declarable(self, seat: int) -> CardMask:
        """Cards whose lead by ``seat`` now would declare a marriage (Q and K of intact marriages, aces)."""
        if self.tricks == 0 or self.trick or self.crawl:
            return 0
        hand = self.hands[seat]
        if hand.bit_count() < self.pr.min_cards:
            return 0
        out = 0
        qk = hand & QK_ALL
        if qk:
            for s in range(4):
                m = MARRIAGE_MASKS[s]
                if qk & m == m:
                    out |= m
        if self.pr.ace and hand & ACES == ACES and not self.declared >> ACE_SUIT & 1:
            out |= ACES
        return out

    def can_crawl(self, seat: int) -> bool:
        return (
            self.pr.crawl
            and self.tricks == 0
            and not self.trick
            and not self.crawl
            and seat == self.declarer
            and not self.hands[seat] & ACES
        )

    def legal(self) -> list[int]:
        seat = self.to_act
        if self.trick:
            return iter_bits(self.playable(seat))
        hand = self.hands[seat]
        moves = iter_bits(hand)
        if self.pr.choice:
            decl = self.declarable(seat)
            if decl:
                moves.extend(c | DECLARE for c in iter_bits(decl))
        if self.tricks == 0 and self.can_crawl(seat):
            moves.append(CRAWL)
        return moves

    def play(self, move: int) -> None:
        """Apply a legal move (not checked: the caller took it from :meth:`legal` or a policy)."""
        seat = self.to_act
        if move == CRAWL:
            self.crawl = True
            return
        c = move & 31
        bit = 1 << c
        hand = self.hands[seat]
        if not self.trick and self.tricks and bit & (QK_ALL | ACES):
            pr = self.pr
            if (move & DECLARE or not pr.choice) and self.declarable(seat) & bit:
                if c % 6 == 5:
                    self.declared |= 1 << ACE_SUIT
                    self.taken[seat] += pr.ace_value
                else:
                    suit = c // 6
                    self.declared |= 1 << suit
                    self.taken[seat] += pr.mvals[suit]
                    self.trump = suit
        self.hands[seat] = hand ^ bit
        self.trick.append(c)
        self.trick_seats.append(seat)
        if len(self.trick) < self.n_active:
            self.to_act = self.succ[seat]
            return
        self._close()

    def winner_index(self) -> int:
        """The trick's winner by the engine's own rule (``core.cards.trick_winner``), crawl included."""
        return trick_winner(self.trick, self.trump, self.crawl)

    def _close(self) -> None:
        trick = self.trick
        winner = self.trick_seats[self.winner_index()]
        pts = 0
        for c in trick:
            pts += CARD_POINTS[c]
        self.taken[winner] += pts
        self.tricks += 1
        self.crawl = False
        self.trick = []
        self.trick_seats = []
        self.leader = winner
        self.to_act = winner
        self.last_winner = winner
        if not self.hands[winner]:
            self.taken[winner] += self.piles_points
            self.to_act = -1


def sim_from_deal(deal: DealState) -> Sim:
    """The play phase of an engine deal as a :class:`Sim` (for tests and full-information tools)."""
    assert deal.phase == Phase.PLAY
    s = Sim.__new__(Sim)
    s.pr = PlayRules(deal.rules)
    s.n_active = len(deal.active)
    s.succ = deal.successor
    s.declarer = deal.declarer
    s.contract = deal.contract
    if deal.piles is not None and deal.pile >= 0:
        s.piles_points = sum(CARD_POINTS[c] for c in deal.piles[1 - deal.pile] + deal.discard)
    else:
        s.piles_points = 0
    s.hands = list(deal.hands)
    s.trump = deal.trump
    s.trick = list(deal.trick)
    s.trick_seats = list(deal.trick_seats)
    s.leader = deal.leader
    s.to_act = deal.to_act
    s.tricks = deal.tricks
    s.taken = list(deal.taken)
    s.declared = deal.declared
    s.crawl = deal.crawl
    s.last_winner = deal.last_winner
    return s


def new_sim(
    pr: PlayRules,
    active: tuple[int, ...],
    succ: tuple[int, ...],
    declarer: int,
    contract: int,
    hands: list[CardMask],
    *,
    piles_points: int = 0,
    trump: int = -1,
    trick: list[int] | None = None,
    trick_seats: list[int] | None = None,
    leader: int = -1,
    to_act: int = -1,
    tricks: int = 0,
    taken: list[int] | None = None,
    declared: int = 0,
    crawl: bool = False,
) -> Sim:
    s = Sim.__new__(Sim)
    s.pr = pr
    s.n_active = len(active)
    s.succ = succ
    s.declarer = declarer
    s.contract = contract
    s.piles_points = piles_points
    s.hands = hands
    s.trump = trump
    s.trick = trick if trick is not None else []
    s.trick_seats = trick_seats if trick_seats is not None else []
    s.leader = declarer if leader < 0 else leader
    s.to_act = declarer if to_act < 0 else to_act
    s.tricks = tricks
    s.taken = taken if taken is not None else [0] * len(succ)
    s.declared = declared
    s.crawl = crawl
    s.last_winner = -1
    return s


def move_to_engine(move: int) -> tuple[int, bool, bool]:
    """(card, declare, crawl) of a simulator move."""
    if move == CRAWL:
        return -1, False, True
    return move & 31, bool(move & DECLARE), False
