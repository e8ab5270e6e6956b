"""What one seat may know: the only input a computer player gets.

A computer player is handed a :class:`SeatView`, never a :class:`~core.game.GameState`, so it cannot
look at other hands even by mistake: the view is built field by field from what the rules make public
plus what this seat saw privately (its own hand, the talon when shown to it, the cards it gave or was
given).  ``tests/ai/test_view.py`` checks that two games with the same public history and different
hidden cards give the same view.
"""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Bid, Crawl, Give, Pass, SellTalon
from .cards import Card, CardMask, mask_of
from .deal import DealState, Phase
from .game import GameState
from .rules import Opening, RuleSet

HIDDEN = -1
"""A card in a trick that this seat cannot see (a face-down crawl card)."""

TrickRecord = tuple[tuple[Card, ...], tuple[int, ...], int]
"""A finished trick: (cards in play order, their seats, trump during the trick or -1)."""


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything ``seat`` may know now.  Card sets are bit masks (see :mod:`core.cards`)."""

    rules: RuleSet
    players: int
    seat: int
    deal_number: int
    phase: str
    to_act: int
    dealer: int
    active: tuple[int, ...]
    """Seats playing this deal, from the dealer's left (the opener first)."""

    hand: CardMask
    """This seat's hand; 0 while it bids blind (it has not seen it)."""
    hand_known: bool
    hand_counts: tuple[int, ...]
    """Cards held by each seat (public: everyone can count)."""

    # Bidding
    blind_decided: bool
    """The opener's blind choice has been made (always True without the blind option)."""
    blind_seat: int
    """The seat bidding or playing blind, or -1."""
    auction: tuple[tuple[int, int], ...]
    """Bids in order as (seat, value), 0 for a pass; an automatic opening comes first."""
    bid: int
    bidder: int
    passed: int
    """Bit mask of seats that passed."""
    forced: bool
    """The opener became declarer at the automatic opening bid (nobody bid)."""
    golden: bool

    # Talon, sale and exchange
    sale: tuple[tuple[int, int], ...]
    """Bids of a talon sale as (seat, value), 0 for a pass."""
    seller: int
    sale_bid: int
    sale_bidder: int
    sale_passed: int
    declarer: int
    contract: int
    talon_public: bool
    talon: tuple[Card, ...]
    """The talon cards this seat has seen (as dealt; for two musiki the pile the declarer took)."""
    talon_size: int
    """Cards in the talon as dealt (both piles for two musiki)."""
    pile: int
    """The pile taken (two musiki), or -1."""
    discard: tuple[Card, ...]
    """The cards the declarer laid down (two musiki); only in the declarer's own view."""
    given: tuple[tuple[int, Card], ...]
    """Cards this seat gave, as (receiver, card)."""
    received: tuple[tuple[int, Card], ...]
    """Cards this seat was given, as (giver, card); giver -1 for a blind game's talon card."""
    exchanged: bool
    """The exchange (give or discard) is over."""
    bombs_left: int
    """Bit mask of seats that may still bomb in this game."""

    # Play
    trump: int
    trick: tuple[Card, ...]
    """The current trick; ``HIDDEN`` for a face-down crawl card of another seat."""
    trick_seats: tuple[int, ...]
    leader: int
    crawl: bool
    """The current trick is a crawl (cards face down)."""
    crawled: bool
    """The first trick of this deal was a crawl (nobody had to follow suit in it)."""
    trick_history: tuple[TrickRecord, ...]
    taken: tuple[int, ...]
    """Deal points so far per seat (card points of tricks taken plus marriages declared)."""
    marriages: tuple[tuple[int, ...], ...]
    """Suits of the marriages each seat declared (4 for the ace marriage)."""
    declared: int
    played: CardMask
    """Cards in finished tricks."""

    # Match
    totals: tuple[int, ...]
    on_barrel: tuple[bool, ...]
    barrel_deals: tuple[int, ...]
    bolts: tuple[int, ...]

    @property
    def tricks(self) -> int:
        return len(self.trick_history)

    @property
    def known_cards(self) -> CardMask:
        """Cards whose place this seat knows: its hand, played cards, its own trick card, talon seen."""
        m = self.hand | self.played | mask_of(self.talon) | mask_of(self.discard)
        m |= mask_of(c for c in self.trick if c != HIDDEN)
        return m


