"""The hard player's endgame solver gives the exact minimax value of open-card positions."""

from __future__ import annotations

import random

import pytest

from core.ai.endgame import align, declarer_verdicts, position_verdict, solve_root
from core.ai.sim import Sim, sim_from_deal
from core.ai.solver import NO_LIMIT, NodeLimit
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


def _positions(name: str, players: int, cards: int, count: int) -> list[Sim]:
    """Card-play positions with at most ``cards`` cards left in all hands, after random play."""
    rules = preset(name)
    rng = random.Random(11)
    out: list[Sim] = []
    seed = 0
    while len(out) < count:
        seed += 1
        state, _ = new_game(rules, players, seed=1000 + seed)
        while not state.results and (
            state.deal.phase != Phase.PLAY or sum(h.bit_count() for h in state.deal.hands) > cards
        ):
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
        if not state.results:
            out.append(sim_from_deal(state.deal))
    return out


@pytest.mark.parametrize(("name", "players"), [("polish", 3), ("russian", 3), ("polish", 2)])
def test_verdicts_say_whether_the_contract_is_made_as_the_exact_value_does(name: str, players: int) -> None:
    """The hard player's null-window verdicts against the exact values of the same positions."""
    checked = 0
    for sim in _positions(name, players, 12, 25):
        moves = sim.legal()
        exact, _ = solve_root(sim, moves)
        bounds, nodes = declarer_verdicts(sim, moves, NO_LIMIT)
        assert nodes > 0
        for (value, _), bound in zip(exact, bounds, strict=True):
            made = value >= sim.contract
            assert (bound >= sim.contract) == made
            # A made verdict is a lower bound of the value, a failed one an upper bound.
            assert bound <= value if made else bound >= value
            checked += 1
        bound, _ = position_verdict(sim, NO_LIMIT)
        pick = max if sim.to_act == sim.declarer else min
        assert (bound >= sim.contract) == (pick(v for v, _ in exact) >= sim.contract)
    assert checked >= 50


def test_node_limit_stops_the_search() -> None:
    sim = _positions("polish", 3, 24, 1)[0]
    moves = sim.legal()
    with pytest.raises(NodeLimit):
        solve_root(sim, moves, -1, 50)
    bounds, nodes = declarer_verdicts(sim, moves, 1)
    assert bounds[0] == -1 and nodes >= 1


def test_align_makes_the_playout_agree_with_the_verdict() -> None:
    sim = _positions("polish", 3, 24, 1)[0]
    decl = sim.declarer
    contract = sim.contract
    pts = [30, 30, 30]
    pts[decl] = contract - 20
    made = align(pts, sim, contract + 5, contract)
    assert made[decl] == contract + 5 and sum(made) == sum(pts)
    pts[decl] = contract + 10
    failed = align(pts, sim, contract - 1, contract)
    assert failed[decl] == contract - 1 and sum(failed) == sum(pts)
    assert align(pts, sim, -1, contract) == pts
    assert align(pts, sim, contract, contract) == pts
