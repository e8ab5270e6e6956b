"""The computer players' fast play simulator agrees with the engine, move by move."""

from __future__ import annotations

import random

import pytest

from core.actions import Crawl, Play
from core.ai.play import action_of, move_of
from core.ai.sim import sim_from_deal
from core.deal import Phase
from core.game import new_game
from core.rules import preset

CONFIGS = [
    ("polish", 2, {}),
    ("polish", 3, {}),
    ("polish", 4, {}),
    ("estonian", 2, {}),
    ("estonian", 3, {}),
    ("estonian", 4, {}),
    ("russian", 3, {}),
    ("russian", 4, {}),
    ("polish", 3, {"must_beat": True, "ace_marriage": True}),
    ("estonian", 3, {"must_beat": True, "ace_marriage": True}),
]


@pytest.mark.parametrize(("name", "players", "options"), CONFIGS)
def test_simulator_matches_engine(name: str, players: int, options: dict[str, object]) -> None:
    rules = preset(name, options) if options else preset(name)
    rng = random.Random(players * 31 + len(name))
    checked = 0
    for seed in range(25):
        state, _ = new_game(rules, players, seed=seed)
        # Random bidding and exchange, up to the play.
        while state.deal.phase != Phase.PLAY and not state.finished:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
            if state.results:
                break
        if state.results or state.deal.phase != Phase.PLAY:
            continue
        sim = sim_from_deal(state.deal)
        while True:
            deal = state.deal
            seat = deal.to_act
            legal = list(state.legal_actions(seat))
            assert sorted(sim.legal()) == sorted(move_of(a) for a in legal)
            action = legal[rng.randrange(len(legal))]
            assert action_of(move_of(action)) == action
            assert type(action) in (Play, Crawl)
            sim.play(move_of(action))
            before = len(state.results)
            state.apply_action(seat, action)
            checked += 1
            if len(state.results) > before:
                assert sim.done
                assert tuple(sim.taken) == state.results[-1].points
                break
            deal = state.deal
            assert not sim.done
            assert sim.to_act == deal.to_act
            assert sim.trump == deal.trump
            assert tuple(sim.trick) == deal.trick
            assert sim.tricks == deal.tricks
            assert sim.taken == deal.taken
            assert sim.declared == deal.declared
            assert sim.hands == deal.hands
    assert checked > 100


@pytest.mark.parametrize(("name", "players", "options"), CONFIGS)
def test_fast_rollout_plays_the_policy(name: str, players: int, options: dict[str, object]) -> None:
    """The inlined playout loop makes exactly the moves of the step-by-step policy."""
    from core.ai.rollout import heuristic_move, rollout

    rules = preset(name, options) if options else preset(name)
    rng = random.Random(7)
    compared = 0
    for seed in range(30):
        state, _ = new_game(rules, players, seed=seed)
        while state.deal.phase != Phase.PLAY and not state.results:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
        if state.results:
            continue
        # A few random cards first, then both ways to the end.
        for _ in range(rng.randrange(8)):
            seat = state.deal.to_act
            legal = state.legal_actions(seat)
            before = len(state.results)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
            if len(state.results) > before:
                break
        if state.results:
            continue
        fast = sim_from_deal(state.deal)
        slow = fast.clone()
        rollout(fast)
        while not slow.done:
            slow.play(heuristic_move(slow))
        assert fast.taken == slow.taken and fast.hands == slow.hands and fast.trump == slow.trump
        compared += 1
    assert compared >= 10
