"""Every level answers with a legal action in every kind of position, deterministically per seed."""

from __future__ import annotations

import random

import pytest

from core.actions import Action
from core.ai import LEVELS, choose_action, default_budget
from core.ai.infer import TALON, knowledge, sample
from core.cards import SUIT_MASKS, mask_of
from core.game import GameState, new_game
from core.rules import preset
from core.view import seat_view

CONFIGS = [
    ("polish", 2, {}),
    ("polish", 3, {}),
    ("polish", 4, {}),
    ("estonian", 2, {}),
    ("estonian", 3, {}),
    ("estonian", 4, {}),
    ("russian", 3, {}),
    ("russian", 4, {}),
    ("polish", 3, {"sell_talon": True, "ace_marriage": True, "must_beat": True, "golden_rounds": 2}),
    ("russian", 3, {"sell_talon": True, "samosval": True}),
    (
        "estonian",
        3,
        {"sell_talon": True, "ace_marriage": True, "four_nines_bonus": 0, "redeal_four_nines": True},
    ),
]


def _rules(name: str, options: dict[str, object]) -> object:
    return preset(name, options) if options else preset(name)


@pytest.mark.parametrize(("name", "players", "options"), CONFIGS)
@pytest.mark.parametrize("level", ["random", "easy"])
def test_fast_levels_play_whole_games_legally(
    name: str, players: int, options: dict[str, object], level: str
) -> None:
    rules = preset(name, options) if options else preset(name)
    for game in range(2):
        state, _ = new_game(rules, players, seed=game)
        index = 0
        while not state.finished and len(state.results) < 12:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            action = choose_action(level, seat_view(state, seat), legal, seed=index, strict=True)
            assert action in legal
            state.apply_action(seat, action)
            index += 1
        assert state.results


def _positions(name: str, players: int, count: int, seed: int) -> list[tuple[GameState, int]]:
    """Positions of every phase reached by easy play, a few of each phase."""
    rules = preset(name)
    rng = random.Random(seed)
    out: list[tuple[GameState, int]] = []
    per_phase: dict[str, int] = {}
    state, _ = new_game(rules, players, seed=seed)
    index = 0
    while len(out) < count and not state.finished:
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        phase = state.deal.phase
        if len(legal) > 1 and per_phase.get(phase, 0) < 2 and rng.random() < 0.5:
            per_phase[phase] = per_phase.get(phase, 0) + 1
            out.append((state.clone(), seat))
        action = choose_action("easy", seat_view(state, seat), legal, seed=index, strict=True)
        state.apply_action(seat, action)
        index += 1
        if state.deal.phase == "bidding" and state.results and len(state.results) % 2 == 0:
            per_phase.clear()
    return out


@pytest.mark.parametrize(
    ("name", "players"), [("polish", 2), ("polish", 3), ("estonian", 3), ("estonian", 4), ("russian", 4)]
)
@pytest.mark.parametrize("level", ["medium", "hard"])
def test_search_levels_answer_legally_with_tiny_budgets(name: str, players: int, level: str) -> None:
    for state, seat in _positions(name, players, 10, seed=players):
        legal = state.legal_actions(seat)
        action = choose_action(level, seat_view(state, seat), legal, seed=1, budget_s=0.004, strict=True)
        assert action in legal


def test_decisions_are_deterministic_for_a_seed() -> None:
    for name, players in (("polish", 3), ("russian", 3), ("estonian", 3)):
        for state, seat in _positions(name, players, 8, seed=5):
            view = seat_view(state, seat)
            legal = state.legal_actions(seat)
            for level in LEVELS:
                first = choose_action(level, view, legal, seed=42, budget_s=0.01, strict=True)
                again = choose_action(level, view, legal, seed=42, budget_s=0.01, strict=True)
                assert first == again


def test_levels_and_budgets() -> None:
    assert LEVELS == ("random", "easy", "medium", "hard")
    budgets = [default_budget(level) for level in LEVELS]
    assert budgets == sorted(budgets) and budgets[-1] <= 1.5
    with pytest.raises(ValueError):
        default_budget("godlike")


def test_samples_respect_what_the_seat_knows() -> None:
    rules = preset("russian")
    rng = random.Random(2)
    checked = 0
    for seed in range(40):
        state, _ = new_game(rules, 3, seed=seed)
        while not state.finished and len(state.results) < 1:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            view = seat_view(state, seat)
            if view.phase == "play" and view.trick_history:
                k = knowledge(view)
                for _ in range(5):
                    masks = sample(k, rng)
                    assert masks is not None
                    seen = view.hand | view.played | mask_of(c for c in view.trick if c >= 0)
                    union = 0
                    for i, loc in enumerate(k.locs):
                        m = masks[i]
                        assert m & union == 0 and m & seen == 0
                        union |= m
                        if loc >= 0:
                            assert m.bit_count() == view.hand_counts[loc]
                            for suit in range(4):
                                if k.voids[i] >> suit & 1:
                                    # The real hand is void there too, and so is the sample.
                                    assert not state.deal.hands[loc] & SUIT_MASKS[suit]
                                    assert not m & SUIT_MASKS[suit]
                        assert loc != TALON
                    real = 0
                    for s in view.active:
                        if s != view.seat:
                            real |= state.deal.hands[s]
                    assert union == real
                    checked += 1
            action = choose_action("easy", view, legal, seed=seed, strict=True)
            state.apply_action(seat, action)
    assert checked > 50


def test_choose_action_takes_a_view_not_a_state() -> None:
    state, _ = new_game(preset("polish"), 3, seed=1)
    seat = state.to_act
    assert seat is not None
    legal = state.legal_actions(seat)
    with pytest.raises(TypeError):
        choose_action("easy", state, legal, seed=1)  # type: ignore[arg-type]


_unused: tuple[object, ...] = (Action, _rules)
