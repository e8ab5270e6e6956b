"""One deal as a state machine: (blind) → bidding → (sale) → talon → exchange → contract → play → done.

``DealState`` is mutable and changed in place by ``GameState.apply_action`` of :mod:`core.game`; a caller
that must keep a state as it was clones it first (``GameState.clone``: one shallow copy of the deal, its
hands and tricks), so a state is never changed under anyone's feet.  Everything the rules say about one
deal lives here; what happens between deals (totals, barrels, bolts, bombs used) is :mod:`core.scoring`
and :mod:`core.game`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Final, overload

from . import events as ev
from .actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    PLAYS,
    PLAYS_DECLARING,
    SELL,
    TAKE_PILE,
    Action,
    Bid,
    Blind,
    Bomb,
    Concede,
    Contract,
    Crawl,
    Discard,
    Give,
    Pass,
    Play,
    SellTalon,
    TakeTalon,
    bid_action,
    contract_action,
)
from .cards import (
    ACES,
    CARD_POINTS,
    DECK_SIZE,
    MARRIAGE_MASKS,
    NINES,
    SUIT_LETTERS,
    SUIT_MASKS,
    Card,
    CardMask,
    cards_of,
    mask_of,
    trick_winner,
)
from .errors import IllegalAction
from .events import Event
from .rules import Declaration, Opening, RuleSet, TalonVisibility


class Phase:
    """Phase names; those of an unfinished deal in ``thousand replay`` output."""

    BLIND: Final = "blind"
    BIDDING: Final = "bidding"
    SALE: Final = "sale"
    TALON: Final = "talon"
    DISCARD: Final = "discard"
    EXCHANGE: Final = "exchange"
    CONTRACT: Final = "contract"
    PLAY: Final = "play"
    DONE: Final = "done"


ACE_SUIT: Final = 4
"""Suit index used for the ace marriage in ``marriages`` lists."""


@dataclass(frozen=True, slots=True)
class DealLayout:
    """How the cards lie after dealing: one hand per seat (0 for a dealer sitting out) and the talon."""

    dealer: int
    hands: tuple[CardMask, ...]
    talon: tuple[Card, ...] = ()
    piles: tuple[tuple[Card, ...], tuple[Card, ...]] | None = None
    blind: int | None = None


def successor_seats(players: int, active: tuple[int, ...]) -> tuple[int, ...]:
    """For each seat, the active seat that plays after it (-1 for a seat sitting the deal out)."""
    succ = [-1] * players
    for i, s in enumerate(active):
        succ[s] = active[(i + 1) % len(active)]
    return tuple(succ)


def active_seats(rules: RuleSet, players: int, dealer: int) -> tuple[int, ...]:
    """Seats that play this deal, in order from the dealer's left."""
    order = tuple((dealer + i) % players for i in range(1, players + 1))
    if players == 4 and rules.dealer_sits_out:
        return order[:3]
    return order


def layout_shape(rules: RuleSet, players: int) -> tuple[int, int, int]:
    """(active players, cards per hand, talon piles) for a rule set and player count."""
    if players == 2 and rules.two_musiki:
        return 2, 10, 2
    active = 3 if players == 4 and rules.dealer_sits_out else players
    return active, (DECK_SIZE - active) // active, 1


def deal_cards(rules: RuleSet, players: int, dealer: int, deck: Sequence[Card]) -> DealLayout:
    """Lay out a shuffled deck as the rules require."""
    active = active_seats(rules, players, dealer)
    _, per_hand, piles = layout_shape(rules, players)
    hands = [0] * players
    pos = 0
    for seat in active:
        hands[seat] = mask_of(deck[pos : pos + per_hand])
        pos += per_hand
    if piles == 2:
        return DealLayout(
            dealer, tuple(hands), piles=(tuple(deck[pos : pos + 2]), tuple(deck[pos + 2 : pos + 4]))
        )
    return DealLayout(dealer, tuple(hands), talon=tuple(deck[pos:]))


def check_layout(rules: RuleSet, players: int, layout: DealLayout) -> str | None:
    """Why a layout is not one deck laid out as the rules require, or None."""
    active = active_seats(rules, players, layout.dealer)
    _, per_hand, piles = layout_shape(rules, players)
    seen = 0
    for seat in range(players):
        hand = layout.hands[seat]
        want = per_hand if seat in active else 0
        if hand.bit_count() != want:
            return f"seat {seat} holds {hand.bit_count()} cards, not {want}"
        if seen & hand:
            return "a card is dealt twice"
        seen |= hand
    if piles == 2:
        if layout.piles is None or len(layout.piles) != 2 or any(len(p) != 2 for p in layout.piles):
            return "the 2-player layout needs two talon piles of 2 cards"
        talon = layout.piles[0] + layout.piles[1]
    else:
        if layout.piles is not None:
            return "this layout has one talon, not two piles"
        talon = layout.talon
        if len(talon) != len(active):
            return f"the talon holds {len(talon)} cards, not {len(active)}"
    tmask = mask_of(talon)
    if tmask.bit_count() != len(talon) or seen & tmask:
        return "a card is dealt twice"
    if (seen | tmask).bit_count() != DECK_SIZE:
        return "the hands and talon are not one 24-card deck"
    return None


