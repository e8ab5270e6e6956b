"""Inference from the cards played: the easy player's own plays look natural in the real deal."""

from __future__ import annotations

import math
import random

from core.ai import choose_action
from core.ai.infer import knowledge, sample
from core.ai.inference import PlayModel
from core.ai.play import world_sim
from core.game import new_game
from core.rules import preset
from core.view import seat_view


def test_real_deal_explains_easy_play_better_than_samples() -> None:
    rng = random.Random(1)
    real: list[float] = []
    sampled: list[float] = []
    for seed in range(12):
        state, _ = new_game(preset("russian"), 3, seed=seed)
        index = 0
        while not state.results:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            view = seat_view(state, seat)
            if view.phase == "play" and len(view.trick_history) >= 3:
                model = PlayModel(view, 0.3)
                if model.useful:
                    real.append(math.log(model.weight(list(state.deal.hands))))
                    k = knowledge(view)
                    for _ in range(3):
                        masks = sample(k, rng)
                        assert masks is not None
                        sampled.append(math.log(model.weight(world_sim(view, k, masks).hands)))
            state.apply_action(seat, choose_action("easy", view, legal, seed=index, strict=True))
            index += 1
    assert len(real) >= 20
    # The easy player plays exactly the model's policy: every one of its cards is expected.
    assert all(x == 0.0 for x in real)
    assert sum(sampled) / len(sampled) < -0.3
