"""A deal with a known blunder, for the review's tests (`tests/ai/test_review.py`, the replay page's mark)."""

from __future__ import annotations

from core.actions import Action
from core.ai import choose_action
from core.ai.solver import option_values
from core.deal import Phase
from core.game import GameState, new_game
from core.rules import preset
from core.view import seat_view


def blunder_deal(seed: int = 65) -> tuple[GameState, list[tuple[int, Action]], int, GameState]:
    """A polish deal played by the easy player, where the declarer, on lead with three to five tricks
    played, leads a card that loses a contract open hands would make (seed 65: the first such deal where
    the review's cost is at least 10). The game as the deal began, its actions, the blunder's step, and
    the game at its end."""
    rules = preset("polish")
    state = new_game(rules, 3, seed=seed)[0]
    start = state
    actions: list[tuple[int, Action]] = []
    blunder = -1
    while state.deal_number == start.deal_number:
        s = state.deal.to_act
        d = state.deal
        action: Action | None = None
        if blunder < 0 and d.phase == Phase.PLAY and s == d.declarer and 3 <= d.tricks <= 5 and not d.trick:
            made = {a: v.declarer >= d.contract for a, v in option_values(state).items()}
            if any(made.values()) and not all(made.values()):
                action = next(a for a, m in made.items() if not m)
                blunder = len(actions)
        if action is None:
            action = choose_action(
                "easy", seat_view(state, s), list(state.legal_actions(s)), seed=len(actions)
            )
        actions.append((s, action))
        state = state.clone()
        state.apply_action(s, action)
    assert blunder >= 0
    return start, actions, blunder, state
