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


def _brute_lex(sim: Sim, me: int) -> int:
    """``me``'s final points when the declarer maximizes (declarer points, then -me's points) and the
    defenders minimize it: the solver's tie-break for a deciding defender."""

    def value(s: Sim) -> tuple[int, int]:
        if s.done:
            return (s.taken[s.declarer], -s.taken[me])
        vals = []
        for m in s.legal():
            t = s.clone()
            t.play(m)
            vals.append(value(t))
        return max(vals) if s.to_act == s.declarer else min(vals)

    return -value(sim)[1]


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
        for m, (v, mine) in zip(moves, solved, strict=True):
            s = sim.clone()
            s.play(m)
            assert v == _brute(s) and mine == -1
        # A defender deciding: the declarer's points are the same, its own the best it can then get.
        defender = next(x for x in state.deal.active if x != sim.declarer)
        solved, _ = solve_root(sim, moves, defender)
        for m, (v, mine) in zip(moves, solved, strict=True):
            s = sim.clone()
            s.play(m)
            assert v == _brute(s)
            assert mine == _brute_lex(s, defender)
        checked += 1
    assert checked >= 15
