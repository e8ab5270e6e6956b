"""The hard player's endgame solver gives the exact minimax value of open-card positions."""

from __future__ import annotations

import random

import pytest

from core.ai.endgame import solve_root
from core.ai.sim import Sim, sim_from_deal
from core.deal import Phase
from core.game import new_game
from core.rules import preset


def _brute(sim: Sim) -> int:
    """Declarer's final points with the declarer maximizing and the defenders minimizing them."""
    if sim.done:
        return sim.taken[sim.declarer]
    values = []
    for m in sim.legal():
        s = sim.clone()
        s.play(m)
        values.append(_brute(s))
    return max(values) if sim.to_act == sim.declarer else min(values)


@pytest.mark.parametrize(("name", "players"), [("polish", 3), ("russian", 3), ("estonian", 3), ("polish", 2)])
def test_solver_matches_brute_force(name: str, players: int) -> None:
    rules = preset(name)
    rng = random.Random(5)
    checked = 0
    for seed in range(60):
        state, _ = new_game(rules, players, seed=seed)
        while not state.results and (
            state.deal.phase != Phase.PLAY or sum(h.bit_count() for h in state.deal.hands) > 7
        ):
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
        if state.results or state.deal.tricks == 0:
            continue
        sim = sim_from_deal(state.deal)
        moves = sim.legal()
        solved, nodes = solve_root(sim, moves)
        assert nodes >= 0
        for m, v in zip(moves, solved, strict=True):
            s = sim.clone()
            s.play(m)
            assert v == _brute(s)
        checked += 1
    assert checked >= 15
