"""Helpers for the engine's tests: hand-built deals, short action names, and state snapshots.

Rule tests read best as "these hands, these actions, this result", so a deal is written as card text
(``"AH KH QH"``) and the cards nobody cares about are filled in automatically.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from core.actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    SELL,
    Action,
    Bid,
    Contract,
    Discard,
    Give,
    Play,
    TakeTalon,
)
from core.cards import DECK_SIZE, Card, cards_of, mask_of, parse_card
from core.deal import DealLayout, DealState, active_seats, check_layout, layout_shape
from core.errors import IllegalAction
from core.events import Event
from core.game import GameState, new_game
from core.rules import RuleSet
from core.scoring import MatchTally

__all__ = [
    "BLIND_NO",
    "BLIND_YES",
    "BOMB",
    "CONCEDE",
    "CRAWL",
    "PASS",
    "SELL",
    "Game",
    "bid",
    "c",
    "contract",
    "cs",
    "discard",
    "give",
    "layout",
    "play",
    "snapshot",
    "take",
    "with_tally",
]


def c(token: str) -> Card:
    return parse_card(token)


def cs(text: str) -> list[Card]:
    return [parse_card(t) for t in text.split()]


def bid(value: int) -> Bid:
    return Bid(value)


def contract(value: int) -> Contract:
    return Contract(value)


def play(token: str, declare: bool = False) -> Play:
    return Play(parse_card(token), declare)


def give(mapping: dict[int, str]) -> Give:
    return Give(tuple(sorted((seat, parse_card(t)) for seat, t in mapping.items())))


def discard(text: str) -> Discard:
    return Discard(tuple(sorted(cs(text))))


def take(pile: int = 0) -> TakeTalon:
    return TakeTalon(pile)


def layout(
    rules: RuleSet,
    players: int,
    dealer: int,
    hands: dict[int, str] | None = None,
    talon: str | None = None,
    piles: tuple[str, str] | None = None,
) -> DealLayout:
    """A legal layout with the given hands/talon; every card not named fills the rest in deck order."""
    hands = hands or {}
    active = active_seats(rules, players, dealer)
    _, per_hand, npiles = layout_shape(rules, players)
    used: set[Card] = set()
    masks = [0] * players
    for seat, text in hands.items():
        cards = cs(text)
        assert len(cards) <= per_hand, f"seat {seat}: {len(cards)} cards"
        masks[seat] = mask_of(cards)
        used.update(cards)
    fixed_talon = cs(talon) if talon else []
    fixed_piles = [cs(p) for p in piles] if piles else [[], []]
    used.update(fixed_talon)
    for p in fixed_piles:
        used.update(p)
    free = [x for x in range(DECK_SIZE) if x not in used]
    for seat in active:
        while masks[seat].bit_count() < per_hand:
            masks[seat] |= 1 << free.pop(0)
    if npiles == 2:
        ps = [list(p) for p in fixed_piles]
        for p in ps:
            while len(p) < 2:
                p.append(free.pop(0))
        out = DealLayout(dealer, tuple(masks), piles=(tuple(ps[0]), tuple(ps[1])))
    else:
        t = list(fixed_talon)
        while len(t) < len(active):
            t.append(free.pop(0))
        out = DealLayout(dealer, tuple(masks), talon=tuple(t))
    problem = check_layout(rules, players, out)
    assert problem is None, problem
    assert not free, f"cards left over: {free}"
    return out


def with_tally(
    state: GameState,
    totals: Sequence[int],
    *,
    on_barrel: Sequence[bool] | None = None,
    barrel_deals: Sequence[int] | None = None,
    bolts: Sequence[int] | None = None,
) -> GameState:
    """A copy of a fresh game with the match totals set, as if earlier deals had been played."""
    n = len(totals)
    new = state.clone()
    new.tally = MatchTally(
        tuple(totals),
        tuple(on_barrel) if on_barrel is not None else (False,) * n,
        tuple(barrel_deals) if barrel_deals is not None else (0,) * n,
        tuple(bolts) if bolts is not None else (0,) * n,
    )
    return new


_DEAL_FIELDS = tuple(DealState.__annotations__)
_LIST_FIELDS = frozenset({"hands", "taken", "won", "marriages"})


def snapshot(state: GameState) -> Any:
    """Everything observable about a state, to check that a refused action changed nothing."""
    d = state.deal
    fields = tuple(
        (tuple(value) if name in _LIST_FIELDS else value)
        for name in _DEAL_FIELDS
        for value in (getattr(d, name, None),)
    )
    return (
        fields,
        state.tally,
        state.results,
        state.history,
        state.log,
        state.deal_number,
        state.winner,
        state.finished,
        state.bombs_left,
    )


class Game:
    """A game driven step by step; keeps every event so tests can check audiences."""

    def __init__(
        self,
        rules: RuleSet,
        players: int,
        deal: DealLayout | None = None,
        *,
        seed: int = 0,
        state: GameState | None = None,
    ) -> None:
        if state is None:
            state, events = new_game(rules, players, seed, layout=deal)
        else:
            events = []
        self.state = state
        self.events: list[Event] = list(events)
        self.last: list[Event] = list(events)

    @property
    def deal(self) -> Any:
        return self.state.deal

    @property
    def to_act(self) -> int | None:
        return self.state.to_act

    def legal(self, seat: int | None = None) -> Sequence[Action]:
        s = self.state.deal.to_act if seat is None else seat
        return self.state.legal_actions(s)

    def act(self, seat: int, action: Action) -> list[Event]:
        self.state = self.state.clone()  # a test may hold the state it had
        self.last = self.state.apply_action(seat, action)
        self.events.extend(self.last)
        return self.last

    def run(self, steps: Iterable[tuple[int, Action]]) -> Game:
        for seat, action in steps:
            self.act(seat, action)
        return self

    def refuse(self, seat: int, action: Action) -> str:
        """Apply an action that must be refused; check the state is unchanged; return the code."""
        before = snapshot(self.state)
        try:
            self.state.apply_action(seat, action)
        except IllegalAction as exc:
            assert snapshot(self.state) == before
            return exc.code
        raise AssertionError(f"{action} by seat {seat} was accepted")

    def hand(self, seat: int) -> list[Card]:
        return list(cards_of(self.state.deal.hands[seat]))

    def kinds(self, events: list[Event] | None = None) -> list[str]:
        return [e.kind for e in (self.events if events is None else events)]

    def play_out(self) -> Game:
        """Finish the current deal with the first legal action at every step (keep contracts, pass)."""
        number = self.state.deal_number
        while not self.state.finished and self.state.deal_number == number:
            seat = self.state.deal.to_act
            self.act(seat, self.legal(seat)[0])
        return self

    def play_tricks(self, cards: str) -> Game:
        """Play these cards in turn order (each by the seat to act)."""
        for token in cards.split():
            self.act(self.state.deal.to_act, play(token))
        return self
