"""The match: deals one after another until a total reaches the target.

The public surface is OpenSpiel's, and only that: :meth:`GameState.legal_actions` lists exactly what a
seat may do now, :meth:`GameState.apply_action` applies an action in place and returns the events it
caused (a refused one raises :class:`~core.errors.IllegalAction` and changes nothing), and
:meth:`GameState.clone` makes an independent copy for a caller that must keep the state it had.  One way
to act, so every caller reads the same: ``new = state.clone(); events = new.apply_action(seat, a)``.
:func:`new_game` and :func:`replace_deal` make states.  Deals are dealt from the game's seed, so a game
is reproducible; a replayed record lays its own deals instead.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from . import events as ev
from .actions import Action
from .cards import DECK_SIZE, Card
from .deal import DealLayout, DealState, Phase, deal_cards, new_deal
from .errors import GameOver, IllegalAction
from .events import Event
from .rules import RuleSet
from .scoring import DealResult, MatchTally, match_winner, score_deal

ActionLog = tuple[Any, tuple[int, Action]] | None
"""A persistent list of (seat, action), newest first: appending is O(1) and shares the past."""


class GameState:
    """A match in progress or finished.  :meth:`apply_action` changes it; :meth:`clone` keeps a copy."""

    rules: RuleSet
    players: int
    seed: int
    deal: DealState
    layout: DealLayout
    tally: MatchTally
    bombs_left: int
    results: tuple[DealResult, ...]
    history: tuple[tuple[DealLayout, ActionLog], ...]
    """Each finished deal's layout and action log, for records."""
    log: ActionLog
    deal_number: int
    winner: int | tuple[int, ...] | None
    finished: bool

    def _shallow(self) -> GameState:
        """A new state sharing this one's deal (the caller replaces the deal before changing it)."""
        new = GameState.__new__(GameState)
        new.rules = self.rules
        new.players = self.players
        new.seed = self.seed
        new.deal = self.deal
        new.layout = self.layout
        new.tally = self.tally
        new.bombs_left = self.bombs_left
        new.results = self.results
        new.history = self.history
        new.log = self.log
        new.deal_number = self.deal_number
        new.winner = self.winner
        new.finished = self.finished
        return new

    # Queries

    @property
    def to_act(self) -> int | None:
        """The seat whose action the game waits for, or None when the game is over."""
        return None if self.finished else self.deal.to_act

    @property
    def phase(self) -> str:
        return Phase.DONE if self.finished else self.deal.phase

    @property
    def totals(self) -> tuple[int, ...]:
        return self.tally.totals

    def legal_actions(self, seat: int | None = None) -> Sequence[Action]:
        """Exactly the actions ``seat`` (default: the seat to act) may take now; empty when it is not
        their turn."""
        deal = self.deal
        return deal.legal_actions(deal.to_act if seat is None else seat)

    def actions_this_deal(self) -> tuple[tuple[int, Action], ...]:
        return unroll(self.log)

    def clone(self) -> GameState:
        """An independent copy: what `apply_action` does to one leaves the other as it was."""
        new = self._shallow()
        new.deal = self.deal.copy()
        return new

    def apply_action(self, seat: int, action: Action) -> list[Event]:
        """Apply ``action`` by ``seat`` in place (OpenSpiel's ``apply_action``); the events it caused,
        each with its audience.

        Checks come before any change, so a refused action (:class:`IllegalAction`, or
        :class:`GameOver` once the game is finished) leaves this state as it was.
        """
        if self.finished:
            raise GameOver()
        out: list[Event] = []
        self.deal.apply(seat, action, out)
        self.log = (self.log, (seat, action))
        if self.deal.phase == Phase.DONE:
            self._end_deal(out)
        return out

    # Internal steps: they change this state (a clone, or a fresh one being built).

    def _start_deal(self, layout: DealLayout, out: list[Event]) -> None:
        self.layout = layout
        deal, events = new_deal(
            self.rules, self.players, layout, number=self.deal_number, bomb_allowed=self.bombs_left
        )
        self.deal = deal
        self.log = None
        out.extend(events)

    def _end_deal(self, out: list[Event]) -> None:
        deal = self.deal
        outcome = deal.outcome()
        result, tally = score_deal(self.rules, self.tally, outcome, self.deal_number, deal.dealer)
        self.tally = tally
        self.results = (*self.results, result)
        self.history = (*self.history, (self.layout, self.log))
        if outcome.ending == "bomb":
            self.bombs_left &= ~(1 << outcome.declarer)
        out.append(Event(ev.DEAL_ENDED, None, deal.declarer, deal.contract, (), result))
        self.deal_number += 1
        self.winner = match_winner(self.rules, tally.totals, outcome.declarer)
        if self.winner is not None:
            self.finished = True
            self.log = None
            out.append(Event(ev.GAME_ENDED, None, -1, 0, (), self.winner))
            return
        dealer = deal.dealer if outcome.ending == "redeal" else (deal.dealer + 1) % self.players
        layout = deal_cards(self.rules, self.players, dealer, shuffled_deck(self.seed, self.deal_number))
        self._start_deal(layout, out)


def unroll(log: ActionLog) -> tuple[tuple[int, Action], ...]:
    """The actions of a log, oldest first."""
    out: list[tuple[int, Action]] = []
    while log is not None:
        log, item = log
        out.append(item)
    out.reverse()
    return tuple(out)


def shuffled_deck(seed: int, number: int) -> list[Card]:
    """The deck of deal ``number`` of a game with ``seed``: the same on every machine and run."""
    deck = list(range(DECK_SIZE))
    random.Random(seed * 4_294_967_311 + number).shuffle(deck)
    return deck


def new_game(
    rules: RuleSet,
    players: int,
    seed: int = 0,
    *,
    first_dealer: int | None = None,
    layout: DealLayout | None = None,
) -> tuple[GameState, list[Event]]:
    """Start a match; the first deal is dealt from the seed unless a layout is given."""
    rules.check_players(players)
    g = GameState.__new__(GameState)
    g.rules = rules
    g.players = players
    g.seed = seed
    g.tally = MatchTally.start(players)
    g.bombs_left = (1 << players) - 1
    g.results = ()
    g.history = ()
    g.log = None
    g.deal_number = 0
    g.winner = None
    g.finished = False
    dealer = (seed % players if first_dealer is None else first_dealer) if layout is None else layout.dealer
    if layout is None:
        layout = deal_cards(rules, players, dealer, shuffled_deck(seed, 0))
    out: list[Event] = []
    g._start_deal(layout, out)
    return g, out


def replace_deal(state: GameState, layout: DealLayout) -> tuple[GameState, list[Event]]:
    """Lay the current deal out differently (a replayed record); only before its first action."""
    if state.finished:
        raise GameOver()
    if state.log is not None:
        raise IllegalAction("deal_started", "the deal has already begun")
    if layout.dealer != state.layout.dealer:
        raise IllegalAction("wrong_dealer", f"the dealer of this deal is seat {state.layout.dealer}")
    new = state._shallow()
    out: list[Event] = []
    new._start_deal(layout, out)
    return new, out