def _auction(
    deal: DealState, actions: tuple[tuple[int, object], ...]
) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    bids: list[tuple[int, int]] = []
    if deal.rules.opening == Opening.AUTOMATIC:
        bids.append(
            (deal.opener, max(deal.rules.opening_bid, 120) if deal.golden else deal.rules.opening_bid)
        )
    sale: list[tuple[int, int]] = []
    target = bids
    for seat, action in actions:
        if type(action) is SellTalon:
            target = sale
        elif type(action) is Bid:
            target.append((seat, action.value))
        elif type(action) is Pass:
            target.append((seat, 0))
    return tuple(bids), tuple(sale)


def _blind_order(deal: DealState) -> list[int]:
    d = deal.declarer
    order = [deal.next_active(d)]
    while len(order) < len(deal.active):
        order.append(deal.next_active(order[-1]))
    order[-1] = d
    return order


def seat_view(state: GameState, seat: int) -> SeatView:
    """The view of ``seat``: copies only what the rules let this seat know."""
    deal = state.deal
    rules = deal.rules
    actions = state.actions_this_deal()
    auction, sale = _auction(deal, actions)
    hand_known = bool(deal.hand_seen >> seat & 1)
    decl = deal.declarer
    phase = deal.phase

    # Talon knowledge.
    talon: tuple[Card, ...] = ()
    discard: tuple[Card, ...] = ()
    blind_game = deal.blind_seat >= 0 and deal.blind_seat == decl
    talon_taken = decl >= 0 and phase not in (Phase.BIDDING, Phase.TALON, Phase.SALE)
    if deal.piles is not None:
        if seat == decl and deal.pile >= 0:
            talon = deal.piles[deal.pile]
            discard = deal.discard
    elif deal.talon_public or (seat == decl and talon_taken and not blind_game):
        talon = deal.talon_as_dealt

    given: list[tuple[int, Card]] = []
    received: list[tuple[int, Card]] = []
    exchanged = False
    for giver, action in actions:
        if type(action) is Give:
            exchanged = True
            for target, c in action.cards:
                if giver == seat:
                    given.append((target, c))
                elif target == seat:
                    received.append((giver, c))
    if deal.piles is not None and deal.discard:
        exchanged = True
    if blind_game and decl >= 0 and phase in (Phase.PLAY, Phase.DONE):
        for target, c in zip(_blind_order(deal), deal.talon_as_dealt, strict=True):
            if target == seat:
                received.append((-1, c))

    trick = deal.trick
    if deal.crawl:
        trick = tuple(c if s == seat else HIDDEN for c, s in zip(trick, deal.trick_seats, strict=True))

    tally = state.tally
    return SeatView(
        rules=rules,
        players=deal.n,
        seat=seat,
        deal_number=deal.number,
        phase=phase,
        to_act=deal.to_act,
        dealer=deal.dealer,
        active=deal.active,
        hand=deal.hands[seat] if hand_known else 0,
        hand_known=hand_known,
        hand_counts=tuple(h.bit_count() for h in deal.hands),
        blind_decided=phase != Phase.BLIND,
        blind_seat=deal.blind_seat,
        auction=auction,
        bid=deal.bid,
        bidder=deal.bidder,
        passed=deal.passed,
        forced=deal.forced,
        golden=deal.golden,
        sale=sale,
        seller=deal.seller,
        sale_bid=deal.sale_bid,
        sale_bidder=deal.sale_bidder,
        sale_passed=deal.sale_passed,
        declarer=decl,
        contract=deal.contract,
        talon_public=deal.talon_public,
        talon=talon,
        talon_size=len(deal.talon_as_dealt),
        pile=deal.pile,
        discard=discard,
        given=tuple(given),
        received=tuple(received),
        exchanged=exchanged,
        bombs_left=state.bombs_left,
        trump=deal.trump,
        trick=trick,
        trick_seats=deal.trick_seats,
        leader=deal.leader,
        crawl=deal.crawl,
        crawled=any(type(a) is Crawl for _, a in actions),
        trick_history=deal.trick_history,
        taken=tuple(deal.taken),
        marriages=tuple(deal.marriages),
        declared=deal.declared,
        played=deal.played,
        totals=tally.totals,
        on_barrel=tally.barrel_flags(rules),
        barrel_deals=tally.barrel_deals,
        bolts=tally.bolts,
    )
