"""Games stored as actions: every action survives the round trip, and the cache replays only what is new."""

from __future__ import annotations

import random

import pytest

from bot.snapshot import GameCache, GameSpec, SnapshotError, decode_action, encode_action
from core.game import GameState, new_game
from core.rules import PRESETS, preset


def random_game(name: str, players: int, seed: int, steps: int) -> tuple[GameSpec, list[str], GameState]:
    rules = preset(name, {"sell_talon": True} if name == "estonian" else None)
    spec = GameSpec(rules, players, seed, seed % players)
    state = new_game(rules, players, seed, first_dealer=spec.first_dealer)[0]
    rng = random.Random(seed)
    actions: list[str] = []
    for _ in range(steps):
        if state.finished:
            break
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        action = legal[rng.randrange(len(legal))]
        text = encode_action(seat, action)
        assert decode_action(text) == (seat, action)
        actions.append(text)
        state.apply_action(seat, action)
    return spec, actions, state


@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_round_trip_and_replay(name: str, players: int) -> None:
    if players not in PRESETS[name].player_counts:
        return
    spec, actions, state = random_game(name, players, 17 + players, 600)
    data = GameSpec.from_json(spec.to_json())
    assert data == spec
    rebuilt = GameCache().state("s", spec.to_json(), actions)
    assert (rebuilt.totals, rebuilt.results, rebuilt.deal.hands, rebuilt.to_act) == (
        state.totals,
        state.results,
        state.deal.hands,
        state.to_act,
    )


def test_the_cache_replays_only_new_actions_and_never_changes_what_it_gave() -> None:
    spec, actions, final = random_game("polish", 3, 5, 200)
    cache = GameCache()
    half = cache.state("g", spec.to_json(), actions[:100])
    hands_before = list(half.deal.hands)
    full = cache.state("g", spec.to_json(), actions)
    assert full.totals == final.totals and full.deal.hands == final.deal.hands
    assert half.deal.hands == hands_before, "the earlier state was not changed in place"
    assert cache.state("g", spec.to_json(), actions) is full
    # A shorter list than cached (another game with the same serial cannot happen; be safe anyway).
    again = cache.state("g", spec.to_json(), actions[:50])
    assert len(again.actions_this_deal()) <= 50


@pytest.mark.parametrize("text", ["", "x", "0", "9P1", "0Pxx", "0g0", "0?1", "0d1;2"])
def test_bad_action_strings(text: str) -> None:
    with pytest.raises(SnapshotError):
        decode_action(text)
