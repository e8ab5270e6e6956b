"""The engine's own account of a deal: the oracle of the web tests that check every trick reaches the page
(issue 18). Replays the deal from its layout and actions and keeps the TRICK_TAKEN events, whose winner
and points the engine computed as it took each trick."""

from __future__ import annotations

from typing import Any

from core import events as ev
from core.cards import CARD_NAMES
from core.deal import DealState, new_deal
from core.events import Event
from core.game import GameState, unroll


def replayed(state: GameState, number: int) -> tuple[DealState, list[Event]]:
    """Deal `number` played again by the engine from its layout and actions, and its events."""
    if number < len(state.history):
        layout, log = state.history[number]
        actions = unroll(log)
    else:  # the deal in progress
        layout, actions = state.layout, state.actions_this_deal()
    everyone = (1 << state.players) - 1  # any bomb in the log was allowed when it was made
    deal, _ = new_deal(state.rules, state.players, layout, number=number, bomb_allowed=everyone)
    out: list[Event] = []
    for seat, action in actions:
        deal.apply(seat, action, out)
    return deal, out


def engine_tricks(state: GameState, number: int) -> list[dict[str, Any]]:
    """Deal `number`'s tricks as the engine reports them, in the view JSON's shape."""
    _, out = replayed(state, number)
    return [
        {
            "cards": [{"seat": s, "card": CARD_NAMES[c]} for c, s in zip(e.cards, e.detail, strict=True)],
            "winner": e.seat,
            "points": e.value,
        }
        for e in out
        if e.kind == ev.TRICK_TAKEN and isinstance(e.detail, tuple)
    ]


def talon_public(state: GameState, number: int) -> bool:
    """Whether deal `number`'s talon was shown to everyone (so every page shows it, whoever declared)."""
    deal, _ = replayed(state, number)
    return deal.talon_public and deal.piles is None
