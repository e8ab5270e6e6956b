"""Weighting sampled deals by the auction: strong hands explain bids, weak hands explain passes."""

from __future__ import annotations

import random

from core.ai.bids import BidModel
from core.ai.infer import knowledge, sample
from core.cards import mask_of, parse_card
from core.game import new_game
from core.rules import preset
from core.view import seat_view


def _hand(text: str) -> int:
    return mask_of(parse_card(t) for t in text.split())


def _model(calls: list[tuple[int, bool]]) -> BidModel:
    model = BidModel.__new__(BidModel)
    model.mvals = (60, 40, 100, 80)
    model.gain = 3
    model.calls = {1: calls}
    model.seats = [(0, 1)]
    model.played = {}
    model.remove = {}
    model.add = {}
    return model


STRONG = _hand("AH 10H KH QH AD 10D AS")
WEAK = _hand("9C JC 9S JS QD 9H JD")


def test_a_pass_favours_weak_hands_and_a_bid_strong_ones() -> None:
    passed = _model([(105, False)])
    assert passed.weight([WEAK]) > 3 * passed.weight([STRONG])
    bid = _model([(140, True)])
    assert bid.weight([STRONG]) > 3 * bid.weight([WEAK])
    # Never zero: a surprising hand stays possible.
    assert bid.weight([WEAK]) > 0


def test_model_from_a_real_auction_gives_positive_weights() -> None:
    rules = preset("russian")
    rng = random.Random(3)
    seen = 0
    for seed in range(30):
        state, _ = new_game(rules, 3, seed=seed)
        while not state.results:
            seat = state.to_act
            assert seat is not None
            view = seat_view(state, seat)
            if view.phase == "play":
                k = knowledge(view)
                model = BidModel(view, k)
                if model.useful:
                    masks = sample(k, rng)
                    assert masks is not None
                    assert model.weight(masks) > 0
                    seen += 1
                break
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
    assert seen >= 5