@dataclass(frozen=True, slots=True)
class DealOutcome:
    """What the play of a deal gave, before the match's scoring rules (rounding, barrel, bolts)."""

    declarer: int
    contract: int
    made: bool | None
    points: tuple[int, ...]
    marriages: tuple[tuple[int, ...], ...]
    ending: str
    """``played``, ``bomb``, ``concede`` or ``redeal``."""
    blind: bool
    four_nines: tuple[int, ...]
    """Seats that held all four nines during the deal (bonus option)."""
    talon_as_dealt: tuple[Card, ...]
    sitting_out: int | None
    talon_public: bool = False
    """The single talon was shown to everyone (rules, or a sale): a deal's result may name it."""


class DealState:
    """The state of one deal.  Use :mod:`core.game` to act on it; fields are read-only outside."""

    rules: RuleSet
    n: int
    number: int
    dealer: int
    active: tuple[int, ...]
    successor: tuple[int, ...]
    """The next seat in play after each seat (-1 for a seat sitting out)."""
    hands: list[CardMask]
    talon: tuple[Card, ...]
    talon_as_dealt: tuple[Card, ...]
    piles: tuple[tuple[Card, ...], tuple[Card, ...]] | None
    phase: str
    to_act: int
    bid: int
    bidder: int
    passed: int
    has_bid: int
    forced: bool
    golden: bool
    blind_seat: int
    hand_seen: int
    bomb_allowed: int
    seller: int
    sale_bid: int
    sale_bidder: int
    sale_passed: int
    declarer: int
    contract: int
    talon_public: bool
    pile: int
    discard: tuple[Card, ...]
    trump: int
    trick: tuple[Card, ...]
    trick_seats: tuple[int, ...]
    trick_history: tuple[tuple[tuple[Card, ...], tuple[int, ...], int], ...]
    """Finished tricks as (cards, seats, trump during the trick): public knowledge, kept for the
    computer players' inference (voids, cards out) and the table display."""
    leader: int
    tricks: int
    taken: list[int]
    won: list[CardMask]
    marriages: list[tuple[int, ...]]
    declared: int
    played: CardMask
    crawl: bool
    four_nines: int
    last_winner: int

    ending: str
    choice: bool
    """Marriages are declared by choice.  This and the next three are cached from the rules because
    they are read on every card played."""
    must_beat: bool
    crawl_ok: bool
    min_cards: int

    def copy(self) -> DealState:
        new = _blank_deal()
        new.rules = self.rules
        new.n = self.n
        new.number = self.number
        new.dealer = self.dealer
        new.active = self.active
        new.successor = self.successor
        new.hands = self.hands.copy()
        new.talon = self.talon
        new.talon_as_dealt = self.talon_as_dealt
        new.piles = self.piles
        new.phase = self.phase
        new.to_act = self.to_act
        new.bid = self.bid
        new.bidder = self.bidder
        new.passed = self.passed
        new.has_bid = self.has_bid
        new.forced = self.forced
        new.golden = self.golden
        new.blind_seat = self.blind_seat
        new.hand_seen = self.hand_seen
        new.bomb_allowed = self.bomb_allowed
        new.seller = self.seller
        new.sale_bid = self.sale_bid
        new.sale_bidder = self.sale_bidder
        new.sale_passed = self.sale_passed
        new.declarer = self.declarer
        new.contract = self.contract
        new.talon_public = self.talon_public
        new.pile = self.pile
        new.discard = self.discard
        new.trump = self.trump
        new.trick = self.trick
        new.trick_seats = self.trick_seats
        new.trick_history = self.trick_history
        new.leader = self.leader
        new.tricks = self.tricks
        new.taken = self.taken.copy()
        new.won = self.won.copy()
        new.marriages = self.marriages.copy()
        new.declared = self.declared
        new.played = self.played
        new.crawl = self.crawl
        new.four_nines = self.four_nines
        new.last_winner = self.last_winner
        new.ending = self.ending
        new.choice = self.choice
        new.must_beat = self.must_beat
        new.crawl_ok = self.crawl_ok
        new.min_cards = self.min_cards
        return new

    # ------------------------------------------------------------------ queries

    @property
    def opener(self) -> int:
        return self.active[0]

    @property
    def done(self) -> bool:
        return self.phase == Phase.DONE

    @property
    def sitting_out(self) -> int | None:
        return self.dealer if self.dealer not in self.active else None

    def next_active(self, seat: int) -> int:
        return self.successor[seat]

    def max_bid(self, seat: int, hand: CardMask | None = None) -> int:
        """The highest bid or contract ``seat`` may name now (may be below the current bid)."""
        rules = self.rules
        if hand is None:
            hand = self.hands[seat]
        limit = (
            120
            + sum(rules.marriage_values.values())
            + (rules.ace_marriage_value if rules.ace_marriage else 0)
        )
        if self.blind_seat == seat and self.phase == Phase.BIDDING:
            return _floor(min(limit, rules.blind_max_bid), rules.bid_step)
        value = _marriage_sum(rules, hand)
        if rules.marriage_needed_above is not None and value == 0:
            limit = min(limit, rules.marriage_needed_above)
        if rules.cap_by_marriages:
            limit = min(limit, 120 + value)
        cap = rules.cap_for(self.n)
        if cap is not None:
            limit = min(limit, cap)
        return _floor(limit, rules.bid_step)

    def can_declare(self, seat: int, c: Card) -> int:
        """The suit a lead of ``c`` may declare (ACE_SUIT for the ace marriage), or -1."""
        if self.tricks == 0 or self.trick or self.crawl or seat != self.leader:
            return -1
        hand = self.hands[seat]
        if hand.bit_count() < self.min_cards:
            return -1
        rank = c % 6
        suit = c // 6
        if rank == 2 or rank == 3:
            m = MARRIAGE_MASKS[suit]
            return suit if hand & m == m else -1
        if (
            rank == 5
            and self.rules.ace_marriage
            and hand & ACES == ACES
            and not self.declared >> ACE_SUIT & 1
        ):
            return ACE_SUIT
        return -1

    def playable(self, seat: int) -> CardMask:
        """The cards ``seat`` may play now, with the follow/trump/beat duties."""
        hand = self.hands[seat]
        trick = self.trick
        if not trick or self.crawl:
            return hand
        led = trick[0] // 6
        follow = hand & SUIT_MASKS[led]
        trump = self.trump
        must_beat = self.must_beat
        if follow:
            if not must_beat:
                return follow
            if trump >= 0 and led != trump and any(c // 6 == trump for c in trick):
                return follow
            best = max(c for c in trick if c // 6 == led)
            higher = follow & ~((1 << (best + 1)) - 1)
            return higher or follow
        if trump >= 0:
            trumps = hand & SUIT_MASKS[trump]
            if trumps:
                if not must_beat:
                    return trumps
                in_trick = [c for c in trick if c // 6 == trump]
                if not in_trick:
                    return trumps
                higher = trumps & ~((1 << (max(in_trick) + 1)) - 1)
                return higher or trumps
        return hand

    def legal_actions(self, seat: int) -> Sequence[Action]:
        if seat != self.to_act:
            return ()
        phase = self.phase
        if phase == Phase.PLAY:
            if self.trick:
                mask = self.playable(seat)
                return _PLAYS_LOW[mask & 4095] + _PLAYS_HIGH[mask >> 12]
            return self._legal_plays(seat)
        if phase == Phase.BIDDING:
            return self._legal_bids(seat)
        if phase == Phase.EXCHANGE:
            extra: list[Action] = []
            if self.bomb_allowed >> seat & 1 and self.forced:
                extra.append(BOMB)
            if self.rules.concede:
                extra.append(CONCEDE)
            return GiveChoices(self, extra)
        if phase == Phase.CONTRACT:
            top = self.max_bid(seat)
            step = self.rules.bid_step
            return [contract_action(self.bid)] + [
                contract_action(v) for v in range(self.bid + step, top + 1, step)
            ]
        if phase == Phase.BLIND:
            return [BLIND_YES, BLIND_NO]
        if phase == Phase.TALON:
            if self.piles is not None:
                return list(TAKE_PILE)
            return [TAKE_PILE[0], SELL]
        if phase == Phase.DISCARD:
            return DiscardChoices(self.hands[seat], 2)
        if phase == Phase.SALE:
            step = self.rules.bid_step
            top = self.max_bid(seat, self.hands[seat] | mask_of(self.talon))
            return [PASS] + [bid_action(v) for v in range(self.sale_bid + step, top + 1, step)]
        return ()

    def _legal_plays(self, seat: int) -> Sequence[Action]:
        """Leads: every card, the declaring variants where a marriage may be called, and the crawl."""
        hand = self.hands[seat]
        plays: tuple[Action, ...] = _PLAYS_LOW[hand & 4095] + _PLAYS_HIGH[hand >> 12]
        if self.tricks:
            if not self.choice or not hand & _DECLARABLE:
                return plays
            out = list(plays)
            for c in cards_of(hand & _DECLARABLE):
                if self.can_declare(seat, c) >= 0:
                    out.append(PLAYS_DECLARING[c])
            return out
        if self.crawl_ok and not self.crawl and seat == self.declarer and not hand & ACES:
            return (*plays, CRAWL)
        return plays

    def _legal_bids(self, seat: int) -> list[Action]:
        rules = self.rules
        step = rules.bid_step
        low = self.bid + step if self.bid else self._opening_min()
        top = self.max_bid(seat)
        out: list[Action] = [bid_action(v) for v in range(low, top + 1, step)]
        if not (rules.opening == Opening.COMPULSORY and seat == self.opener and not self.has_bid >> seat & 1):
            out.insert(0, PASS)
        return out

    def _opening_min(self) -> int:
        base = self.rules.opening_bid
        return max(base, 120) if self.golden else base

    # ------------------------------------------------------------------ apply

    def apply(self, seat: int, action: Action, out: list[Event]) -> None:
        """Apply in place (the caller copies first); raise IllegalAction before any change."""
        phase = self.phase
        if seat != self.to_act:
            if phase == Phase.DONE:
                raise IllegalAction("deal_over", "the deal is already over")
            raise IllegalAction("not_your_turn", f"it is seat {self.to_act}'s turn, not seat {seat}'s")
        if phase == Phase.PLAY:
            if type(action) is Play:
                self._play(seat, action, out)
                return
            if type(action) is Crawl:
                self._start_crawl(seat, out)
                return
        elif phase == Phase.BIDDING:
            if type(action) is Bid or type(action) is Pass:
                self._bid(seat, action, out)
                return
        elif phase == Phase.EXCHANGE:
            if type(action) is Give:
                self._give(seat, action, out)
                return
            if type(action) is Bomb:
                self._bomb(seat, out)
                return
            if type(action) is Concede:
                self._concede(seat, out)
                return
        elif phase == Phase.CONTRACT:
            if type(action) is Contract:
                self._contract(seat, action.value, out)
                return
        elif phase == Phase.BLIND:
            if type(action) is Blind:
                self._blind(seat, action.announce, out)
                return
        elif phase == Phase.TALON:
            if type(action) is TakeTalon:
                self._take_talon(seat, action.pile, out)
                return
            if type(action) is SellTalon:
                self._offer_talon(seat, out)
                return
        elif phase == Phase.DISCARD:
            if type(action) is Discard:
                self._discard(seat, action.cards, out)
                return
        elif phase == Phase.SALE and (type(action) is Bid or type(action) is Pass):
            self._sale_bid(seat, action, out)
            return
        raise IllegalAction(
            "wrong_phase", f"{getattr(action, 'kind', action)!s} is not possible in the {phase} phase"
        )

    # --- blind and bidding

    def _blind(self, seat: int, announce: bool, out: list[Event]) -> None:
        out.append(Event(ev.BLIND_CHOSEN, None, seat, int(announce)))
        if announce:
            self.blind_seat = seat
        else:
            self._show_hand(seat, out)
        self.phase = Phase.BIDDING
        self.to_act = seat

    def _show_hand(self, seat: int, out: list[Event]) -> None:
        if not self.hand_seen >> seat & 1:
            self.hand_seen |= 1 << seat
            out.append(Event(ev.HAND_DEALT, seat, seat, 0, tuple(cards_of(self.hands[seat]))))

    def _bid(self, seat: int, action: Bid | Pass, out: list[Event]) -> None:
        rules = self.rules
        if not isinstance(action, Bid):
            if rules.opening == Opening.COMPULSORY and seat == self.opener and not self.has_bid >> seat & 1:
                raise IllegalAction("must_open", "the opener must open the bidding")
            self.passed |= 1 << seat
            out.append(Event(ev.PASSED, None, seat))
        else:
            value = action.value
            step = rules.bid_step
            low = self.bid + step if self.bid else self._opening_min()
            if value % step:
                raise IllegalAction("bad_bid_step", f"a bid must be a multiple of {step}")
            if value < low:
                raise IllegalAction("bid_too_low", f"the bid must be at least {low}")
            top = self.max_bid(seat)
            if value > top:
                if self.blind_seat == seat:
                    raise IllegalAction("blind_bid_too_high", f"a blind bid may not exceed {top}")
                if (
                    rules.marriage_needed_above is not None
                    and value > rules.marriage_needed_above
                    and (_marriage_sum(rules, self.hands[seat]) == 0)
                ):
                    raise IllegalAction(
                        "bid_needs_marriage", f"a bid above {rules.marriage_needed_above} needs a marriage"
                    )
                raise IllegalAction("bid_too_high", f"the most this hand may bid is {top}")
            self.bid = value
            self.bidder = seat
            self.has_bid |= 1 << seat
            self.forced = False
            out.append(Event(ev.BID, None, seat, value))
        remaining = [s for s in self.active if not self.passed >> s & 1]
        if len(remaining) == 1:
            self._bidding_won(remaining[0], out)
            return
        nxt = self.next_active(seat)
        while self.passed >> nxt & 1:
            nxt = self.next_active(nxt)
        self.to_act = nxt

    def _bidding_won(self, declarer: int, out: list[Event]) -> None:
        self.declarer = declarer
        self.contract = self.bid
        out.append(Event(ev.BIDDING_WON, None, declarer, self.bid, (), self.forced))
        if self.blind_seat >= 0 and self.blind_seat != declarer:
            self._show_hand(self.blind_seat, out)
            self.blind_seat = -1
        if self.blind_seat == declarer:
            self._deal_out_talon(declarer, out)
            return
        self.to_act = declarer
        if self.piles is not None or self.rules.sell_talon:
            self.phase = Phase.TALON
            return
        self._take_single_talon(declarer, out)

    def _deal_out_talon(self, declarer: int, out: list[Event]) -> None:
        """Blind declarer: talon cards go face down, one each clockwise from the declarer's left."""
        order = [self.next_active(declarer)]
        while len(order) < len(self.active):
            order.append(self.next_active(order[-1]))
        order[-1] = declarer
        for target, c in zip(order, self.talon, strict=True):
            self.hands[target] |= 1 << c
            out.append(Event(ev.CARD_RECEIVED, target, target, 0, (c,)))
        self._show_hand(declarer, out)
        self.talon = ()
        self._note_four_nines()
        if self.rules.redeal_four_nines:
            # A blind game has no exchange: the hands are final once the talon is dealt out.
            for s in self.active:
                if self.hands[s] & NINES == NINES:
                    out.append(Event(ev.REDEAL, None, s))
                    self._finish(out, "redeal")
                    return
        self._begin_play(out)

    def _take_single_talon(self, declarer: int, out: list[Event]) -> None:
        vis = self.rules.talon_visibility
        public = (
            self.talon_public
            or vis == TalonVisibility.PUBLIC
            or (vis == TalonVisibility.PUBLIC_UNLESS_FORCED and not self.forced)
        )
        self.talon_public = public
        cards = self.talon
        if public:
            out.append(Event(ev.TALON_SHOWN, None, declarer, 0, cards))
            out.append(Event(ev.TALON_TAKEN, None, declarer, 0, cards))
        else:
            out.append(Event(ev.TALON_TAKEN, None, declarer))
            out.append(Event(ev.TALON_TAKEN, declarer, declarer, 0, cards))
        self.hands[declarer] |= mask_of(cards)
        self.talon = ()
        self._note_four_nines()
        self.phase = Phase.EXCHANGE
        self.to_act = declarer

    # --- sale of the talon

    def _offer_talon(self, seat: int, out: list[Event]) -> None:
        if self.piles is not None or not self.rules.sell_talon:
            raise IllegalAction("no_sale", "the talon cannot be sold in this game")
        self.seller = seat
        self.sale_bid = self.bid
        self.sale_bidder = -1
        self.sale_passed = 1 << seat
        self.talon_public = True
        out.append(Event(ev.TALON_OFFERED, None, seat, self.bid, self.talon))
        self.phase = Phase.SALE
        self.to_act = self.next_active(seat)

    def _sale_bid(self, seat: int, action: Bid | Pass, out: list[Event]) -> None:
        if not isinstance(action, Bid):
            self.sale_passed |= 1 << seat
            out.append(Event(ev.PASSED, None, seat))
        else:
            step = self.rules.bid_step
            value = action.value
            if value % step:
                raise IllegalAction("bad_bid_step", f"a bid must be a multiple of {step}")
            if value < self.sale_bid + step:
                raise IllegalAction("bid_too_low", f"buying needs at least {self.sale_bid + step}")
            if value > self.max_bid(seat, self.hands[seat] | mask_of(self.talon)):
                raise IllegalAction("bid_too_high", "this hand may not bid that much")
            self.sale_bid = value
            self.sale_bidder = seat
            out.append(Event(ev.BID, None, seat, value))
        candidates = [s for s in self.active if not self.sale_passed >> s & 1]
        if not candidates or candidates == [self.sale_bidder]:
            if self.sale_bidder >= 0:
                buyer = self.sale_bidder
                self.declarer = buyer
                self.bid = self.contract = self.sale_bid
                self.forced = False
                out.append(Event(ev.TALON_BOUGHT, None, buyer, self.sale_bid))
            self._take_single_talon(self.declarer, out)
            return
        nxt = self.next_active(seat)
        while self.sale_passed >> nxt & 1:
            nxt = self.next_active(nxt)
        self.to_act = nxt

    # --- two musiki

    def _take_talon(self, seat: int, pile: int, out: list[Event]) -> None:
        if self.piles is None:
            if pile != 0:
                raise IllegalAction("no_such_pile", "there is one talon")
            self._take_single_talon(seat, out)
            return
        if pile not in (0, 1):
            raise IllegalAction("no_such_pile", "choose pile 0 or 1")
        cards = self.piles[pile]
        self.pile = pile
        self.hands[seat] |= mask_of(cards)
        out.append(Event(ev.TALON_TAKEN, None, seat, pile))
        out.append(Event(ev.TALON_TAKEN, seat, seat, pile, cards))
        self._note_four_nines()
        self.phase = Phase.DISCARD

    def _discard(self, seat: int, cards: tuple[Card, ...], out: list[Event]) -> None:
        m = mask_of(cards)
        if len(cards) != 2 or m.bit_count() != 2:
            raise IllegalAction("bad_discard", "lay down exactly two different cards")
        if m & ~self.hands[seat]:
            raise IllegalAction("card_not_in_hand", "you can only lay down cards from your hand")
        self.hands[seat] &= ~m
        self.discard = tuple(cards_of(m))
        out.append(Event(ev.DISCARDED, None, seat, 2))
        out.append(Event(ev.DISCARDED, seat, seat, 2, self.discard))
        self._after_exchange(out)

    # --- exchange

    def _give(self, seat: int, action: Give, out: list[Event]) -> None:
        others = [s for s in self.active if s != seat]
        targets = [t for t, _ in action.cards]
        cards = [c for _, c in action.cards]
        if sorted(targets) != sorted(others):
            raise IllegalAction("bad_give", "give exactly one card to each other player")
        m = mask_of(cards)
        if m.bit_count() != len(cards):
            raise IllegalAction("bad_give", "give different cards")
        if m & ~self.hands[seat]:
            raise IllegalAction("card_not_in_hand", "you can only give cards from your hand")
        for target, c in action.cards:
            self.hands[seat] &= ~(1 << c)
            self.hands[target] |= 1 << c
            out.append(Event(ev.CARD_GIVEN, None, seat, target))
            out.append(Event(ev.CARD_GIVEN, target, seat, target, (c,)))
            out.append(Event(ev.CARD_GIVEN, seat, seat, target, (c,)))
        self._after_exchange(out)

    def _after_exchange(self, out: list[Event]) -> None:
        self._note_four_nines()
        if self.rules.redeal_four_nines:
            for s in self.active:
                if self.hands[s] & NINES == NINES:
                    out.append(Event(ev.REDEAL, None, s))
                    self._finish(out, "redeal")
                    return
        if self.rules.contract_step:
            self.phase = Phase.CONTRACT
            self.to_act = self.declarer
        else:
            self._begin_play(out)

    def _bomb(self, seat: int, out: list[Event]) -> None:
        if not (self.forced and self.bomb_allowed >> seat & 1):
            raise IllegalAction("no_bomb", "a bomb is only for the declarer of a forced opening, once a game")
        out.append(Event(ev.BOMB, None, seat))
        self._finish(out, "bomb")

    def _concede(self, seat: int, out: list[Event]) -> None:
        if not self.rules.concede:
            raise IllegalAction("no_concede", "conceding is not allowed in this game")
        out.append(Event(ev.CONCEDE, None, seat))
        self._finish(out, "concede")

    def _contract(self, seat: int, value: int, out: list[Event]) -> None:
        if value != self.bid:
            step = self.rules.bid_step
            if value < self.bid:
                raise IllegalAction("contract_too_low", f"the contract cannot be below the bid {self.bid}")
            if value % step:
                raise IllegalAction("bad_bid_step", f"a contract must be a multiple of {step}")
            top = self.max_bid(seat)
            if value > top:
                raise IllegalAction(
                    "contract_too_high", f"the most this hand may declare is {max(top, self.bid)}"
                )
        self.contract = value
        out.append(Event(ev.CONTRACT, None, seat, value))
        self._begin_play(out)

    # --- play

    def _begin_play(self, out: list[Event]) -> None:
        self.phase = Phase.PLAY
        self.leader = self.declarer
        self.to_act = self.declarer

    def _start_crawl(self, seat: int, out: list[Event]) -> None:
        if not (self.rules.crawl and self.tricks == 0 and not self.trick and not self.crawl):
            raise IllegalAction("no_crawl", "a crawl is only possible instead of the first lead")
        if self.hands[seat] & ACES:
            raise IllegalAction("no_crawl", "a declarer holding an ace cannot crawl")
        self.crawl = True
        out.append(Event(ev.CRAWL, None, seat))

    def _play(self, seat: int, action: Play, out: list[Event]) -> None:
        c = action.card
        hand = self.hands[seat]
        bit = 1 << c
        if not hand & bit:
            raise IllegalAction("card_not_in_hand", "that card is not in your hand")
        trick = self.trick
        declared = -1
        if trick:
            if not self.playable(seat) & bit:
                raise IllegalAction(*self._why_not_playable(seat, c))
            if action.declare and self.choice:
                raise IllegalAction("cannot_declare", "only the player on lead can declare a marriage")
        elif bit & _DECLARABLE and self.tricks:
            suit = self.can_declare(seat, c)
            if not self.choice:
                declared = suit
            elif action.declare:
                if suit < 0:
                    raise IllegalAction("cannot_declare", "this lead cannot declare a marriage")
                declared = suit
        elif action.declare and self.choice:
            raise IllegalAction("cannot_declare", "this lead cannot declare a marriage")
        self.hands[seat] = hand ^ bit
        if self.crawl:
            out.append(Event(ev.CARD_PLAYED, None, seat))
            out.append(Event(ev.CARD_PLAYED, seat, seat, 0, (c,)))
        else:
            out.append(Event(ev.CARD_PLAYED, None, seat, 0, (c,)))
        if declared >= 0:
            self._declare(seat, declared, out)
        trick = (*trick, c)
        self.trick_seats = (*self.trick_seats, seat)
        if len(trick) < len(self.active):
            self.trick = trick
            self.to_act = self.successor[seat]
            return
        self.trick = trick
        self._close_trick(out)

    def _declare(self, seat: int, suit: int, out: list[Event]) -> None:
        rules = self.rules
        if suit == ACE_SUIT:
            value = rules.ace_marriage_value
            letter = "A"
        else:
            value = rules.marriage_value(suit)
            letter = SUIT_LETTERS[suit]
            self.trump = suit
        self.declared |= 1 << suit
        self.taken[seat] += value
        self.marriages[seat] = (*self.marriages[seat], suit)
        out.append(Event(ev.MARRIAGE, None, seat, value, (), letter))
        if suit != ACE_SUIT:
            out.append(Event(ev.TRUMP, None, seat, suit))

    def _why_not_playable(self, seat: int, c: Card) -> tuple[str, str]:
        led = self.trick[0] // 6
        hand = self.hands[seat]
        if hand & SUIT_MASKS[led] and c // 6 != led:
            return "must_follow_suit", "you must follow suit"
        if self.trump >= 0 and hand & SUIT_MASKS[self.trump] and c // 6 != self.trump and c // 6 != led:
            return "must_trump", "you must play a trump"
        return "must_beat", "you must beat the trick"

    def _close_trick(self, out: list[Event]) -> None:
        trick = self.trick
        seats = self.trick_seats
        if self.crawl:
            out.append(Event(ev.CRAWL_REVEALED, None, -1, 0, trick, seats))
        best = trick_winner(trick, self.trump, self.crawl)
        winner = seats[best]
        points = 0
        tmask = 0
        for c in trick:
            points += CARD_POINTS[c]
            tmask |= 1 << c
        self.taken[winner] += points
        self.won[winner] |= tmask
        self.played |= tmask
        self.tricks += 1
        self.trick_history = (*self.trick_history, (trick, seats, self.trump))
        self.crawl = False
        self.trick = ()
        self.trick_seats = ()
        self.leader = winner
        self.to_act = winner
        self.last_winner = winner
        out.append(Event(ev.TRICK_TAKEN, None, winner, points, trick, seats))
        if not self.hands[winner]:
            if self.piles is not None:
                piles = self.piles[1 - self.pile] + self.discard
                pts = sum(CARD_POINTS[c] for c in piles)
                self.taken[winner] += pts
                out.append(Event(ev.PILES_TAKEN, None, winner, pts, piles))
            self._finish(out, "played")

    # --- end

    def _note_four_nines(self) -> None:
        if self.rules.four_nines_bonus:
            for s in self.active:
                if self.hands[s] & NINES == NINES:
                    self.four_nines |= 1 << s

    def _finish(self, out: list[Event], ending: str) -> None:
        self.phase = Phase.DONE
        self.to_act = -1
        self.ending = ending

    def outcome(self) -> DealOutcome:
        """The deal's result before match scoring; only for a finished deal."""
        ending = self.ending
        if ending == "played":
            points = tuple(self.taken)
            made: bool | None = points[self.declarer] >= self.contract
            marriages = tuple(self.marriages)
        else:
            points = (0,) * self.n
            made = None
            marriages = ((),) * self.n
        return DealOutcome(
            declarer=self.declarer,
            contract=self.contract,
            made=made,
            points=points,
            marriages=marriages,
            ending=ending,
            blind=self.blind_seat >= 0 and self.blind_seat == self.declarer,
            four_nines=tuple(s for s in range(self.n) if self.four_nines >> s & 1),
            talon_as_dealt=self.talon_as_dealt,
            sitting_out=self.sitting_out,
            talon_public=self.talon_public and self.piles is None,
        )


def new_deal(
    rules: RuleSet,
    players: int,
    layout: DealLayout,
    *,
    number: int = 0,
    bomb_allowed: int = 0,
) -> tuple[DealState, list[Event]]:
    """Start a deal from a layout; ``bomb_allowed`` is a bit mask of seats that have not bombed yet."""
    d = _blank_deal()
    d.rules = rules
    d.n = players
    d.number = number
    d.dealer = layout.dealer
    d.active = active_seats(rules, players, layout.dealer)
    d.successor = successor_seats(players, d.active)
    d.hands = list(layout.hands)
    d.piles = layout.piles
    d.talon = layout.talon
    d.talon_as_dealt = layout.talon if layout.piles is None else layout.piles[0] + layout.piles[1]
    d.bid = 0
    d.bidder = -1
    d.passed = 0
    d.has_bid = 0
    d.forced = False
    d.golden = number < rules.golden_rounds
    d.blind_seat = -1
    d.hand_seen = 0
    d.bomb_allowed = bomb_allowed if rules.bomb and players == 3 else 0
    d.seller = -1
    d.sale_bid = 0
    d.sale_bidder = -1
    d.sale_passed = 0
    d.declarer = -1
    d.contract = 0
    d.talon_public = False
    d.pile = -1
    d.discard = ()
    d.trump = -1
    d.trick = ()
    d.trick_seats = ()
    d.trick_history = ()
    d.leader = -1
    d.tricks = 0
    d.taken = [0] * players
    d.won = [0] * players
    d.marriages = [()] * players
    d.declared = 0
    d.played = 0
    d.crawl = False
    d.four_nines = 0
    d.last_winner = -1
    d.ending = ""
    d.choice = rules.declaration == Declaration.CHOICE
    d.must_beat = rules.must_beat
    d.crawl_ok = rules.crawl
    d.min_cards = rules.marriage_min_cards
    out = [Event(ev.DEAL_STARTED, None, layout.dealer, number, d.active)]
    d._note_four_nines()
    opener = d.active[0]
    if rules.blind:
        d.phase = Phase.BLIND
        d.to_act = opener
        for s in d.active:
            if s != opener:
                d._show_hand(s, out)
        return d, out
    for s in d.active:
        d._show_hand(s, out)
    d.phase = Phase.BIDDING
    if rules.opening == Opening.AUTOMATIC:
        d.bid = d._opening_min()
        d.bidder = opener
        d.forced = True
        out.append(Event(ev.BID, None, opener, d.bid, (), "automatic"))
        d.to_act = d.next_active(opener)
    else:
        d.to_act = opener
    return d, out


_PLAYS_LOW: Final = tuple(tuple(PLAYS[c] for c in cards_of(m)) for m in range(4096))
_PLAYS_HIGH: Final = tuple(tuple(PLAYS[c] for c in cards_of(m << 12)) for m in range(4096))
_QK_ALL: Final = MARRIAGE_MASKS[0] | MARRIAGE_MASKS[1] | MARRIAGE_MASKS[2] | MARRIAGE_MASKS[3]
_DECLARABLE: Final = _QK_ALL | ACES


def _blank_deal() -> DealState:
    """An uninitialised instance: every field is set by ``new_deal`` or ``copy`` right after."""
    return DealState.__new__(DealState)


def _marriage_sum(rules: RuleSet, hand: CardMask) -> int:
    total = 0
    for s in range(4):
        m = MARRIAGE_MASKS[s]
        if hand & m == m:
            total += rules.marriage_value(s)
    if rules.ace_marriage and hand & ACES == ACES:
        total += rules.ace_marriage_value
    return total


def _floor(value: int, step: int) -> int:
    return value - value % step


class GiveChoices(Sequence[Action]):
    """Every way to give one card to each other player, plus extra actions (bomb, concede), lazily.

    Listing them eagerly would allocate up to a few hundred actions per exchange; this sequence
    answers ``len``, indexing, iteration and ``in`` without building them.
    """

    __slots__ = ("_cards", "_extra", "_hand", "_others")

    def __init__(self, deal: DealState, extra: list[Action]) -> None:
        seat = deal.to_act
        self._others = tuple(sorted(s for s in deal.active if s != seat))
        self._hand = deal.hands[seat]
        self._cards = cards_of(self._hand)
        self._extra = extra

    def __len__(self) -> int:
        n = len(self._cards)
        total = 1
        for i in range(len(self._others)):
            total *= n - i
        return total + len(self._extra)

    @overload
    def __getitem__(self, index: int) -> Action: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...
    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        if isinstance(index, slice):
            return list(self)[index]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        gives = size - len(self._extra)
        if index >= gives:
            return self._extra[index - gives]
        pool = list(self._cards)
        picks = []
        block = gives
        for _ in self._others:
            block //= len(pool)
            r, index = divmod(index, block)
            picks.append(pool.pop(r))
        return Give(tuple(zip(self._others, picks, strict=True)))

    def __iter__(self) -> Iterator[Action]:
        for combo in permutations(self._cards, len(self._others)):
            yield Give(tuple(zip(self._others, combo, strict=True)))
        yield from self._extra

    def __contains__(self, action: object) -> bool:
        if type(action) is Give:
            targets = tuple(t for t, _ in action.cards)
            m = mask_of(c for _, c in action.cards)
            return targets == self._others and m.bit_count() == len(targets) and not m & ~self._hand
        return action in self._extra


class DiscardChoices(Sequence[Action]):
    """Every pair of cards the declarer may lay down in the two-musiki game, lazily."""

    __slots__ = ("_cards", "_hand", "_k")

    def __init__(self, hand: CardMask, k: int) -> None:
        self._hand = hand
        self._cards = cards_of(hand)
        self._k = k

    def __len__(self) -> int:
        n = len(self._cards)
        return n * (n - 1) // 2 if self._k == 2 else len(list(combinations(self._cards, self._k)))

    @overload
    def __getitem__(self, index: int) -> Action: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...
    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        return list(self)[index]

    def __iter__(self) -> Iterator[Action]:
        for combo in combinations(self._cards, self._k):
            yield Discard(combo)

    def __contains__(self, action: object) -> bool:
        if type(action) is not Discard:
            return False
        m = mask_of(action.cards)
        return len(action.cards) == self._k and m.bit_count() == self._k and not m & ~self._hand
