"""What a group may see of a table, and what one player may see: the only inputs of the renderers.

Group messages are rendered from a `PublicTableView`, which is built field by field from what the rules
make public (bids, the talon when shown, played cards, points taken, totals), and never holds a hand,
a secret talon or a card given. Private messages are rendered from `core.view.seat_view`, which holds
exactly what one seat may know. So no renderer for a group can put a private card into a message: it
has none to put (and `tests/bot/test_privacy.py` checks it over random games).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.table import SeatDoc, TableDoc
from core.actions import Bid, Pass, SellTalon
from core.cards import CARD_POINTS
from core.deal import Phase, new_deal
from core.errors import IllegalAction
from core.game import GameState, unroll
from core.rules import Opening, RuleSet
from core.scoring import DealResult
from core.view import HIDDEN

__all__ = [
    "HIDDEN",
    "CompletedTrick",
    "PublicTableView",
    "SeatLabel",
    "previous_tricks",
    "public_view",
    "seat_labels",
]


@dataclass(frozen=True, slots=True)
class SeatLabel:
    """How a seat is shown: a name, whether a computer plays it (and why)."""

    name: str
    computer: bool
    level: str | None
    away: bool

    @classmethod
    def of(cls, seat: SeatDoc) -> SeatLabel:
        return cls(seat.name, seat.kind == "ai" or seat.kicked, seat.level, seat.away)


def seat_labels(table: TableDoc) -> tuple[SeatLabel, ...]:
    return tuple(SeatLabel.of(s) for s in table.seats)


@dataclass(frozen=True, slots=True)
class CompletedTrick:
    """A trick once it is taken: every card face up (a crawl's cards are shown when it closes), who
    took it and the card points in it. Public: everyone at the table saw it played."""

    cards: tuple[int, ...]
    seats: tuple[int, ...]
    winner: int
    points: int


def completed_tricks(
    history: tuple[tuple[tuple[int, ...], tuple[int, ...], int], ...], last_winner: int
) -> tuple[CompletedTrick, ...]:
    """The tricks of a deal's `trick_history`: each trick's winner leads the next one, and the deal's
    `last_winner` took the last."""
    out: list[CompletedTrick] = []
    for i, (cards, seats, _) in enumerate(history):
        winner = history[i + 1][1][0] if i + 1 < len(history) else last_winner
        out.append(CompletedTrick(cards, seats, winner, sum(CARD_POINTS[c] for c in cards)))
    return tuple(out)


def previous_tricks(state: GameState, number: int | None = None) -> tuple[CompletedTrick, ...]:
    """The tricks of finished deal `number` (the last one by default), replayed from its layout and
    actions (the state keeps only the current deal's). Public; empty when it had no tricks."""
    if not state.history:
        return ()
    number = len(state.history) - 1 if number is None else number
    layout, log = state.history[number]
    # Every seat may bomb in the replay: the log holds only actions the game accepted then.
    everyone = (1 << state.players) - 1
    deal, _ = new_deal(state.rules, state.players, layout, number=number, bomb_allowed=everyone)
    try:
        for seat, action in unroll(log):
            deal.apply(seat, action, [])
    except IllegalAction:  # pragma: no cover - a stored game replays as it was played
        return ()
    return completed_tricks(deal.trick_history, deal.last_winner)


@dataclass(frozen=True, slots=True)
class PublicTableView:
    """A game as everyone at the table sees it."""

    rules: RuleSet
    seats: tuple[SeatLabel, ...]
    deal_number: int
    dealer: int
    active: tuple[int, ...]
    phase: str
    to_act: int
    auction: tuple[tuple[int, int], ...]
    """(seat, bid), 0 for a pass; an automatic opening first."""
    sale: tuple[tuple[int, int], ...]
    declarer: int
    bid: int
    contract: int
    forced: bool
    blind_seat: int
    talon: tuple[int, ...]
    """The talon as dealt when it was shown to everyone (whoever won the auction, a computer too), else
    empty: a secret talon, two musiki, a blind game's. It stays set for the whole deal; `talon_on_table`
    says when to show it, and the deal's result names it again (`DealResult.talon`)."""
    talon_size: int
    talon_taken: bool
    trump: int
    trick: tuple[int, ...]
    """The current trick, `HIDDEN` for a face-down crawl card."""
    trick_seats: tuple[int, ...]
    crawl: bool
    last_trick: tuple[tuple[int, ...], tuple[int, ...], int] | None
    """The previous trick of this deal as (cards, seats, winner)."""
    tricks: int
    taken: tuple[int, ...]
    marriages: tuple[tuple[int, ...], ...]
    hand_counts: tuple[int, ...]
    totals: tuple[int, ...]
    barrel: tuple[bool, ...]
    bolts: tuple[int, ...]
    results: tuple[DealResult, ...]
    finished: bool
    winner: int | tuple[int, ...] | None
    completed: tuple[CompletedTrick, ...] = ()
    """Every trick taken so far in this deal, in order (the web table shows each one)."""

    @property
    def talon_on_table(self) -> bool:
        """Show the public talon now: from when it is shown until the first trick is over. A computer
        declarer takes it, gives and fixes the contract before anyone's view is drawn, so play may begin
        before anyone saw the talon: it stays on the table through the first trick (chats and web)."""
        return bool(self.talon) and (self.phase not in (Phase.PLAY, Phase.DONE) or self.tricks == 0)


def public_view(table: TableDoc, state: GameState) -> PublicTableView:
    """The public part of a game: copies only fields the rules make public."""
    deal = state.deal
    rules = state.rules
    auction: list[tuple[int, int]] = []
    if rules.opening == Opening.AUTOMATIC:
        opening = max(rules.opening_bid, 120) if deal.golden else rules.opening_bid
        auction.append((deal.opener, opening))
    sale: list[tuple[int, int]] = []
    target = auction
    for seat, action in state.actions_this_deal():
        if type(action) is SellTalon:
            target = sale
        elif type(action) is Bid:
            target.append((seat, action.value))
        elif type(action) is Pass:
            target.append((seat, 0))
    last = None
    if deal.trick_history:
        cards, seats, _ = deal.trick_history[-1]
        last = (cards, seats, deal.last_winner)
    trick = deal.trick
    if deal.crawl:
        trick = tuple(HIDDEN for _ in trick)
    talon_taken = deal.declarer >= 0 and deal.phase not in (Phase.BIDDING, Phase.TALON, Phase.SALE)
    return PublicTableView(
        rules=rules,
        seats=seat_labels(table),
        deal_number=deal.number,
        dealer=deal.dealer,
        active=deal.active,
        phase=state.phase,
        to_act=-1 if state.finished else deal.to_act,
        auction=tuple(auction),
        sale=tuple(sale),
        declarer=deal.declarer,
        bid=deal.bid,
        contract=deal.contract,
        forced=deal.forced,
        blind_seat=deal.blind_seat,
        talon=deal.talon_as_dealt if deal.talon_public and deal.piles is None else (),
        talon_size=len(deal.talon_as_dealt),
        talon_taken=talon_taken,
        trump=deal.trump,
        trick=trick,
        trick_seats=deal.trick_seats,
        crawl=deal.crawl,
        last_trick=last,
        tricks=deal.tricks,
        taken=tuple(deal.taken),
        marriages=tuple(deal.marriages),
        hand_counts=tuple(h.bit_count() for h in deal.hands),
        totals=state.tally.totals,
        barrel=state.tally.barrel_flags(rules),
        bolts=state.tally.bolts,
        results=state.results,
        finished=state.finished,
        winner=state.winner,
        completed=completed_tricks(deal.trick_history, deal.last_winner),
    )
