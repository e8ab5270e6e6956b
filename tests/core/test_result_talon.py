"""A deal's result names the talon only when everyone was shown it (`DealResult.talon`): the chats and the
web show it from there after the deal, when its cards are in new hands. A secret talon (Estonian, a
forced Polish 100), the two musiki and a blind declarer's talon dealt out face down are never in it."""

from __future__ import annotations

import pytest

from core.ai import choose_action
from core.game import new_game
from core.rules import preset
from core.view import seat_view


@pytest.mark.parametrize(
    ("rules_name", "players"),
    [("polish", 3), ("polish", 2), ("estonian", 3), ("russian", 3), ("russian", 4)],
)
def test_the_result_names_only_a_talon_everyone_saw(rules_name: str, players: int) -> None:
    public = secret = 0
    for seed in range(3):
        state, _ = new_game(preset(rules_name), players, seed)
        for step in range(1500):
            if state.finished or len(state.results) >= 5:
                break
            seat = state.to_act
            assert seat is not None and seat >= 0
            view = seat_view(state, seat)
            before = state
            state = before.clone()  # `before` is read when the deal ended
            state.apply_action(seat, choose_action("easy", view, state.legal_actions(seat), seed=step))
            if len(state.results) == len(before.results):
                continue
            deal, result = before.deal, state.results[-1]
            if deal.talon_public and deal.piles is None:
                public += 1
                assert result.talon == deal.talon_as_dealt
            else:
                secret += 1
                assert result.talon == ()
    assert public + secret >= 10
    if rules_name == "estonian" or players == 2:
        assert public == 0
    if rules_name == "russian":
        assert public > 0
